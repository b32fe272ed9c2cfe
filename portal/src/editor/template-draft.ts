// The editor's working copy of a version's content, in form-friendly shapes (JSON as text,
// partials as a list), and its conversion to and from TemplateVersionContent.
import { fromJson, toJson, type JsonObject, type JsonValue, type MessageInitShape } from '@bufbuild/protobuf';
import { ValueSchema } from '@bufbuild/protobuf/wkt';
import type {
  PdfOptionsSchema,
  TemplateVersionContent,
  TemplateVersionContentSchema,
} from '@gen/docgen/admin/v1/template_pb.js';
import {
  checkPdfOptions,
  DEFAULT_PDF_OPTIONS,
  formatSettingIssue,
  NEW_PROTECTION,
  NEW_TEMPLATE_PDF_OPTIONS,
  readDocumentProperties,
  type SettingIssue,
} from '@domain/document-settings';
import {
  standardsContent,
  standardsDraftFromContent,
  standardsProblems,
  type StandardsDraft,
} from './document-standards-draft.ts';

/** Where settingIssues files the document standards' problems (their messages name the setting). */
export const STANDARDS_FIELD = 'documentStandards';

/** How a default's text is read: as typed (text), or as the number, true/false or JSON it was. */
export type DefaultKind = 'text' | 'number' | 'boolean' | 'json';

export interface VariableDraft {
  name: string;
  required: boolean;
  /** The default as the author types it (plain text; JSON only for lists and objects); empty: none. */
  defaultText: string;
  /** What the stored default was, so that 3 stays a number and true a boolean when left as they are. */
  defaultKind?: DefaultKind;
  description: string;
  /** The declaration's JSON Schema (typed variables), kept as it came; absent: none. */
  schema?: JsonObject;
}

export interface PdfDraft {
  pageSize: string;
  landscape: boolean;
  marginTop: string;
  marginRight: string;
  marginBottom: string;
  marginLeft: string;
  printBackground: boolean;
  headerTemplate: string;
  footerTemplate: string;
  firstPageHeaderTemplate: string;
  firstPageFooterTemplate: string;
  /** Text of a number, 0.1 to 2; empty means 1. */
  scale: string;
  pageRanges: string;
  preferCssPageSize: boolean;
  protect: boolean;
  /** Typed passwords only: the server never sends them back (write-only). */
  userPassword: string;
  ownerPassword: string;
  /** The earlier version's password is kept while its field stays empty. */
  userPasswordSet: boolean;
  ownerPasswordSet: boolean;
  /** The loaded version had an open password (offers "Remove password"). */
  hadUserPassword: boolean;
  allowPrinting: boolean;
  allowCopying: boolean;
  allowModifying: boolean;
}

export interface DocumentDraft {
  /** Liquid; empty means the template's name. */
  title: string;
  author: string;
  subject: string;
  keywords: string;
  language: string;
  /** Formatting filters' locale and time zone; empty: en-US, UTC. */
  locale: string;
  timeZone: string;
}

export interface Draft {
  body: string;
  css: string;
  partials: Array<{ name: string; source: string }>;
  variables: VariableDraft[];
  pdf: PdfDraft;
  document: DocumentDraft;
  sampleDataText: string;
  /** Conformance, e-invoice, signature, stamp, outline, attachments (document-standards-draft.ts). */
  standards: StandardsDraft;
}

/** A new template's blank page: a heading to replace, no variables, no sample data. */
export function blankDraft(): Draft {
  // A new template's paper: explicit margins with room for a header and footer (the shared
  // module's suggestion; a stored version without margins prints with none).
  const o = NEW_TEMPLATE_PDF_OPTIONS;
  return {
    body: '<h1>Untitled</h1>\n',
    css: 'body { font-family: sans-serif; margin: 0; }\n',
    partials: [],
    variables: [],
    pdf: {
      pageSize: o.pageSize,
      landscape: o.landscape,
      marginTop: o.margins.top,
      marginRight: o.margins.right,
      marginBottom: o.margins.bottom,
      marginLeft: o.margins.left,
      printBackground: o.printBackground,
      headerTemplate: o.headerTemplate,
      footerTemplate: o.footerTemplate,
      firstPageHeaderTemplate: o.firstPageHeaderTemplate,
      firstPageFooterTemplate: o.firstPageFooterTemplate,
      scale: '',
      pageRanges: o.pageRanges,
      preferCssPageSize: o.preferCssPageSize,
      protect: false,
      ...protectionDraft(undefined),
    },
    document: { title: '', author: '', subject: '', keywords: '', language: '', locale: '', timeZone: '' },
    sampleDataText: '{}',
    standards: standardsDraftFromContent(undefined),
  };
}

