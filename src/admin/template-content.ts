// Turns submitted template content into the stored, immutable TemplateVersionContent:
// defaults filled in, and every field checked so that a stored version is always well formed.
// Whether the Liquid itself is acceptable is decided at publish time (analyzeTemplate).
import { validationError, type FieldIssue } from '../domain/errors.ts';
import {
  DEFAULT_PDF_OPTIONS,
  type DocumentMetadata,
  type PdfProtection,
  PAGE_SIZES,
  type JsonObject,
  type JsonValue,
  type PageSize,
  type PdfOptions,
  type TemplateVersionContent,
  type VariableDeclaration,
} from '../domain/template.ts';
import { isPlainObject } from '../domain/json.ts';
import { normalizeLocaleSettings } from '../domain/locale-settings.ts';
import { schemaProblems, type VariableSchema } from '../domain/variable-schema.ts';

export const MAX_CONTENT_BYTES = 1024 * 1024;
export const MAX_VARIABLES = 500;
export const MAX_PARTIALS = 100;
const MAX_DESCRIPTION = 1000;
const MAX_HEADER_FOOTER_BYTES = 64 * 1024;
export const MAX_SAMPLE_DATA_BYTES = 1024 * 1024;
const MAX_SCHEMA_BYTES = 64 * 1024;

// Liquid identifiers; a hyphen is legal in Liquid names, so it is accepted too.
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
const PARTIAL_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;
// What Chromium's PDF printer accepts (and src/render/pdf-options.ts): a non-negative number
// with an optional px/in/cm/mm unit, no unit meaning px.
const CSS_LENGTH = /^(\d+(\.\d+)?|\.\d+)\s*(px|in|cm|mm)?$/i;

export interface VariableDeclarationInput {
  name: string;
  required?: boolean | undefined;
  /** undefined: no default (null is a default). */
  default?: JsonValue | undefined;
  description?: string | undefined;
  /** A JSON Schema subset (src/domain/variable-schema.ts); undefined: none. */
  schema?: JsonObject | undefined;
}

export interface PdfOptionsInput {
  pageSize?: string | undefined;
  landscape?: boolean | undefined;
  margins?:
    | { top?: string | undefined; right?: string | undefined; bottom?: string | undefined; left?: string | undefined }
    | undefined;
  printBackground?: boolean | undefined;
  headerTemplate?: string | undefined;
  footerTemplate?: string | undefined;
  /** 0 or absent: 1. */
  scale?: number | undefined;
  pageRanges?: string | undefined;
  preferCssPageSize?: boolean | undefined;
  firstPageHeaderTemplate?: string | undefined;
  firstPageFooterTemplate?: string | undefined;
  protection?: Partial<PdfProtection> | null | undefined;
}

export interface TemplateContentInput {
  body: string;
  css?: string | undefined;
  partials?: Record<string, string> | undefined;
  variables?: VariableDeclarationInput[] | undefined;
  /** Absent: DEFAULT_PDF_OPTIONS; absent fields inside take their defaults. */
  pdfOptions?: PdfOptionsInput | undefined;
  title?: string | undefined;
  metadata?: Partial<DocumentMetadata> | undefined;
  /** Sample variables saved with the version (a JSON object); previews use them when given none. */
  sampleData?: JsonObject | undefined;
  /** Formatting filters' locale and time zone; absent or '': en-US and UTC. */
  locale?: string | undefined;
  timeZone?: string | undefined;
}

