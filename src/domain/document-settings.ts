// Document settings of a template version: how its document is printed (the PDF options) and
// what the document says about itself (title, metadata). The one home of their rules: each
// setting's default, check and message is written here once, and the server (when a version
// is saved: src/admin/template-content.ts; published and printed: src/render/pdf-options.ts),
// the CLI (src/cli/admin/template-files.ts) and the portal's editor
// (portal/src/editor/template-draft.ts) all read settings through it, so they accept and refuse
// the same values (test/unit/document-settings-agreement.test.ts checks, from one table).
//
// Browser-safe: the portal bundles this file, so no node: modules and no Buffer.
//
// A new setting: its field in the types below; one entry in PDF_OPTION_SETTINGS or
// DOCUMENT_PROPERTY_SETTINGS with its default, its check and its message (readers get a value
// only when one was given; a missing one takes the default); its proto field
// (TemplateVersionContent) and a row in docs/admin.md's table.

// ---- Paper ---------------------------------------------------------------------------------

export const PAGE_SIZES = ['A3', 'A4', 'A5', 'Letter', 'Legal', 'Tabloid'] as const;
export type PageSize = (typeof PAGE_SIZES)[number];

/**
 * Paper sizes in inches (portrait): the ISO sizes to four decimals, the same figures puppeteer's
 * `format` sends to Chromium, so pages keep the size they had when printing went through it
 * (A4 prints as 595.92 x 841.92 pt).
 */
export const PAPER_INCHES: Readonly<Record<PageSize, { width: number; height: number }>> = {
  A3: { width: 11.6929, height: 16.5354 },
  A4: { width: 8.2677, height: 11.6929 },
  A5: { width: 5.8268, height: 8.2677 },
  Letter: { width: 8.5, height: 11 },
  Legal: { width: 8.5, height: 14 },
  Tabloid: { width: 11, height: 17 },
};

export const MARGIN_SIDES = ['top', 'right', 'bottom', 'left'] as const;
export type MarginSide = (typeof MARGIN_SIDES)[number];

// ---- Units and limits ------------------------------------------------------------------------

const UNIT_INCHES: Readonly<Record<string, number>> = { px: 1 / 96, in: 1, cm: 1 / 2.54, mm: 1 / 25.4 };

/**
 * The CSS-length rule: what Chromium's print parameters take for a margin, a non-negative
 * number with an optional unit px, in, cm or mm (no unit means px). Returns inches, or
 * undefined when the value is not such a length.
 */
export function cssLengthToInches(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(px|in|cm|mm)?\s*$/i.exec(value);
  if (!match) return undefined;
  return Number(match[1]) * UNIT_INCHES[(match[2] ?? 'px').toLowerCase()]!;
}

/** Zoom of the page content: 1 is 100 %. */
export const SCALE_RANGE = { min: 0.1, max: 2 } as const;

/**
 * Largest header or footer template a version may hold, in bytes of UTF-8 (a CJK character is
 * three): they are rendered for every page. Rendered templates (CSS and data: URLs inlined) may
 * be longer; the limit is on what an author writes.
 */
export const MAX_HEADER_FOOTER_BYTES = 64 * 1024;

export const MAX_TITLE_CHARS = 1000;
export const MAX_METADATA_FIELD_CHARS = 1000;

/** The owner password lifts a protected PDF's restrictions. */
export const MIN_OWNER_PASSWORD_CHARS = 6;

/** Bytes of a text in UTF-8 (what Buffer.byteLength gives on the server). */
export function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}

// ---- The settings' shapes ----------------------------------------------------------------------

export const PROTECTION_FIELDS = [
  'userPassword',
  'ownerPassword',
  'allowPrinting',
  'allowCopying',
  'allowModifying',
] as const;
export const METADATA_FIELDS = ['author', 'subject', 'keywords', 'language'] as const;