/** The protection fields of a draft: the stored ones, or what ticking "encrypt" starts with. */
function protectionDraft(
  p: (Partial<typeof NEW_PROTECTION> & { userPasswordSet?: boolean; ownerPasswordSet?: boolean }) | undefined,
) {
  const n = NEW_PROTECTION;
  return {
    userPassword: p?.userPassword ?? n.userPassword,
    ownerPassword: p?.ownerPassword ?? n.ownerPassword,
    userPasswordSet: p?.userPasswordSet ?? false,
    ownerPasswordSet: p?.ownerPasswordSet ?? false,
    hadUserPassword: p?.userPasswordSet ?? false,
    allowPrinting: p?.allowPrinting ?? n.allowPrinting,
    allowCopying: p?.allowCopying ?? n.allowCopying,
    allowModifying: p?.allowModifying ?? n.allowModifying,
  };
}

export function draftFromContent(content: TemplateVersionContent | undefined): Draft {
  const d = DEFAULT_PDF_OPTIONS;
  const m = content?.pdfOptions?.margins;
  return {
    body: content?.body ?? '',
    css: content?.css ?? '',
    partials: Object.entries(content?.partials ?? {}).map(([name, source]) => ({ name, source })),
    variables: (content?.variables ?? []).map((v) => ({
      name: v.name,
      required: v.required,
      ...defaultDraft(v.defaultValue ? toJson(ValueSchema, v.defaultValue) : undefined),
      description: v.description,
      ...(v.schema ? { schema: v.schema } : {}),
    })),
    pdf: {
      pageSize: content?.pdfOptions?.pageSize || d.pageSize,
      landscape: content?.pdfOptions?.landscape ?? d.landscape,
      marginTop: m?.top ?? '',
      marginRight: m?.right ?? '',
      marginBottom: m?.bottom ?? '',
      marginLeft: m?.left ?? '',
      printBackground: content?.pdfOptions?.printBackground ?? d.printBackground,
      headerTemplate: content?.pdfOptions?.headerTemplate ?? d.headerTemplate,
      footerTemplate: content?.pdfOptions?.footerTemplate ?? d.footerTemplate,
      firstPageHeaderTemplate: content?.pdfOptions?.firstPageHeaderTemplate ?? d.firstPageHeaderTemplate,
      firstPageFooterTemplate: content?.pdfOptions?.firstPageFooterTemplate ?? d.firstPageFooterTemplate,
      scale: content?.pdfOptions?.scale ? String(content.pdfOptions.scale) : '',
      pageRanges: content?.pdfOptions?.pageRanges ?? d.pageRanges,
      preferCssPageSize: content?.pdfOptions?.preferCssPageSize ?? d.preferCssPageSize,
      protect: !!content?.pdfOptions?.protection,
      ...protectionDraft(content?.pdfOptions?.protection),
    },
    document: {
      title: content?.title ?? '',
      author: content?.metadata?.author ?? '',
      subject: content?.metadata?.subject ?? '',
      keywords: content?.metadata?.keywords ?? '',
      language: content?.metadata?.language ?? '',
      locale: content?.locale ?? '',
      timeZone: content?.timeZone ?? '',
    },
    sampleDataText: JSON.stringify(content?.sampleData ?? {}, null, 2),
    standards: standardsDraftFromContent(content),
  };
}

/** A stored default as the author sees it: text as it is, numbers and booleans as written, JSON for the rest. */
export function defaultDraft(value: JsonValue | undefined): { defaultText: string; defaultKind?: DefaultKind } {
  if (value === undefined) return { defaultText: '' };
  if (typeof value === 'string') return { defaultText: value, defaultKind: 'text' };
  if (typeof value === 'number') return { defaultText: String(value), defaultKind: 'number' };
  if (typeof value === 'boolean') return { defaultText: String(value), defaultKind: 'boolean' };
  return { defaultText: JSON.stringify(value), defaultKind: 'json' };
}

/**
 * The value of a default as typed: JSON when it starts like a list or an object (or was JSON);
 * a number or true/false when the variable's schema says so or the stored default was one and
 * the text still reads as one; otherwise the text itself.
 */
