// Templates (docs/interface.md#templates): a workspace's named template with immutable numbered versions,
// at most one of them published.

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export type TemplateStatus = 'ACTIVE' | 'ARCHIVED';

export interface VariableDeclaration {
  name: string;
  required: boolean;
  /** Used when the variable is not supplied; undefined means no default. */
  default?: JsonValue;
  description: string;
}

export const PAGE_SIZES = ['A3', 'A4', 'A5', 'Letter', 'Legal', 'Tabloid'] as const;
export type PageSize = (typeof PAGE_SIZES)[number];

export interface PdfOptions {
  pageSize: PageSize;
  landscape: boolean;
  /** CSS lengths ("10mm", "0.5in", "12px"); "0" when unset. */
  margins: { top: string; right: string; bottom: string; left: string };
  printBackground: boolean;
  /** Chromium header/footer templates; '' means none. */
  headerTemplate: string;
  footerTemplate: string;
}

export const DEFAULT_PDF_OPTIONS: PdfOptions = {
  pageSize: 'A4',
  landscape: false,
  margins: { top: '0', right: '0', bottom: '0', left: '0' },
  printBackground: true,
  headerTemplate: '',
  footerTemplate: '',
};

/** What a version holds; immutable once stored. */
export interface TemplateVersionContent {
  /** Liquid HTML body. */
  body: string;
  /** CSS placed in the document head. */
  css: string;
  /** Named partials for {% render %} / {% include %}; the only files a template can reach. */
  partials: Record<string, string>;
  variables: VariableDeclaration[];
  pdfOptions: PdfOptions;
  /** Sample variables saved with the version; previews use them when given none. */
  sampleData?: JsonObject;
}

export interface Template {
  id: string;
  workspaceId: string;
  name: string;
  status: TemplateStatus;
  /** 0 when no version is published. */
  publishedVersion: number;
  latestVersion: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface TemplateVersion {
  templateId: string;
  version: number;
  content: TemplateVersionContent;
  createdAt: Date;
}