export interface PdfProtection {
  /** '' opens without a password. */
  userPassword: string;
  ownerPassword: string;
  allowPrinting: boolean;
  allowCopying: boolean;
  allowModifying: boolean;
}

export interface PdfOptions {
  pageSize: PageSize;
  landscape: boolean;
  /** CSS lengths ("10mm", "0.5in", "12px"); "0" when unset. */
  margins: Record<MarginSide, string>;
  printBackground: boolean;
  /** Chromium header/footer templates (Liquid); '' means none. */
  headerTemplate: string;
  footerTemplate: string;
  // The settings below are absent on versions stored before they existed (withDocumentDefaults).
  /** Zoom of the page content, SCALE_RANGE. */
  scale?: number;
  /** e.g. "1-3, 5"; '' prints all pages. */
  pageRanges?: string;
  /** A CSS @page size wins over pageSize/landscape. */
  preferCssPageSize?: boolean;
  /** First page only; '' uses headerTemplate/footerTemplate there too. */
  firstPageHeaderTemplate?: string;
  firstPageFooterTemplate?: string;
  /** Encrypts the PDF when set (stored versions may hold null for none). */
  protection?: PdfProtection;
}

/** PDF options with every setting present; protection stays absent when there is none. */
export type CompletePdfOptions = Required<Omit<PdfOptions, 'protection'>> & Pick<PdfOptions, 'protection'>;

/** PDF document properties; '' means unset. */
export interface DocumentMetadata {
  author: string;
  subject: string;
  keywords: string;
  /** BCP 47 tag: <html lang> and the PDF's /Lang. */
  language: string;
}

/** Submitted PDF options: any field may be missing (its default applies); values are checked. */
export type PdfOptionsInput = { [K in keyof PdfOptions]?: unknown };

/** A problem with one setting: its field (e.g. `pdfOptions.margins.top`) and what to fix. */
export interface SettingIssue {
  field: string;
  issue: string;
}

export function formatSettingIssue(i: SettingIssue): string {
  return `${i.field}: ${i.issue}`;
}

// ---- The settings: default, check, message ---------------------------------------------------

export interface SettingContext {
  /** Header/footer templates are the rendered ones (may exceed the source limits). */
  rendered: boolean;
}

interface Setting<T> {
  /** What a missing value means. */
  readonly default: T;
  /** Whether a given value means "not set" (the default applies). Default: undefined, null or ''. */
  readonly unset?: (value: unknown) => boolean;
  /** The value to store; problems go to `issues`, naming `field` (the default stands in). */
  readonly read: (value: unknown, field: string, issues: SettingIssue[], context: SettingContext) => T;
}

