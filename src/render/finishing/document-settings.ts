// A template version's document settings (docs/templates.md#document-standards): what the
// finishing pipeline does to the printed PDF beyond Chromium's print. The one home of their
// shape, defaults, validation and the publish-time refusals of combinations that cannot hold;
// server, CLI and portal all use it, so it imports nothing from Node (browser-safe).

export const CONFORMANCE_LEVELS = ['PDF/A-2b', 'PDF/A-2u', 'PDF/A-3b', 'PDF/A-3u', 'PDF/UA-1'] as const;
export type ConformanceLevel = (typeof CONFORMANCE_LEVELS)[number];

export const E_INVOICE_STANDARDS = ['factur-x', 'zugferd', 'xrechnung-cii'] as const;
export type EInvoiceStandard = (typeof E_INVOICE_STANDARDS)[number];

export const E_INVOICE_PROFILES = ['MINIMUM', 'BASIC WL', 'BASIC', 'EN16931', 'EXTENDED'] as const;
export type EInvoiceProfile = (typeof E_INVOICE_PROFILES)[number];

export interface EInvoiceSettings {
  standard: EInvoiceStandard;
  /** XRechnung is an EN 16931 specification: xrechnung-cii takes EN16931 only. */
  profile: EInvoiceProfile;
  /** The variable that holds the invoice: CII XML as a string, or an invoice object (JSON model). */
  from: string;
}

export interface SignatureSettings {
  /** A workspace certificate, `crt_…`. */
  certificate: string;
  reason?: string;
  location?: string;
}

export interface StampSettings {
  text: string;
  /** 0 (invisible) to 1 (opaque); default 0.15. */
  opacity?: number;
  /** Degrees, counter-clockwise; default 45. */
  angle?: number;
  /** Only the first page; default every page. */
  firstPageOnly?: boolean;
}

/** The settings as a version stores them; each absent one is off. */
export interface DocumentSettings {
  conformance?: ConformanceLevel[];
  eInvoice?: EInvoiceSettings | null;
  sign?: SignatureSettings | null;
  stamp?: StampSettings | null;
  outline?: boolean;
  /** Workspace asset names attached to the PDF. */
  attachments?: string[];
}

export const STAMP_DEFAULTS = { opacity: 0.15, angle: 45, firstPageOnly: false } as const;
export const MAX_STAMP_CHARS = 200;
export const MAX_SIGNATURE_TEXT_CHARS = 200;
export const MAX_ATTACHMENTS = 20;

const CERTIFICATE_ID = /^crt_[A-Za-z0-9_-]{1,64}$/;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const quote = (v: unknown) => JSON.stringify(v) ?? String(v);

/** What each standard's attached XML file is called (Factur-X 1.0 / ZUGFeRD 2.1+; XRechnung in a PDF). */
export function eInvoiceFileName(standard: EInvoiceStandard): string {
  return standard === 'xrechnung-cii' ? 'xrechnung.xml' : 'factur-x.xml';
}

/** The PDF/A level in a conformance list, if any: part (2 or 3) and conformance letter. */
export function pdfaLevel(levels: readonly ConformanceLevel[] | undefined): { part: 2 | 3; letter: 'B' | 'U' } | null {
  const level = levels?.find((l) => l.startsWith('PDF/A-'));
  if (!level) return null;
  return { part: level[6] === '2' ? 2 : 3, letter: level[7] === 'u' ? 'U' : 'B' };
}

export function wantsPdfUa(levels: readonly ConformanceLevel[] | undefined): boolean {
  return levels?.includes('PDF/UA-1') === true;
}

/** True when a version's settings ask the pipeline for anything (a plain render skips it). */
export function hasDocumentSettings(s: DocumentSettings): boolean {
  return (
    (s.conformance?.length ?? 0) > 0 ||
    Boolean(s.eInvoice) ||
    Boolean(s.sign) ||
    Boolean(s.stamp) ||
    s.outline === true ||
    (s.attachments?.length ?? 0) > 0
  );
}

/**
 * A conformance list as people type it ("PDF/A-3b,PDF/UA-1", any case, spaces allowed) in its
 * canonical spelling; throws an Error naming the unknown entry.
 */
