// The editor's working copy of a version's content, in form-friendly shapes (JSON as text,
// partials as a list), and its conversion to and from TemplateVersionContent.
import { fromJson, toJson, type JsonObject, type JsonValue, type MessageInitShape } from '@bufbuild/protobuf';
import { ValueSchema } from '@bufbuild/protobuf/wkt';
import type { TemplateVersionContent, TemplateVersionContentSchema } from '@gen/docgen/admin/v1/template_pb.js';

export interface VariableDraft {
  name: string;
  required: boolean;
  /** JSON text; empty means no default. */
  defaultJson: string;
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
  userPassword: string;
  ownerPassword: string;
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
}

const NO_EXTRAS = {
  firstPageHeaderTemplate: '',
  firstPageFooterTemplate: '',
  scale: '',
  pageRanges: '',
  preferCssPageSize: false,
  protect: false,
  userPassword: '',
  ownerPassword: '',
  allowPrinting: true,
  allowCopying: true,
  allowModifying: false,
};

export const PAGE_SIZES = ['A4', 'A3', 'A5', 'Letter', 'Legal', 'Tabloid'];

export function starterDraft(): Draft {
  return {
    body: '<h1>Hello {{ customer.name }}</h1>\n<p>Thank you for your order {{ order_number }}.</p>\n',
    css: 'body { font-family: sans-serif; margin: 0; }\nh1 { color: #1d4ed8; }\n',
    partials: [],
    variables: [
      { name: 'customer', required: true, defaultJson: '', description: '' },
      { name: 'order_number', required: true, defaultJson: '', description: '' },
    ],
    pdf: {
      pageSize: 'A4',
      landscape: false,
      marginTop: '15mm',
      marginRight: '15mm',
      marginBottom: '15mm',
      marginLeft: '15mm',
      printBackground: true,
      headerTemplate: '',
      footerTemplate: '',
      ...NO_EXTRAS,
    },
    document: { title: '', author: '', subject: '', keywords: '', language: '', locale: '', timeZone: '' },
    sampleDataText: JSON.stringify({ customer: { name: 'Ada Lovelace' }, order_number: 'A-1001' }, null, 2),
  };
}

export function draftFromContent(content: TemplateVersionContent | undefined): Draft {
  const m = content?.pdfOptions?.margins;
  return {
    body: content?.body ?? '',
    css: content?.css ?? '',
    partials: Object.entries(content?.partials ?? {}).map(([name, source]) => ({ name, source })),
    variables: (content?.variables ?? []).map((v) => ({
      name: v.name,
      required: v.required,
      defaultJson: v.defaultValue ? JSON.stringify(toJson(ValueSchema, v.defaultValue)) : '',
      description: v.description,
      ...(v.schema ? { schema: v.schema } : {}),
    })),
    pdf: {
      pageSize: content?.pdfOptions?.pageSize || 'A4',
      landscape: content?.pdfOptions?.landscape ?? false,
      marginTop: m?.top ?? '',
      marginRight: m?.right ?? '',
      marginBottom: m?.bottom ?? '',
      marginLeft: m?.left ?? '',
      printBackground: content?.pdfOptions?.printBackground ?? false,
      headerTemplate: content?.pdfOptions?.headerTemplate ?? '',
      footerTemplate: content?.pdfOptions?.footerTemplate ?? '',
      firstPageHeaderTemplate: content?.pdfOptions?.firstPageHeaderTemplate ?? '',
      firstPageFooterTemplate: content?.pdfOptions?.firstPageFooterTemplate ?? '',
      scale: content?.pdfOptions?.scale ? String(content.pdfOptions.scale) : '',
      pageRanges: content?.pdfOptions?.pageRanges ?? '',
      preferCssPageSize: content?.pdfOptions?.preferCssPageSize ?? false,
      protect: !!content?.pdfOptions?.protection,
      userPassword: content?.pdfOptions?.protection?.userPassword ?? '',
      ownerPassword: content?.pdfOptions?.protection?.ownerPassword ?? '',
      allowPrinting: content?.pdfOptions?.protection?.allowPrinting ?? true,
      allowCopying: content?.pdfOptions?.protection?.allowCopying ?? true,
      allowModifying: content?.pdfOptions?.protection?.allowModifying ?? false,
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
  };
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

/** The content to send, or the problems that keep it from being sent. */
export function contentFromDraft(draft: Draft): {
  content?: ContentInit;
  sampleProblem?: JsonProblem;
  variableProblems: string[];
} {
  const sample = parseJsonObject(draft.sampleDataText, 'Sample data');
  const variableProblems: string[] = [];
  const variables = draft.variables
    .filter((v) => v.name.trim() !== '')
    .map((v) => {
      let defaultValue;
      if (v.defaultJson.trim() !== '') {
        try {
          defaultValue = fromJson(ValueSchema, JSON.parse(v.defaultJson) as JsonValue);
        } catch {
          variableProblems.push(`The default of variable “${v.name}” is not valid JSON (strings need quotes).`);
        }
      }
      return {
        name: v.name.trim(),
        required: v.required,
        description: v.description,
        ...(defaultValue ? { defaultValue } : {}),
        ...(v.schema ? { schema: v.schema } : {}),
      };
    });
  const scale = draft.pdf.scale.trim() === '' ? 0 : Number(draft.pdf.scale);
  if (!Number.isFinite(scale)) variableProblems.push('The PDF scale must be a number between 0.1 and 2.');
  if (sample.problem) return { sampleProblem: sample.problem, variableProblems };
  if (variableProblems.length > 0) return { variableProblems };
  const partials: Record<string, string> = {};
  for (const p of draft.partials) if (p.name.trim() !== '') partials[p.name.trim()] = p.source;
  return {
    variableProblems,
    content: {
      body: draft.body,
      css: draft.css,
      partials,
      variables,
      pdfOptions: {
        pageSize: draft.pdf.pageSize,
        landscape: draft.pdf.landscape,
        margins: {
          top: draft.pdf.marginTop,
          right: draft.pdf.marginRight,
          bottom: draft.pdf.marginBottom,
          left: draft.pdf.marginLeft,
        },
        printBackground: draft.pdf.printBackground,
        headerTemplate: draft.pdf.headerTemplate,
        footerTemplate: draft.pdf.footerTemplate,
        firstPageHeaderTemplate: draft.pdf.firstPageHeaderTemplate,
        firstPageFooterTemplate: draft.pdf.firstPageFooterTemplate,
        scale,
        pageRanges: draft.pdf.pageRanges.trim(),
        preferCssPageSize: draft.pdf.preferCssPageSize,
        ...(draft.pdf.protect
          ? {
              protection: {
                userPassword: draft.pdf.userPassword,
                ownerPassword: draft.pdf.ownerPassword,
                allowPrinting: draft.pdf.allowPrinting,
                allowCopying: draft.pdf.allowCopying,
                allowModifying: draft.pdf.allowModifying,
              },
            }
          : {}),
      },
      title: draft.document.title,
      metadata: {
        author: draft.document.author,
        subject: draft.document.subject,
        keywords: draft.document.keywords,
        language: draft.document.language,
      },
      locale: draft.document.locale.trim(),
      timeZone: draft.document.timeZone.trim(),
      sampleData: sample.value ?? {},
    },
  };
}

export function sameDraft(a: Draft, b: Draft): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
