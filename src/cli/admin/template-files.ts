// Template content from files, for `docgen admin template create` and `template version add`.
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { create, fromJson, type JsonObject, type JsonValue } from '@bufbuild/protobuf';
import { ValueSchema } from '@bufbuild/protobuf/wkt';
import { isPlainObject } from '../../domain/json.ts';
import {
  DEFAULT_PDF_OPTIONS,
  MARGIN_SIDES,
  METADATA_FIELDS,
  PDF_OPTION_SETTINGS,
  PROTECTION_FIELDS,
} from '../../domain/document-settings.ts';
import {
  DocumentMetadataSchema,
  PdfOptionsSchema,
  PdfProtectionSchema,
  TemplateVersionContentSchema,
  VariableDeclarationSchema,
  type TemplateVersionContent,
  type VariableDeclaration,
} from '../../gen/docgen/admin/v1/template_pb.js';
import { str, UsageError, type OptionSpec, type Values } from './command.ts';
import { normalizeLocaleSettings } from '../../domain/locale-settings.ts';
import { applyDocumentSettingFlags, DOCUMENT_SETTING_OPTIONS } from './document-setting-flags.ts';

export const CONTENT_OPTIONS: Record<string, OptionSpec> = {
  file: { type: 'string' },
  variables: { type: 'string' },
  css: { type: 'string' },
  partials: { type: 'string' },
  'pdf-options': { type: 'string' },
  title: { type: 'string' },
  metadata: { type: 'string' },
  'sample-data': { type: 'string' },
  locale: { type: 'string' },
  'time-zone': { type: 'string' },
  ...DOCUMENT_SETTING_OPTIONS,
  publish: { type: 'boolean' },
};

/**
 * Reads the content flags. VARS.json is either a list
 *   [{"name": "customer", "required": true, "default": …, "description": "…"}]
 * or an object keyed by name
 *   {"customer": {"required": true, "default": …, "description": "…"}}.
 * --partials DIR: every file in DIR is a partial named after the file without its extension;
 * --partials FILE.json: an object of partial name to Liquid source.
 * --pdf-options: a JSON object (or @FILE holding one); omitted fields take their defaults.
 * --title: the PDF title (Liquid); --metadata: {"author", "subject", "keywords", "language"} (or @FILE).
 * --sample-data FILE.json: sample variables saved with the version (previews use them).
 * --locale / --time-zone: the formatting filters' locale ("de-DE") and time zone ("Europe/Berlin").
 * --conformance, --e-invoice, --sign, --stamp, --outline, --attach: the document standards
 *   (document-setting-flags.ts).
 */
export async function readContent(values: Values): Promise<TemplateVersionContent> {
  const body = await readText('--file', str(values.file));
  const css = values.css === undefined ? '' : await readText('--css', str(values.css));
  const variables =
    values.variables === undefined ? [] : parseVariables(await readJson('--variables', str(values.variables)));
  const partials = values.partials === undefined ? {} : await readPartials(str(values.partials));
  const content = create(TemplateVersionContentSchema, { body, css, partials, variables });
  if (values['pdf-options'] !== undefined) content.pdfOptions = await readPdfOptions(str(values['pdf-options']));
  if (values.title !== undefined) content.title = str(values.title);
  if (values.metadata !== undefined) content.metadata = await readMetadata(str(values.metadata));
  if (values['sample-data'] !== undefined)
    content.sampleData = (await readJsonObject('--sample-data', str(values['sample-data']))) as JsonObject;
  applyLocaleFlags(content, values);
  await applyDocumentSettingFlags(content, values);
  return content;
}

/** --locale and --time-zone, checked here by the rule the server applies (locale-settings.ts). */
function applyLocaleFlags(content: TemplateVersionContent, values: Values): void {
  const { settings, issues } = normalizeLocaleSettings({ locale: values.locale, timeZone: values['time-zone'] });
  const issue = issues[0];
  if (issue) throw new UsageError(`--${issue.field === 'locale' ? 'locale' : 'time-zone'}: ${issue.issue}`);
  if (values.locale !== undefined) content.locale = settings.locale;
  if (values['time-zone'] !== undefined) content.timeZone = settings.timeZone;
}