/** Declares a setting; the type parameter is the stored value's type. */
function setting<T>(definition: Setting<T>): Setting<T> {
  return definition;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a table holds settings of different value types
type SettingTable = Record<string, Setting<any>>;
type SettingValues<T extends SettingTable> = { -readonly [K in keyof T]: T[K] extends Setting<infer V> ? V : never };

const isUnset = (value: unknown) => value === undefined || value === null || value === '';

/** JSON for strings and objects, as written for numbers (NaN stays NaN). */
function shown(value: unknown): string {
  return typeof value === 'number' ? String(value) : JSON.stringify(value);
}

function booleanSetting(defaultValue: boolean): Setting<boolean> {
  return setting({
    default: defaultValue,
    read: (value, field, issues) => {
      if (typeof value === 'boolean') return value;
      issues.push({ field, issue: 'must be true or false' });
      return defaultValue;
    },
  });
}

const headerFooterSetting = setting<string>({
  default: '',
  read: (value, field, issues, { rendered }) => {
    if (typeof value !== 'string') {
      issues.push({ field, issue: "must be a string ('' for none)" });
      return '';
    }
    const bytes = rendered ? 0 : utf8Bytes(value);
    if (bytes > MAX_HEADER_FOOTER_BYTES)
      issues.push({
        field,
        issue: `must be at most ${MAX_HEADER_FOOTER_BYTES / 1024} KiB (${MAX_HEADER_FOOTER_BYTES} bytes of UTF-8; it is ${bytes})`,
      });
    return value;
  },
});

// What Chromium accepts: "1-5, 8, 11-13"; an open end ("3-") means to the last page.
const PAGE_RANGES = /^\s*\d+\s*(-\s*\d*\s*)?(,\s*\d+\s*(-\s*\d*\s*)?)*$/;
const PAGE_ZERO = /(^|[^\d])0+(?!\d)/;

// qpdf takes passwords as arguments: printable characters only, and a sane length.
const PASSWORD = /^[\x20-\x7e]{0,127}$/;

function readProtection(value: unknown, field: string, issues: SettingIssue[]): PdfProtection | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issues.push({
      field,
      issue: `must be an object {${PROTECTION_FIELDS.join(', ')}}`,
    });
    return undefined;
  }
  const p = value as Partial<Record<keyof PdfProtection, unknown>>;
  // Permissions default to refused: a protected PDF allows only what it says.
  const protection: PdfProtection = {
    userPassword: typeof p.userPassword === 'string' ? p.userPassword : '',
    ownerPassword: typeof p.ownerPassword === 'string' ? p.ownerPassword : '',
    allowPrinting: p.allowPrinting === true,
    allowCopying: p.allowCopying === true,
    allowModifying: p.allowModifying === true,
  };
  if (protection.ownerPassword.length < MIN_OWNER_PASSWORD_CHARS) {
    issues.push({
      field: `${field}.ownerPassword`,
      issue: `is required when protecting a PDF (at least ${MIN_OWNER_PASSWORD_CHARS} characters; it lifts the restrictions)`,
    });
  }
  for (const key of ['userPassword', 'ownerPassword'] as const) {
    if (!PASSWORD.test(protection[key]))
      issues.push({ field: `${field}.${key}`, issue: 'must be at most 127 printable ASCII characters' });
  }
  if (protection.userPassword !== '' && protection.userPassword === protection.ownerPassword) {
    issues.push({
      field: `${field}.userPassword`,
      issue: 'must differ from ownerPassword (otherwise every reader can lift the restrictions)',
    });
  }
  return protection;
}

/** The default margins: none, the content fills the paper (a template sets its own, or uses CSS @page). */
const NO_MARGINS: Readonly<Record<MarginSide, string>> = { top: '0', right: '0', bottom: '0', left: '0' };

/** Every PDF option: the order of this table is the order of fields and messages. */
export const PDF_OPTION_SETTINGS = {
  pageSize: setting<PageSize>({
    default: 'A4',
    read: (value, field, issues) => {
      // Any case is understood; the stored name is the canonical one.
      const match = PAGE_SIZES.find((s) => s.toLowerCase() === String(value).toLowerCase());
      if (typeof value === 'string' && match) return match;
      issues.push({ field, issue: `${shown(value)} is not a page size; use one of ${PAGE_SIZES.join(', ')}` });
      return 'A4';
    },
  }),
  landscape: booleanSetting(false),
  margins: setting<Record<MarginSide, string>>({
    default: NO_MARGINS,
    read: (value, field, issues) => {
      const margins = { ...NO_MARGINS };
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        issues.push({ field, issue: 'must be an object with top, right, bottom and left' });
        return margins;
      }
      for (const side of MARGIN_SIDES) {
        const given = (value as Record<string, unknown>)[side];
        if (isUnset(given)) continue;
        const text = typeof given === 'string' || typeof given === 'number' ? String(given).trim() : '';
        if (cssLengthToInches(text) !== undefined) margins[side] = text;
        else
          issues.push({
            field: `${field}.${side}`,
            issue: `${shown(given)} is not a length; use a number with px, in, cm or mm (e.g. "10mm"; no unit means px)`,
          });
      }
      return margins;
    },
  }),
  printBackground: booleanSetting(true),
  headerTemplate: headerFooterSetting,
  footerTemplate: headerFooterSetting,
  firstPageHeaderTemplate: headerFooterSetting,
  firstPageFooterTemplate: headerFooterSetting,
  scale: setting<number>({
    default: 1,
    // proto3 cannot leave a float unset: 0 means "not set".
    unset: (value) => value === undefined || value === null || value === 0,
    read: (value, field, issues) => {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        issues.push({ field, issue: `${shown(value)} is not a number; use ${SCALE_RANGE.min} to ${SCALE_RANGE.max}` });
        return 1;
      }
      if (value >= SCALE_RANGE.min && value <= SCALE_RANGE.max) return value;
      issues.push({
        field,
        issue: `${shown(value)} is out of range; use ${SCALE_RANGE.min} to ${SCALE_RANGE.max} (1 is 100 %)`,
      });
      return 1;
    },
  }),
  pageRanges: setting<string>({
    default: '',
    read: (value, field, issues) => {
      const text = typeof value === 'string' ? value.trim() : '';
      if (text === '' || !PAGE_RANGES.test(text) || PAGE_ZERO.test(text)) {
        issues.push({
          field,
          issue: `${shown(value)} is not a page range list; use e.g. "1-3, 5" (pages count from 1)`,
        });
        return '';
      }
      return text;
    },
  }),
  preferCssPageSize: booleanSetting(false),
  protection: setting<PdfProtection | undefined>({ default: undefined, read: readProtection }),
};