export function normalizeContent(input: TemplateContentInput | undefined): TemplateVersionContent {
  const issues: FieldIssue[] = [];
  if (!input) throw validationError([{ field: 'content', issue: 'is required' }]);

  const body = typeof input.body === 'string' ? input.body : '';
  if (body.trim() === '')
    issues.push({ field: 'content.body', issue: 'is required (the Liquid HTML of the template)' });
  const css = typeof input.css === 'string' ? input.css : '';

  const partials: Record<string, string> = {};
  const partialEntries = Object.entries(input.partials ?? {});
  if (partialEntries.length > MAX_PARTIALS)
    issues.push({ field: 'content.partials', issue: `at most ${MAX_PARTIALS} partials` });
  for (const [name, text] of partialEntries) {
    if (!PARTIAL_NAME.test(name)) {
      issues.push({
        field: `content.partials`,
        issue: `partial name ${JSON.stringify(name)} must be 1-100 characters of A-Z, a-z, 0-9, '_', '.', '-'`,
      });
    } else if (typeof text !== 'string') {
      issues.push({ field: `content.partials.${name}`, issue: 'must be a string' });
    } else {
      partials[name] = text;
    }
  }

  const variables = normalizeVariables(input.variables ?? [], issues);
  const pdfOptions = normalizePdfOptions(input.pdfOptions, issues);
  const { title, metadata } = normalizeDocumentSettings(input, issues);
  const locale = normalizeLocaleSettings(input);
  for (const { field, issue } of locale.issues) issues.push({ field: `content.${field}`, issue });

  let bytes = Buffer.byteLength(body) + Buffer.byteLength(css);
  for (const text of Object.values(partials)) bytes += Buffer.byteLength(text);
  bytes += Buffer.byteLength(pdfOptions.headerTemplate) + Buffer.byteLength(pdfOptions.footerTemplate);
  bytes +=
    Buffer.byteLength(pdfOptions.firstPageHeaderTemplate) + Buffer.byteLength(pdfOptions.firstPageFooterTemplate);
  if (bytes > MAX_CONTENT_BYTES)
    issues.push({
      field: 'content',
      issue: `body, CSS, partials and header/footer together must be at most ${MAX_CONTENT_BYTES} bytes`,
    });

  const sampleData = normalizeSampleData(input.sampleData, issues);

  if (issues.length > 0) throw validationError(issues);
  const content: TemplateVersionContent = { body, css, partials, variables, pdfOptions, title, metadata };
  content.locale = locale.settings.locale;
  content.timeZone = locale.settings.timeZone;
  // Absent stays absent (the driver would store undefined as null).
  if (sampleData !== undefined) content.sampleData = sampleData;
  return content;
}

const MAX_TITLE = 1000;
const MAX_METADATA_FIELD = 1000;
// BCP 47 in its common shapes: "de", "pt-BR", "zh-Hant-TW".
const LANGUAGE_TAG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

function normalizeDocumentSettings(
  input: TemplateContentInput,
  issues: FieldIssue[],
): { title: string; metadata: DocumentMetadata } {
  const title = typeof input.title === 'string' ? input.title : '';
  if (title.length > MAX_TITLE)
    issues.push({ field: 'content.title', issue: `must be at most ${MAX_TITLE} characters` });
  const m = input.metadata ?? {};
  const metadata: DocumentMetadata = { author: '', subject: '', keywords: '', language: '' };
  for (const field of ['author', 'subject', 'keywords', 'language'] as const) {
    const value = m[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') {
      issues.push({ field: `content.metadata.${field}`, issue: 'must be a string' });
      continue;
    }
    const text = value.trim();
    if (text.length > MAX_METADATA_FIELD)
      issues.push({ field: `content.metadata.${field}`, issue: `must be at most ${MAX_METADATA_FIELD} characters` });
    metadata[field] = text;
  }
  if (metadata.language !== '' && !LANGUAGE_TAG.test(metadata.language)) {
    issues.push({
      field: 'content.metadata.language',
      issue: `${JSON.stringify(metadata.language)} is not a language tag; use e.g. "en", "de-CH" or "ja"`,
    });
  }
  return { title, metadata };
}

// What Chromium accepts: "1-5, 8, 11-13"; an open end ("3-") means to the last page.
const PAGE_RANGES = /^\s*\d+\s*(-\s*\d*\s*)?(,\s*\d+\s*(-\s*\d*\s*)?)*$/;