async function readText(flag: string, file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(
      `${flag} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
}

async function readJson(flag: string, file: string): Promise<unknown> {
  const text = await readText(flag, file);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${flag} ${file}: not valid JSON (${(err as Error).message})`);
  }
}

export async function readJsonObject(flag: string, file: string): Promise<Record<string, unknown>> {
  const value = await readJson(flag, file);
  if (!isPlainObject(value)) throw new UsageError(`${flag} ${file}: must hold a JSON object`);
  return value;
}

const VARIABLE_KEYS = ['name', 'required', 'default', 'description', 'schema'];

export function parseVariables(value: unknown): VariableDeclaration[] {
  let entries: Array<[string | undefined, unknown]>;
  if (Array.isArray(value)) entries = value.map((v) => [undefined, v]);
  else if (isPlainObject(value)) entries = Object.entries(value);
  else throw new UsageError('--variables: expected a JSON list of declarations or an object keyed by variable name');
  return entries.map(([key, raw], i) => {
    const where = key === undefined ? `--variables: entry ${i}` : `--variables: ${JSON.stringify(key)}`;
    if (!isPlainObject(raw)) throw new UsageError(`${where} must be an object`);
    const unknown = Object.keys(raw).filter((k) => !VARIABLE_KEYS.includes(k) || (key !== undefined && k === 'name'));
    if (unknown.length > 0)
      throw new UsageError(
        `${where}: unknown field ${JSON.stringify(unknown[0])} (use ${VARIABLE_KEYS.filter((k) => key === undefined || k !== 'name').join(', ')})`,
      );
    const name = key ?? raw.name;
    if (typeof name !== 'string' || name === '') throw new UsageError(`${where}: "name" must be a non-empty string`);
    if (raw.required !== undefined && typeof raw.required !== 'boolean')
      throw new UsageError(`${where}: "required" must be true or false`);
    if (raw.description !== undefined && typeof raw.description !== 'string')
      throw new UsageError(`${where}: "description" must be a string`);
    if (raw.schema !== undefined && !isPlainObject(raw.schema))
      throw new UsageError(`${where}: "schema" must be a JSON Schema object such as {"type": "number"}`);
    return create(VariableDeclarationSchema, {
      name,
      required: raw.required === true,
      description: (raw.description as string | undefined) ?? '',
      defaultValue: Object.hasOwn(raw, 'default') ? fromJson(ValueSchema, raw.default as JsonValue) : undefined,
      schema: raw.schema as JsonObject | undefined,
    });
  });
}