/** No metadata: every property unset. */
const NO_METADATA: Readonly<DocumentMetadata> = { author: '', subject: '', keywords: '', language: '' };

/** Document properties: the title (Liquid) and the metadata written into the PDF. */
export const DOCUMENT_PROPERTY_SETTINGS = {
  title: setting<string>({
    default: '',
    read: (value, field, issues) => {
      if (typeof value !== 'string') return '';
      if (value.length > MAX_TITLE_CHARS)
        issues.push({ field, issue: `must be at most ${MAX_TITLE_CHARS} characters` });
      return value;
    },
  }),
  metadata: setting<DocumentMetadata>({ default: NO_METADATA, read: readMetadata }),
};

// BCP 47 in its common shapes: "de", "pt-BR", "zh-Hant-TW".
const LANGUAGE_TAG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

function readMetadata(value: unknown, field: string, issues: SettingIssue[]): DocumentMetadata {
  const metadata: DocumentMetadata = { ...NO_METADATA };
  const given = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  for (const key of METADATA_FIELDS) {
    const text = given[key];
    if (text === undefined || text === null) continue;
    if (typeof text !== 'string') {
      issues.push({ field: `${field}.${key}`, issue: 'must be a string' });
      continue;
    }
    metadata[key] = text.trim();
    if (metadata[key].length > MAX_METADATA_FIELD_CHARS)
      issues.push({ field: `${field}.${key}`, issue: `must be at most ${MAX_METADATA_FIELD_CHARS} characters` });
  }
  if (metadata.language !== '' && !LANGUAGE_TAG.test(metadata.language)) {
    issues.push({
      field: `${field}.language`,
      issue: `${shown(metadata.language)} is not a language tag; use e.g. "en", "de-CH" or "ja"`,
    });
  }
  return metadata;
}

function readSettings<T extends SettingTable>(
  table: T,
  input: Record<string, unknown> | undefined,
  prefix: string,
  issues: SettingIssue[],
  context: SettingContext,
): SettingValues<T> {
  const values: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(table)) {
    const value = input?.[key];
    values[key] = (setting.unset ?? isUnset)(value)
      ? structuredClone(setting.default)
      : setting.read(value, `${prefix}${key}`, issues, context);
  }
  return values as SettingValues<T>;
}

function defaultsOf<T extends SettingTable>(table: T): SettingValues<T> {
  return readSettings(table, undefined, '', [], { rendered: false });
}

// ---- Defaults ----------------------------------------------------------------------------------

