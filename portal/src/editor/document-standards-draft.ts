// The editor's draft of a version's document standards (docs/templates.md#document-standards)
// and its conversion to and from the content, checked by the server's rules
// (src/render/finishing/document-settings.ts). No UI here: the section is
// document-standards-section.tsx.
import type { TemplateVersionContent } from '@gen/docgen/admin/v1/template_pb.js';
import {
  documentSettingsConflicts,
  validateDocumentSettings,
  type DocumentSettings,
} from '../../../src/render/finishing/document-settings.ts';

export interface StandardsDraft {
  conformance: string[];
  eInvoice: boolean;
  eInvoiceStandard: string;
  eInvoiceProfile: string;
  eInvoiceFrom: string;
  /** `crt_…`; '' means not signed. */
  signCertificate: string;
  signReason: string;
  signLocation: string;
  stamp: boolean;
  stampText: string;
  /** Text of numbers; empty means the default. */
  stampOpacity: string;
  stampAngle: string;
  stampFirstPageOnly: boolean;
  outline: boolean;
  /** Comma-separated asset names. */
  attachments: string;
}

export function standardsDraftFromContent(c: TemplateVersionContent | undefined): StandardsDraft {
  return {
    conformance: [...(c?.conformance ?? [])],
    eInvoice: !!c?.eInvoice,
    eInvoiceStandard: c?.eInvoice?.standard || 'factur-x',
    eInvoiceProfile: c?.eInvoice?.profile || 'EN16931',
    eInvoiceFrom: c?.eInvoice?.from ?? '',
    signCertificate: c?.sign?.certificate ?? '',
    signReason: c?.sign?.reason ?? '',
    signLocation: c?.sign?.location ?? '',
    stamp: !!c?.stamp,
    stampText: c?.stamp?.text ?? 'DRAFT',
    stampOpacity: c?.stamp?.opacity !== undefined ? String(c.stamp.opacity) : '',
    stampAngle: c?.stamp?.angle !== undefined ? String(c.stamp.angle) : '',
    stampFirstPageOnly: c?.stamp?.firstPageOnly ?? false,
    outline: c?.outline ?? false,
    attachments: (c?.attachments ?? []).join(', '),
  };
}

const numberOr = (text: string): number | string | undefined => {
  const t = text.trim();
  if (t === '') return undefined;
  return Number.isFinite(Number(t)) ? Number(t) : t;
};

/** The settings as the content carries them (absent: off). */
export function documentSettingsFromDraft(s: StandardsDraft): DocumentSettings {
  const out: Record<string, unknown> = {};
  if (s.conformance.length > 0) out.conformance = s.conformance;
  if (s.eInvoice)
    out.eInvoice = { standard: s.eInvoiceStandard, profile: s.eInvoiceProfile, from: s.eInvoiceFrom.trim() };
  if (s.signCertificate !== '')
    out.sign = {
      certificate: s.signCertificate,
      ...(s.signReason.trim() ? { reason: s.signReason.trim() } : {}),
      ...(s.signLocation.trim() ? { location: s.signLocation.trim() } : {}),
    };
  if (s.stamp) {
    const opacity = numberOr(s.stampOpacity);
    const angle = numberOr(s.stampAngle);
    out.stamp = {
      text: s.stampText,
      ...(opacity !== undefined ? { opacity } : {}),
      ...(angle !== undefined ? { angle } : {}),
      ...(s.stampFirstPageOnly ? { firstPageOnly: true } : {}),
    };
  }
  if (s.outline) out.outline = true;
  const names = s.attachments
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  if (names.length > 0) out.attachments = names;
  return out as DocumentSettings;
}

/**
 * What the server would refuse, in its words: the settings' own checks, then (when they pass)
 * the combinations with the rest of the version.
 */
export function standardsProblems(
  s: StandardsDraft,
  context: { encrypted: boolean; title: string; variables: string[] },
): string[] {
  const settings = documentSettingsFromDraft(s);
  const problems = validateDocumentSettings(settings);
  return problems.length > 0 ? problems : documentSettingsConflicts(settings, context);
}

/** The message fields of the version's content (numbers not typed as numbers stay out: flagged above). */
export function standardsContent(s: StandardsDraft) {
  const d = documentSettingsFromDraft(s);
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  return {
    conformance: d.conformance ?? [],
    outline: d.outline ?? false,
    attachments: d.attachments ?? [],
    ...(d.eInvoice ? { eInvoice: d.eInvoice } : {}),
    ...(d.sign
      ? { sign: { certificate: d.sign.certificate, reason: d.sign.reason ?? '', location: d.sign.location ?? '' } }
      : {}),
    ...(d.stamp
      ? {
          stamp: {
            text: d.stamp.text,
            opacity: num(d.stamp.opacity),
            angle: num(d.stamp.angle),
            firstPageOnly: d.stamp.firstPageOnly ?? false,
          },
        }
      : {}),
  };
}