export function parseConformanceList(text: string): ConformanceLevel[] {
  const out: ConformanceLevel[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const level = CONFORMANCE_LEVELS.find((l) => l.toLowerCase() === entry.toLowerCase());
    if (!level)
      throw new Error(`conformance ${quote(entry)} is not supported; use any of ${CONFORMANCE_LEVELS.join(', ')}`);
    if (!out.includes(level)) out.push(level);
  }
  return out;
}

/**
 * Problems with the settings themselves, each naming the field and what to use; [] when valid.
 * Absent fields are fine (off).
 */
export function validateDocumentSettings(settings: unknown): string[] {
  if (!isObject(settings)) return ['document settings must be an object'];
  const s = settings;
  const problems: string[] = [];

  if (s.conformance !== undefined) {
    if (!Array.isArray(s.conformance)) {
      problems.push(`conformance must be a list of ${CONFORMANCE_LEVELS.join(', ')}`);
    } else {
      const seen = new Set<string>();
      for (const level of s.conformance) {
        if (!(CONFORMANCE_LEVELS as readonly unknown[]).includes(level))
          problems.push(`conformance ${quote(level)} is not supported; use any of ${CONFORMANCE_LEVELS.join(', ')}`);
        else if (seen.has(level as string)) problems.push(`conformance lists ${quote(level)} twice`);
        else seen.add(level as string);
      }
      const pdfa = [...seen].filter((l) => l.startsWith('PDF/A-'));
      if (pdfa.length > 1)
        problems.push(`conformance names ${pdfa.join(' and ')}; a PDF conforms to one PDF/A level, pick one`);
    }
  }

  if (s.eInvoice !== undefined && s.eInvoice !== null) {
    const e = s.eInvoice;
    if (!isObject(e)) {
      problems.push('eInvoice must be an object {"standard", "profile", "from"}');
    } else {
      if (!(E_INVOICE_STANDARDS as readonly unknown[]).includes(e.standard))
        problems.push(`eInvoice.standard ${quote(e.standard)} is not supported; use ${E_INVOICE_STANDARDS.join(', ')}`);
      if (!(E_INVOICE_PROFILES as readonly unknown[]).includes(e.profile))
        problems.push(`eInvoice.profile ${quote(e.profile)} is not supported; use ${E_INVOICE_PROFILES.join(', ')}`);
      else if (e.standard === 'xrechnung-cii' && e.profile !== 'EN16931')
        problems.push(
          `eInvoice.profile must be EN16931 for xrechnung-cii (XRechnung specifies EN 16931), not ${quote(e.profile)}`,
        );
      if (typeof e.from !== 'string' || !VARIABLE_NAME.test(e.from))
        problems.push(`eInvoice.from ${quote(e.from)} must name a variable (letters, digits, _ or -)`);
    }
  }

  if (s.sign !== undefined && s.sign !== null) {
    const g = s.sign;
    if (!isObject(g)) {
      problems.push('sign must be an object {"certificate", "reason", "location"}');
    } else {
      if (typeof g.certificate !== 'string' || !CERTIFICATE_ID.test(g.certificate))
        problems.push(`sign.certificate ${quote(g.certificate)} must be a certificate id (crt_…)`);
      for (const field of ['reason', 'location'] as const) {
        const v = g[field];
        if (v === undefined) continue;
        if (typeof v !== 'string') problems.push(`sign.${field} must be a string`);
        else if (v.length > MAX_SIGNATURE_TEXT_CHARS)
          problems.push(`sign.${field} is longer than ${MAX_SIGNATURE_TEXT_CHARS} characters`);
      }
    }
  }

  if (s.stamp !== undefined && s.stamp !== null) {
    const t = s.stamp;
    if (!isObject(t)) {
      problems.push('stamp must be an object {"text", "opacity", "angle", "firstPageOnly"}');
    } else {
      if (typeof t.text !== 'string' || t.text.trim() === '') problems.push('stamp.text must be a non-empty string');
      else if (t.text.length > MAX_STAMP_CHARS)
        problems.push(`stamp.text is longer than ${MAX_STAMP_CHARS} characters`);
      else if (/[\r\n]/.test(t.text)) problems.push('stamp.text must be one line');
      if (t.opacity !== undefined && !(typeof t.opacity === 'number' && t.opacity > 0 && t.opacity <= 1))
        problems.push(`stamp.opacity ${quote(t.opacity)} is out of range; use a number above 0, up to 1`);
      if (
        t.angle !== undefined &&
        !(typeof t.angle === 'number' && Number.isFinite(t.angle) && Math.abs(t.angle) <= 360)
      )
        problems.push(`stamp.angle ${quote(t.angle)} is out of range; use degrees from -360 to 360`);
      if (t.firstPageOnly !== undefined && typeof t.firstPageOnly !== 'boolean')
        problems.push('stamp.firstPageOnly must be true or false');
    }
  }

  if (s.outline !== undefined && typeof s.outline !== 'boolean') problems.push('outline must be true or false');

  if (s.attachments !== undefined) {
    const list: unknown = s.attachments;
    if (!Array.isArray(list) || list.some((a) => typeof a !== 'string' || a.trim() === '')) {
      problems.push('attachments must be a list of workspace asset names');
    } else {
      if (list.length > MAX_ATTACHMENTS)
        problems.push(`attachments lists ${list.length} files; at most ${MAX_ATTACHMENTS}`);
      const dup: unknown = list.find((a, i) => list.indexOf(a) !== i);
      if (dup !== undefined) problems.push(`attachments lists ${quote(dup)} twice`);
    }
  }
  return problems;
}