function normalizePrintExtras(
  input: PdfOptionsInput,
  issues: FieldIssue[],
): Pick<Required<PdfOptions>, 'scale' | 'pageRanges' | 'preferCssPageSize'> & Pick<PdfOptions, 'protection'> {
  let scale = 1;
  if (input.scale !== undefined && input.scale !== 0) {
    if (typeof input.scale === 'number' && Number.isFinite(input.scale) && input.scale >= 0.1 && input.scale <= 2)
      scale = input.scale;
    else
      issues.push({
        field: 'content.pdfOptions.scale',
        issue: `${JSON.stringify(input.scale)} is out of range; use 0.1 to 2 (1 is 100 %)`,
      });
  }
  const pageRanges = typeof input.pageRanges === 'string' ? input.pageRanges.trim() : '';
  if (pageRanges !== '' && (!PAGE_RANGES.test(pageRanges) || /(^|[^\d])0+(?!\d)/.test(pageRanges))) {
    issues.push({
      field: 'content.pdfOptions.pageRanges',
      issue: `${JSON.stringify(input.pageRanges)} is not a page range list; use e.g. "1-3, 5" (pages count from 1)`,
    });
  }
  let protection: PdfProtection | undefined;
  const p = input.protection;
  if (p) {
    protection = {
      userPassword: typeof p.userPassword === 'string' ? p.userPassword : '',
      ownerPassword: typeof p.ownerPassword === 'string' ? p.ownerPassword : '',
      allowPrinting: p.allowPrinting === true,
      allowCopying: p.allowCopying === true,
      allowModifying: p.allowModifying === true,
    };
    if (protection.ownerPassword.length < 6) {
      issues.push({
        field: 'content.pdfOptions.protection.ownerPassword',
        issue: 'is required when protecting a PDF (at least 6 characters; it lifts the restrictions)',
      });
    }
    for (const field of ['userPassword', 'ownerPassword'] as const) {
      // qpdf takes passwords as arguments: printable characters only, and a sane length.
      if (!/^[\x20-\x7e]{0,127}$/.test(protection[field])) {
        issues.push({
          field: `content.pdfOptions.protection.${field}`,
          issue: 'must be at most 127 printable ASCII characters',
        });
      }
    }
    if (protection.userPassword !== '' && protection.userPassword === protection.ownerPassword) {
      issues.push({
        field: 'content.pdfOptions.protection.userPassword',
        issue: 'must differ from ownerPassword (otherwise every reader can lift the restrictions)',
      });
    }
  }
  const extras = { scale, pageRanges, preferCssPageSize: input.preferCssPageSize === true };
  // No key when unprotected (the driver would store undefined as null).
  return protection ? { ...extras, protection } : extras;
}

function normalizeSampleData(value: unknown, issues: FieldIssue[]): JsonObject | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value)) {
    issues.push({ field: 'content.sampleData', issue: 'must be a JSON object of variable names to values' });
    return undefined;
  }
  const bytes = Buffer.byteLength(JSON.stringify(value));
  if (bytes > MAX_SAMPLE_DATA_BYTES)
    issues.push({
      field: 'content.sampleData',
      issue: `must be at most ${MAX_SAMPLE_DATA_BYTES} bytes as JSON (it is ${bytes})`,
    });
  return value as JsonObject;
}

