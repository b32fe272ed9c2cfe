// A problem found in template content, at its place when known: what the publish checks,
// the content check and previews report, and what the portal shows at the line.

/**
 * Where: `body`, `css`, `title`, `partials/<name>`, `header_template`, `footer_template`,
 * `first_page_header_template`, `first_page_footer_template`, `variables`, `pdf_options`,
 * `sample_data`, `document_settings` (conformance, e-invoice, signature, stamp, outline, attachments).
 */
export type DiagnosticSource =
  | 'body'
  | 'css'
  | `partials/${string}`
  | 'header_template'
  | 'footer_template'
  | 'first_page_header_template'
  | 'first_page_footer_template'
  | 'title'
  | 'variables'
  | 'pdf_options'
  | 'sample_data'
  | 'document_settings';

export interface TemplateDiagnostic {
  source: DiagnosticSource;
  /** 1-based; 0 when unknown. */
  line: number;
  column: number;
  /** The problem in words, without its position (line and column carry it). */
  message: string;
  /** `error` blocks publishing (and renders); `warning` does not. */
  severity: 'error' | 'warning';
}