/** What else of the version the refusals look at. */
export interface PublishContext {
  /** The version encrypts its PDFs (pdfOptions.protection). */
  encrypted: boolean;
  /** The version's title (Liquid source); '' means none of its own. */
  title: string;
  /** Declared variable names, to check eInvoice.from against. */
  variables?: readonly string[];
}

/** A refused combination: the setting to change (`conformance`, `title`, …) and why. */
export interface SettingsConflict {
  field: 'conformance' | 'title' | 'eInvoice' | 'attachments' | 'sign';
  message: string;
}

/**
 * Combinations that cannot hold, refused when a version is saved or published (the settings
 * themselves must be valid first), each with the setting it names and a message saying what
 * to change.
 */
export function documentSettingsConflictIssues(s: DocumentSettings, context: PublishContext): SettingsConflict[] {
  const problems: SettingsConflict[] = [];
  const add = (field: SettingsConflict['field'], message: string) => problems.push({ field, message });
  const pdfa = pdfaLevel(s.conformance);
  if (pdfa && context.encrypted)
    add(
      'conformance',
      'PDF/A forbids encryption (ISO 19005-2 6.1.3): remove pdfOptions.protection or the PDF/A conformance level',
    );
  if (wantsPdfUa(s.conformance) && context.title.trim() === '')
    add('title', 'PDF/UA-1 needs a document title (ISO 14289-1 7.1): set the version title');
  if (s.eInvoice && pdfa?.part !== 3)
    add('eInvoice', 'an e-invoice is embedded in a PDF/A-3 document: add PDF/A-3b (or PDF/A-3u) to conformance');
  if ((s.attachments?.length ?? 0) > 0 && pdfa?.part === 2)
    add('attachments', 'PDF/A-2 accepts only PDF/A files as attachments: use PDF/A-3b or PDF/A-3u to attach files');
  if (s.sign && context.encrypted)
    add('sign', 'signed PDFs cannot be encrypted here (the signature must be the last change): remove one of them');
  if (s.eInvoice && context.variables && !context.variables.includes(s.eInvoice.from))
    add('eInvoice', `eInvoice.from names ${quote(s.eInvoice.from)}, which is not a declared variable`);
  return problems;
}

/** The refused combinations' messages (documentSettingsConflictIssues). */
export function documentSettingsConflicts(s: DocumentSettings, context: PublishContext): string[] {
  return documentSettingsConflictIssues(s, context).map((c) => c.message);
}

/** Everything publishing checks: the settings, then (when they are valid) their combinations. */
export function documentSettingsProblems(settings: unknown, context: PublishContext): string[] {
  const problems = validateDocumentSettings(settings);
  return problems.length > 0 ? problems : documentSettingsConflicts(settings as DocumentSettings, context);
}

/** The document settings of a version's content (its fields of the same names). */
export function documentSettingsOf(content: DocumentSettings): DocumentSettings {
  const s: DocumentSettings = {};
  if (content.conformance !== undefined) s.conformance = content.conformance;
  if (content.eInvoice !== undefined) s.eInvoice = content.eInvoice;
  if (content.sign !== undefined) s.sign = content.sign;
  if (content.stamp !== undefined) s.stamp = content.stamp;
  if (content.outline !== undefined) s.outline = content.outline;
  if (content.attachments !== undefined) s.attachments = content.attachments;
  return s;
}
