// Templates (docs/interface.md#templates): a workspace's named template with immutable numbered versions,
// at most one of them published. Its document settings (PDF options, title, metadata) and their
// rules live in document-settings.ts; the finishing settings (conformance, e-invoice, signature,
// stamp, outline, attachments) in src/render/finishing/document-settings.ts.
import { DEFAULT_PDF_OPTIONS, EMPTY_METADATA, type DocumentMetadata, type PdfOptions } from './document-settings.ts';
import { DEFAULT_LOCALE, DEFAULT_TIME_ZONE } from './locale-settings.ts';
import type { VariableSchema } from './variable-schema.ts';

import type { DocumentSettings } from '../render/finishing/document-settings.ts';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export type TemplateStatus = 'ACTIVE' | 'ARCHIVED';

export interface VariableDeclaration {
  name: string;
  required: boolean;
  /** Used when the variable is not supplied; undefined means no default. */
  default?: JsonValue;
  description: string;
  /** What values must look like (variable-schema.ts); absent: any JSON value. */
  schema?: VariableSchema;
}

/**
 * What a version holds; immutable once stored. Its document settings (conformance, eInvoice,
 * sign, stamp, outline, attachments: src/render/finishing/document-settings.ts) are absent on
 * versions that use none.
 */
export interface TemplateVersionContent extends DocumentSettings {
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
  /** Formatting filters' locale and time zone (locale-settings.ts); absent on older versions: the defaults. */
  locale?: string;
  timeZone?: string;
}

/**
 * A version's content with every document setting present: versions stored before a setting
 * existed read as its default.
 */
export function withDocumentDefaults(
  content: TemplateVersionContent,
): TemplateVersionContent & { title: string; metadata: DocumentMetadata; locale: string; timeZone: string } {
  return {
    ...content,
    title: typeof content.title === 'string' ? content.title : '',
    metadata: { ...EMPTY_METADATA, ...(content.metadata ?? {}) },
    locale: typeof content.locale === 'string' && content.locale !== '' ? content.locale : DEFAULT_LOCALE,
    timeZone: typeof content.timeZone === 'string' && content.timeZone !== '' ? content.timeZone : DEFAULT_TIME_ZONE,
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
  /** Who saved it; undefined for versions saved before authors were recorded. */
  author?: VersionAuthorView | undefined;
  /** '' when none was given. */
  note: string;
}

/** Who saved a version: a member (`usr_…`, their name and email as they are now) or the operator. */
export type VersionAuthorView = { kind: 'member'; userId: string; name: string; email: string } | { kind: 'operator' };
