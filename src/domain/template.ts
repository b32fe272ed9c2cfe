// Templates (docs/interface.md#templates): a workspace's named template with immutable numbered versions,
// at most one of them published. Its document settings (PDF options, title, metadata) and their
// rules live in document-settings.ts.
import { DEFAULT_PDF_OPTIONS, EMPTY_METADATA, type DocumentMetadata, type PdfOptions } from './document-settings.ts';

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
  /** Liquid; '' means the template's name. Absent on versions stored before it existed. */
  title?: string;
  metadata?: DocumentMetadata;
}

/**
 * A version's content with every document setting present: versions stored before a setting
 * existed read as its default.
 */
export function withDocumentDefaults(
  content: TemplateVersionContent,
): TemplateVersionContent & { title: string; metadata: DocumentMetadata } {
  return {
    ...content,
    title: typeof content.title === 'string' ? content.title : '',
    metadata: { ...EMPTY_METADATA, ...(content.metadata ?? {}) },
    pdfOptions:
      content.pdfOptions && typeof content.pdfOptions === 'object'
        ? { ...DEFAULT_PDF_OPTIONS, ...content.pdfOptions }
        : content.pdfOptions,
  };
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