function normalizeVariables(list: VariableDeclarationInput[], issues: FieldIssue[]): VariableDeclaration[] {
  if (!Array.isArray(list)) {
    issues.push({ field: 'content.variables', issue: 'must be a list' });
    return [];
  }
  if (list.length > MAX_VARIABLES)
    issues.push({ field: 'content.variables', issue: `at most ${MAX_VARIABLES} variables` });
  const seen = new Set<string>();
  const out: VariableDeclaration[] = [];
  list.forEach((v, i) => {
    const field = `content.variables[${i}]`;
    const name = typeof v?.name === 'string' ? v.name : '';
    if (!VARIABLE_NAME.test(name)) {
      issues.push({
        field: `${field}.name`,
        issue: `${JSON.stringify(name)} is not a valid variable name (a letter or '_', then letters, digits, '_' or '-'; at most 64)`,
      });
      return;
    }
    if (seen.has(name)) {
      issues.push({ field: `${field}.name`, issue: `variable \`${name}\` is declared twice` });
      return;
    }
    seen.add(name);
    const description = typeof v.description === 'string' ? v.description : '';
    if (description.length > MAX_DESCRIPTION)
      issues.push({ field: `${field}.description`, issue: `must be at most ${MAX_DESCRIPTION} characters` });
    // Build without undefined keys: the driver would store undefined as null, turning
    // "no default" into "default null".
    const declaration: VariableDeclaration = { name, required: v.required === true, description };
    if (v.default !== undefined) declaration.default = v.default;
    if (v.schema !== undefined && v.schema !== null) {
      const problems = schemaProblems(v.schema, 'schema');
      const bytes = Buffer.byteLength(JSON.stringify(v.schema));
      if (bytes > MAX_SCHEMA_BYTES) problems.push(`schema must be at most ${MAX_SCHEMA_BYTES} bytes as JSON`);
      for (const problem of problems) issues.push({ field: `${field}.schema`, issue: problem });
      if (problems.length === 0) declaration.schema = v.schema as VariableSchema;
    }
    out.push(declaration);
  });
  return out;
}

function normalizePdfOptions(
  input: PdfOptionsInput | undefined,
  issues: FieldIssue[],
): Required<Omit<PdfOptions, 'protection'>> & Pick<PdfOptions, 'protection'> {
  const d = DEFAULT_PDF_OPTIONS;
  if (!input) return { ...d, margins: { ...d.margins } };
  let pageSize: PageSize = d.pageSize;
  if (input.pageSize !== undefined && input.pageSize !== '') {
    const match = PAGE_SIZES.find((s) => s.toLowerCase() === String(input.pageSize).toLowerCase());
    if (match) pageSize = match;
    else
      issues.push({
        field: 'content.pdfOptions.pageSize',
        issue: `${JSON.stringify(input.pageSize)} is not a page size; use one of ${PAGE_SIZES.join(', ')}`,
      });
  }
  const margins = { ...d.margins };
  for (const side of ['top', 'right', 'bottom', 'left'] as const) {
    const value = input.margins?.[side];
    if (value === undefined || value === '') continue;
    const text = String(value).trim();
    if (CSS_LENGTH.test(text)) margins[side] = text;
    else
      issues.push({
        field: `content.pdfOptions.margins.${side}`,
        issue: `${JSON.stringify(value)} is not a length; use e.g. "10mm", "0.5in", "1cm" or "20px"`,
      });
  }
  const headerTemplate = input.headerTemplate ?? d.headerTemplate;
  const footerTemplate = input.footerTemplate ?? d.footerTemplate;
  const firstPageHeaderTemplate = input.firstPageHeaderTemplate ?? d.firstPageHeaderTemplate;
  const firstPageFooterTemplate = input.firstPageFooterTemplate ?? d.firstPageFooterTemplate;
  const templates = [
    ['headerTemplate', headerTemplate],
    ['footerTemplate', footerTemplate],
    ['firstPageHeaderTemplate', firstPageHeaderTemplate],
    ['firstPageFooterTemplate', firstPageFooterTemplate],
  ] as const;
  for (const [field, text] of templates) {
    if (Buffer.byteLength(text) > MAX_HEADER_FOOTER_BYTES)
      issues.push({ field: `content.pdfOptions.${field}`, issue: `must be at most ${MAX_HEADER_FOOTER_BYTES} bytes` });
  }
  return {
    pageSize,
    landscape: input.landscape ?? d.landscape,
    margins,
    printBackground: input.printBackground ?? d.printBackground,
    headerTemplate,
    footerTemplate,
    firstPageHeaderTemplate,
    firstPageFooterTemplate,
    ...normalizePrintExtras(input, issues),
  };
}
