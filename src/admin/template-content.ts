// Turns submitted template content into the stored, immutable TemplateVersionContent:
// defaults filled in, and every field checked so that a stored version is always well formed.
// Whether the Liquid itself is acceptable is decided at publish time (analyzeTemplate).
import { validationError, type FieldIssue } from '../domain/errors.ts';
import {
  readDocumentProperties,
  readPdfOptions,
  type DocumentMetadata,
  type PdfOptionsInput,
  type SettingIssue,
} from '../domain/document-settings.ts';
import type { JsonObject, JsonValue, TemplateVersionContent, VariableDeclaration } from '../domain/template.ts';
import { isPlainObject } from '../domain/json.ts';
import { normalizeLocaleSettings } from '../domain/locale-settings.ts';
import { schemaProblems, type VariableSchema } from '../domain/variable-schema.ts';
import {
  documentSettingsConflictIssues,
  validateDocumentSettings,
  type DocumentSettings,
} from '../render/finishing/document-settings.ts';

export type { PdfOptionsInput } from '../domain/document-settings.ts';

export const MAX_CONTENT_BYTES = 1024 * 1024;
export const MAX_VARIABLES = 500;
export const MAX_PARTIALS = 100;
const MAX_DESCRIPTION = 1000;
export const MAX_SAMPLE_DATA_BYTES = 1024 * 1024;
const MAX_SCHEMA_BYTES = 64 * 1024;

// Liquid identifiers; a hyphen is legal in Liquid names, so it is accepted too.
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
const PARTIAL_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;

export interface VariableDeclarationInput {
  name: string;
  required?: boolean | undefined;
  /** undefined: no default (null is a default). */
  default?: JsonValue | undefined;
  description?: string | undefined;
  /** A JSON Schema subset (src/domain/variable-schema.ts); undefined: none. */
  schema?: JsonObject | undefined;
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
  // Document standards (src/render/finishing/document-settings.ts); absent, empty or false: off.
  conformance?: unknown;
  eInvoice?: unknown;
  sign?: unknown;
  stamp?: unknown;
  outline?: unknown;
  attachments?: unknown;
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
  // The document settings' rules: src/domain/document-settings.ts.
  const { options: pdfOptions, issues: pdfIssues } = readPdfOptions(input.pdfOptions);
  const { properties, issues: propertyIssues } = readDocumentProperties(input);
  const { title, metadata } = properties;
  issues.push(...inContent(pdfIssues), ...inContent(propertyIssues));
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
  const settings = readFinishingSettings(input, issues, {
    encrypted: Boolean(pdfOptions.protection),
    title,
    variables: variables.map((v) => v.name),
  });

  if (issues.length > 0) throw validationError(issues);
  const content: TemplateVersionContent = { body, css, partials, variables, pdfOptions, title, metadata };
  content.locale = locale.settings.locale;
  content.timeZone = locale.settings.timeZone;
  // Absent stays absent (the driver would store undefined as null).
  if (sampleData !== undefined) content.sampleData = sampleData;
  Object.assign(content, settings);
  return content;
}

/** The field a document-settings message names: its first word ("eInvoice.from …"). */
function settingField(message: string): string {
  const word = /^([A-Za-z]+(?:\.[A-Za-z]+)?)\b/.exec(message)?.[1];
  return word && ['conformance', 'eInvoice', 'sign', 'stamp', 'outline', 'attachments'].includes(word.split('.')[0]!)
    ? `content.${word}`
    : 'content';
}

/**
 * The document standards as stored: only those switched on (an empty list, false or an unset
 * message is off, and stays absent). Checked by their one home, and the combinations that
 * cannot hold (PDF/A with encryption, PDF/UA without a title, …) are refused here already, so
 * no stored version carries one.
 */
function readFinishingSettings(
  input: TemplateContentInput,
  issues: FieldIssue[],
  context: { encrypted: boolean; title: string; variables: string[] },
): DocumentSettings {
  const given: Record<string, unknown> = {};
  const list = (v: unknown) => (Array.isArray(v) && v.length === 0 ? undefined : v);
  const present = (v: unknown) => v !== undefined && v !== null && v !== false;
  const values: Record<string, unknown> = {
    conformance: list(input.conformance),
    eInvoice: input.eInvoice,
    sign: input.sign,
    stamp: input.stamp,
    outline: input.outline,
    attachments: list(input.attachments),
  };
  for (const [key, value] of Object.entries(values)) if (present(value)) given[key] = value;
  const problems = validateDocumentSettings(given);
  for (const problem of problems) issues.push({ field: settingField(problem), issue: problem });
  if (problems.length === 0)
    for (const c of documentSettingsConflictIssues(given as DocumentSettings, context))
      issues.push({ field: `content.${c.field}`, issue: c.message });
  return given as DocumentSettings;
}

/** Setting issues named as fields of the submitted content. */
function inContent(issues: SettingIssue[]): FieldIssue[] {
  return issues.map((i) => ({ field: `content.${i.field}`, issue: i.issue }));
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