/** --partials DIR (a file per partial, named after the file) or FILE.json ({"name": "source"}). */
async function readPartials(path: string): Promise<Record<string, string>> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(path)).isDirectory();
  } catch (err) {
    throw new UsageError(
      `--partials ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
  if (!isDirectory) {
    const value = await readJsonObject('--partials', path);
    for (const [name, text] of Object.entries(value)) {
      if (typeof text !== 'string')
        throw new UsageError(`--partials ${path}: partial ${JSON.stringify(name)} must be a string of Liquid`);
    }
    return value as Record<string, string>;
  }
  const partials: Record<string, string> = {};
  for (const file of (await readdir(path)).sort()) {
    const full = join(path, file);
    if (file.startsWith('.') || !(await stat(full)).isFile()) continue;
    const name = basename(file, extname(file));
    if (Object.hasOwn(partials, name))
      throw new UsageError(`--partials ${path}: two files give the partial name ${JSON.stringify(name)}`);
    partials[name] = await readText('--partials', full);
  }
  return partials;
}

// The document settings' names and defaults: src/domain/document-settings.ts (their values
// are checked by the server, with the same rules).
const PDF_KEYS = Object.keys(PDF_OPTION_SETTINGS);
// The *PasswordSet flags keep the previous version's passwords (they are write-only).
const PROTECTION_KEYS: readonly string[] = [...PROTECTION_FIELDS, 'userPasswordSet', 'ownerPasswordSet'];
const METADATA_KEYS: readonly string[] = METADATA_FIELDS;

export async function readJsonObjectFlag(flag: string, value: string): Promise<Record<string, unknown>> {
  let parsed: unknown;
  if (value.startsWith('@')) parsed = await readJson(flag, value.slice(1));
  else {
    try {
      parsed = JSON.parse(value);
    } catch (err) {
      throw new UsageError(`${flag}: not valid JSON (${(err as Error).message}); pass a JSON object or @FILE`);
    }
  }
  if (!isPlainObject(parsed)) throw new UsageError(`${flag}: must be a JSON object`);
  return parsed;
}

async function readMetadata(value: string) {
  const o = await readJsonObjectFlag('--metadata', value);
  const unknown = Object.keys(o).filter((k) => !METADATA_KEYS.includes(k));
  if (unknown.length > 0)
    throw new UsageError(`--metadata: unknown field ${JSON.stringify(unknown[0])} (use ${METADATA_KEYS.join(', ')})`);
  for (const key of METADATA_KEYS)
    if (o[key] !== undefined && typeof o[key] !== 'string')
      throw new UsageError(`--metadata: "${key}" must be a string`);
  return create(DocumentMetadataSchema, o as Record<string, string>);
}

function readProtection(value: unknown) {
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value))
    throw new UsageError(`--pdf-options: "protection" must be an object {${PROTECTION_KEYS.join(', ')}}`);
  const unknown = Object.keys(value).filter((k) => !PROTECTION_KEYS.includes(k));
  if (unknown.length > 0)
    throw new UsageError(
      `--pdf-options: unknown protection field ${JSON.stringify(unknown[0])} (use ${PROTECTION_KEYS.join(', ')})`,
    );
  return create(PdfProtectionSchema, value as Record<string, never>);
}

async function readPdfOptions(value: string) {
  const parsed = await readJsonObjectFlag('--pdf-options', value);
  const unknown = Object.keys(parsed).filter((k) => !PDF_KEYS.includes(k));
  if (unknown.length > 0)
    throw new UsageError(`--pdf-options: unknown field ${JSON.stringify(unknown[0])} (use ${PDF_KEYS.join(', ')})`);
  const d = DEFAULT_PDF_OPTIONS;
  const o = parsed;
  const typed = (key: string, type: 'string' | 'boolean' | 'number') => {
    if (o[key] !== undefined && typeof o[key] !== type)
      throw new UsageError(`--pdf-options: "${key}" must be a ${type}`);
    return o[key] as never;
  };
  let margins = { ...d.margins };
  if (typeof o.margins === 'string') margins = { top: o.margins, right: o.margins, bottom: o.margins, left: o.margins };
  else if (isPlainObject(o.margins)) {
    for (const [side, v] of Object.entries(o.margins)) {
      if (!(MARGIN_SIDES as readonly string[]).includes(side))
        throw new UsageError(`--pdf-options: unknown margin ${JSON.stringify(side)}`);
      if (typeof v !== 'string' && typeof v !== 'number')
        throw new UsageError(`--pdf-options: margin ${side} must be a CSS length such as "10mm"`);
      margins[side as keyof typeof margins] = String(v);
    }
  } else if (o.margins !== undefined)
    throw new UsageError('--pdf-options: "margins" must be a length or an object {top, right, bottom, left}');
  // Sent in full: a proto3 message cannot say "unset", so the defaults are filled in here.
  return create(PdfOptionsSchema, {
    pageSize: typed('pageSize', 'string') ?? d.pageSize,
    landscape: typed('landscape', 'boolean') ?? d.landscape,
    margins,
    printBackground: typed('printBackground', 'boolean') ?? d.printBackground,
    headerTemplate: typed('headerTemplate', 'string') ?? d.headerTemplate,
    footerTemplate: typed('footerTemplate', 'string') ?? d.footerTemplate,
    firstPageHeaderTemplate: typed('firstPageHeaderTemplate', 'string') ?? d.firstPageHeaderTemplate,
    firstPageFooterTemplate: typed('firstPageFooterTemplate', 'string') ?? d.firstPageFooterTemplate,
    scale: typed('scale', 'number') ?? d.scale,
    pageRanges: typed('pageRanges', 'string') ?? d.pageRanges,
    preferCssPageSize: typed('preferCssPageSize', 'boolean') ?? d.preferCssPageSize,
    protection: readProtection(o.protection),
  });
}