export function defaultValueOf(v: VariableDraft): { value?: JsonValue; problem?: string } {
  const text = v.defaultText;
  if (text.trim() === '') return {};
  const schemaType = (v.schema as { type?: unknown } | undefined)?.type;
  const trimmed = text.trim();
  if (/^[[{]/.test(trimmed) || (v.defaultKind === 'json' && !/^"/.test(trimmed))) {
    try {
      return { value: JSON.parse(trimmed) as JsonValue };
    } catch {
      return { problem: `The default of variable “${v.name}” starts like a list or object but is not valid JSON.` };
    }
  }
  const wantsNumber = schemaType === 'number' || schemaType === 'integer' || v.defaultKind === 'number';
  if (wantsNumber && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(trimmed)) return { value: Number(trimmed) };
  const wantsBoolean = schemaType === 'boolean' || v.defaultKind === 'boolean';
  if (wantsBoolean && (trimmed === 'true' || trimmed === 'false')) return { value: trimmed === 'true' };
  return { value: text };
}

/** A problem in a JSON text, with its 1-based line when the parser says where. */
export interface JsonProblem {
  line: number;
  column: number;
  message: string;
}

export function parseJsonObject(text: string, what: string): { value?: JsonObject; problem?: JsonProblem } {
  if (text.trim() === '') return { value: {} };
  try {
    const value = JSON.parse(text) as JsonValue;
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      return { problem: { line: 1, column: 1, message: `${what} must be a JSON object ({ … })` } };
    return { value };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const position = /position (\d+)/.exec(message);
    let line = 1;
    let column = 1;
    if (position) {
      const before = text.slice(0, Number(position[1]));
      line = before.split('\n').length;
      column = before.length - before.lastIndexOf('\n');
    }
    const lineMatch = /line (\d+) column (\d+)/.exec(message);
    if (lineMatch) {
      line = Number(lineMatch[1]);
      column = Number(lineMatch[2]);
    }
    return { problem: { line, column, message: `${what} is not valid JSON: ${message}` } };
  }
}

export type ContentInit = MessageInitShape<typeof TemplateVersionContentSchema>;
export type PdfOptionsInit = MessageInitShape<typeof PdfOptionsSchema>;

/** The scale as typed: 0 (not set) when empty, the number, or the text when it is none. */
function scaleOf(text: string): number | string {
  const trimmed = text.trim();
  if (trimmed === '') return 0;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : trimmed;
}

/** The PDF options message for a draft's form fields. */
export function pdfOptionsFromDraft(pdf: PdfDraft): PdfOptionsInit {
  const scale = scaleOf(pdf.scale);
  return {
    pageSize: pdf.pageSize,
    landscape: pdf.landscape,
    margins: { top: pdf.marginTop, right: pdf.marginRight, bottom: pdf.marginBottom, left: pdf.marginLeft },
    printBackground: pdf.printBackground,
    headerTemplate: pdf.headerTemplate,
    footerTemplate: pdf.footerTemplate,
    firstPageHeaderTemplate: pdf.firstPageHeaderTemplate,
    firstPageFooterTemplate: pdf.firstPageFooterTemplate,
    scale: typeof scale === 'number' ? scale : Number.NaN,
    pageRanges: pdf.pageRanges.trim(),
    preferCssPageSize: pdf.preferCssPageSize,
    ...(pdf.protect
      ? {
          protection: {
            userPassword: pdf.userPassword,
            ownerPassword: pdf.ownerPassword,
            // Empty with the flag: the server keeps the earlier version's password.
            userPasswordSet: pdf.userPasswordSet,
            ownerPasswordSet: pdf.ownerPasswordSet,
            allowPrinting: pdf.allowPrinting,
            allowCopying: pdf.allowCopying,
            allowModifying: pdf.allowModifying,
          },
        }
      : {}),
  };
}

/**
 * What the server would refuse in a draft's PDF options and document properties, in its words:
 * the same rules (src/domain/document-settings.ts), the publish checks included. Fields are
 * named as in the content (`pdfOptions.margins.top`, `metadata.language`).
 */
export function settingIssues(draft: Draft): SettingIssue[] {
  const pdfOptions = { ...pdfOptionsFromDraft(withKeptStandIns(draft.pdf)), scale: scaleOf(draft.pdf.scale) };
  const standards = standardsProblems(draft.standards ?? standardsDraftFromContent(undefined), {
    encrypted: draft.pdf.protect,
    title: draft.document.title,
    variables: draft.variables.map((v) => v.name.trim()).filter(Boolean),
  });
  return [
    ...readDocumentProperties({ title: draft.document.title, metadata: documentMetadata(draft.document) }).issues,
    ...checkPdfOptions(pdfOptions),
    ...standards.map((issue) => ({ field: STANDARDS_FIELD, issue })),
  ];
}

/**
 * Kept passwords (empty, flag set) checked as the server will see them: present. The stand-ins
 * only feed the local checks; they are never sent.
 */
function withKeptStandIns(pdf: PdfDraft): PdfDraft {
  return {
    ...pdf,
    userPassword: pdf.userPassword || (pdf.userPasswordSet ? 'kept open password' : ''),
    ownerPassword: pdf.ownerPassword || (pdf.ownerPasswordSet ? 'kept owner password' : ''),
  };
}

/** The issues of one section's settings (fields under `prefix`), as sentences to show. */
export function issuesUnder(issues: SettingIssue[], ...prefixes: string[]): string[] {
  return issues
    .filter((i) => prefixes.some((p) => i.field === p || i.field.startsWith(`${p}.`)))
    .map(formatSettingIssue);
}

function documentMetadata(document: DocumentDraft) {
  return {
    author: document.author,
    subject: document.subject,
    keywords: document.keywords,
    language: document.language,
  };
}

/**
 * The content to send, or the problems that keep it from being sent. `checkSettings: false`
 * leaves the document settings to the server (a stored version shown as it is).
 */
export function contentFromDraft(
  draft: Draft,
  { checkSettings = true }: { checkSettings?: boolean } = {},
): {
  content?: ContentInit;
  sampleProblem?: JsonProblem;
  variableProblems: string[];
  settingIssues: SettingIssue[];
} {
  const sample = parseJsonObject(draft.sampleDataText, 'Sample data');
  const variableProblems: string[] = [];
  const variables = draft.variables
    .filter((v) => v.name.trim() !== '')
    .map((v) => {
      const typed = defaultValueOf(v);
      if (typed.problem) variableProblems.push(typed.problem);
      const defaultValue = typed.value === undefined ? undefined : fromJson(ValueSchema, typed.value);
      return {
        name: v.name.trim(),
        required: v.required,
        description: v.description,
        ...(defaultValue ? { defaultValue } : {}),
        ...(v.schema ? { schema: v.schema } : {}),
      };
    });
  const settings = checkSettings ? settingIssues(draft) : [];
  if (sample.problem) return { sampleProblem: sample.problem, variableProblems, settingIssues: settings };
  if (variableProblems.length > 0 || settings.length > 0) return { variableProblems, settingIssues: settings };
  const partials: Record<string, string> = {};
  for (const p of draft.partials) if (p.name.trim() !== '') partials[p.name.trim()] = p.source;
  return {
    variableProblems,
    settingIssues: settings,
    content: {
      body: draft.body,
      css: draft.css,
      partials,
      variables,
      pdfOptions: pdfOptionsFromDraft(draft.pdf),
      title: draft.document.title,
      metadata: documentMetadata(draft.document),
      locale: draft.document.locale.trim(),
      timeZone: draft.document.timeZone.trim(),
      sampleData: sample.value ?? {},
      ...standardsContent(draft.standards ?? standardsDraftFromContent(undefined)),
    },
  };
}

export function sameDraft(a: Draft, b: Draft): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Whether the template prints `name` (`{{ name… }}`) without a `default` filter anywhere: such
 * a suggested variable is declared required; one only tested (`{% if %}`), looped over or given
 * a default is optional.
 */
export function usedWithoutDefault(name: string, draft: Draft): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const output = new RegExp(`\\{\\{-?\\s*${escaped}(?![\\w-])([^}]*)\\}\\}`, 'g');
  const sources = [
    draft.body,
    ...draft.partials.map((p) => p.source),
    draft.pdf.headerTemplate,
    draft.pdf.footerTemplate,
    draft.pdf.firstPageHeaderTemplate,
    draft.pdf.firstPageFooterTemplate,
  ];
  return sources.some((source) => [...source.matchAll(output)].some((m) => !/\|\s*default\b/.test(m[1] ?? '')));
}

/**
 * Declares the suggested variables (required when printed without a default) and gives each
 * required one a placeholder in the sample data, so that the preview goes on rendering.
 */
export function declareSuggested(draft: Draft, names: readonly string[]): Draft {
  const declared = names.map((name) => ({
    name,
    required: usedWithoutDefault(name, draft),
    defaultText: '',
    description: '',
  }));
  let sampleDataText = draft.sampleDataText;
  const sample = parseJsonObject(draft.sampleDataText, 'Sample data').value;
  const placeholders = declared.filter((v) => v.required && sample && !Object.hasOwn(sample, v.name));
  if (sample && placeholders.length > 0) {
    const filled: JsonObject = { ...sample };
    for (const v of placeholders) filled[v.name] = v.name;
    sampleDataText = JSON.stringify(filled, null, 2);
  }
  return { ...draft, variables: [...draft.variables, ...declared], sampleDataText };
}