/** Every option but protection (none by default), which proto messages cannot take as null. */
export const DEFAULT_PDF_OPTIONS: Readonly<Required<Omit<PdfOptions, 'protection'>>> = (() => {
  const { protection: _none, ...options } = defaultsOf(PDF_OPTION_SETTINGS);
  return options;
})();

export const EMPTY_METADATA: Readonly<DocumentMetadata> = DOCUMENT_PROPERTY_SETTINGS.metadata.default;

/**
 * What a new template starts with in the portal's editor: paper with room for a header and
 * footer. The defaults above are what a missing setting means; this is a suggestion, written
 * into the draft explicitly.
 */
export const NEW_TEMPLATE_PDF_OPTIONS: CompletePdfOptions = {
  ...DEFAULT_PDF_OPTIONS,
  margins: { top: '15mm', right: '15mm', bottom: '15mm', left: '15mm' },
};

/** What ticking "encrypt" in the portal starts with: readers may print and copy. */
export const NEW_PROTECTION: PdfProtection = {
  userPassword: '',
  ownerPassword: '',
  allowPrinting: true,
  allowCopying: true,
  allowModifying: false,
};

// ---- Reading and checking ----------------------------------------------------------------------

/**
 * Submitted PDF options as stored: missing settings take their defaults, each given one is
 * checked on its own. Protection is absent when there is none (a stored undefined would read
 * back as null).
 */
export function readPdfOptions(
  input: PdfOptionsInput | undefined,
  context: Partial<SettingContext> = {},
): { options: CompletePdfOptions; issues: SettingIssue[] } {
  const issues: SettingIssue[] = [];
  const { protection, ...options } = readSettings(
    PDF_OPTION_SETTINGS,
    input as Record<string, unknown> | undefined,
    'pdfOptions.',
    issues,
    { rendered: context.rendered ?? false },
  );
  return { options: protection ? { ...options, protection } : options, issues };
}

/** The rule across settings: the margins must leave room on the paper (landscape turns it). */
export function pageRoomIssues(options: Pick<PdfOptions, 'pageSize' | 'landscape' | 'margins'>): SettingIssue[] {
  const paper = PAPER_INCHES[options.pageSize];
  const inch = (side: MarginSide) => cssLengthToInches(options.margins[side]) ?? 0;
  const width = options.landscape ? paper.height : paper.width;
  const height = options.landscape ? paper.width : paper.height;
  const issues: SettingIssue[] = [];
  if (inch('left') + inch('right') >= width)
    issues.push({ field: 'pdfOptions.margins', issue: 'left + right leave no room on the page' });
  if (inch('top') + inch('bottom') >= height)
    issues.push({ field: 'pdfOptions.margins', issue: 'top + bottom leave no room on the page' });
  return issues;
}

/**
 * Everything a version's PDF options must pass to be published and printed: each setting's
 * own check and the rules across them (checked only when the settings they read are valid).
 */
export function checkPdfOptions(
  input: PdfOptionsInput | undefined,
  context: Partial<SettingContext> = {},
): SettingIssue[] {
  const { options, issues } = readPdfOptions(input, context);
  const paperFields = ['pdfOptions.pageSize', 'pdfOptions.landscape', 'pdfOptions.margins'];
  if (!issues.some((i) => paperFields.some((f) => i.field === f || i.field.startsWith(`${f}.`))))
    issues.push(...pageRoomIssues(options));
  return issues;
}

/** Submitted title and metadata as stored, defaults filled in. */
export function readDocumentProperties(input: { title?: unknown; metadata?: unknown }): {
  properties: SettingValues<typeof DOCUMENT_PROPERTY_SETTINGS>;
  issues: SettingIssue[];
} {
  const issues: SettingIssue[] = [];
  const properties = readSettings(DOCUMENT_PROPERTY_SETTINGS, input, '', issues, { rendered: false });
  return { properties, issues };
}
