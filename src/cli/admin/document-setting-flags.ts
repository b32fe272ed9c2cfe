// The document-standards flags of `template create` and `template version add`
// (docs/templates.md#document-standards): --conformance LIST, --e-invoice JSON|@FILE,
// --sign JSON|@FILE, --stamp JSON|@FILE, --outline, --attach a,b. Each value is checked here by
// the settings' one home (src/render/finishing/document-settings.ts), so a mistake names its
// flag before anything is sent; the server checks the same rules (and their combinations) again.
import { create } from '@bufbuild/protobuf';
import {
  parseConformanceList,
  validateDocumentSettings,
  type DocumentSettings,
} from '../../render/finishing/document-settings.ts';
import {
  EInvoiceSettingsSchema,
  SignatureSettingsSchema,
  StampSettingsSchema,
  type TemplateVersionContent,
} from '../../gen/docgen/admin/v1/template_pb.js';
import { list, str, UsageError, type OptionSpec, type Values } from './command.ts';
import { readJsonObjectFlag } from './template-files.ts';

export const DOCUMENT_SETTING_OPTIONS: Record<string, OptionSpec> = {
  conformance: { type: 'string' },
  'e-invoice': { type: 'string' },
  sign: { type: 'string' },
  stamp: { type: 'string' },
  outline: { type: 'boolean' },
  attach: { type: 'string' },
};

export const DOCUMENT_SETTING_SYNOPSIS =
  '[--conformance PDF/A-3b,PDF/UA-1] [--e-invoice JSON|@FILE] [--sign JSON|@FILE] [--stamp JSON|@FILE] [--outline] [--attach a.png,b.pdf]';

const KEYS = {
  'e-invoice': ['standard', 'profile', 'from'],
  sign: ['certificate', 'reason', 'location'],
  stamp: ['text', 'opacity', 'angle', 'firstPageOnly'],
} as const;

/** One setting checked on its own; the first problem is the flag's error. */
function check(flag: string, settings: DocumentSettings): void {
  const problem = validateDocumentSettings(settings)[0];
  if (problem) throw new UsageError(`--${flag}: ${problem}`);
}

async function objectFlag(flag: keyof typeof KEYS, value: string): Promise<Record<string, unknown>> {
  const o = await readJsonObjectFlag(`--${flag}`, value);
  const allowed: readonly string[] = KEYS[flag];
  const unknown = Object.keys(o).filter((k) => !allowed.includes(k));
  if (unknown.length > 0)
    throw new UsageError(`--${flag}: unknown field ${JSON.stringify(unknown[0])} (use ${allowed.join(', ')})`);
  return o;
}

/** Sets the content's document standards from the flags given (absent flags leave them off). */
export async function applyDocumentSettingFlags(content: TemplateVersionContent, values: Values): Promise<void> {
  if (values.conformance !== undefined) {
    let levels;
    try {
      levels = parseConformanceList(str(values.conformance));
    } catch (err) {
      throw new UsageError(`--conformance: ${(err as Error).message}`);
    }
    if (levels.length === 0) throw new UsageError('--conformance: name at least one level, e.g. PDF/A-3b');
    check('conformance', { conformance: levels });
    content.conformance = levels;
  }
  if (values['e-invoice'] !== undefined) {
    const e = await objectFlag('e-invoice', str(values['e-invoice']));
    check('e-invoice', { eInvoice: e as never });
    content.eInvoice = create(EInvoiceSettingsSchema, e as Record<string, string>);
  }
  if (values.sign !== undefined) {
    const s = await objectFlag('sign', str(values.sign));
    check('sign', { sign: s as never });
    content.sign = create(SignatureSettingsSchema, s as Record<string, string>);
  }
  if (values.stamp !== undefined) {
    const s = await objectFlag('stamp', str(values.stamp));
    check('stamp', { stamp: s as never });
    content.stamp = create(StampSettingsSchema, {
      text: s.text as string,
      ...(s.opacity !== undefined ? { opacity: s.opacity as number } : {}),
      ...(s.angle !== undefined ? { angle: s.angle as number } : {}),
      firstPageOnly: s.firstPageOnly === true,
    });
  }
  if (values.outline === true) content.outline = true;
  if (values.attach !== undefined) {
    const names = list(values.attach);
    if (names.length === 0) throw new UsageError('--attach: name at least one workspace asset, e.g. terms.pdf');
    check('attach', { attachments: names });
    content.attachments = names;
  }
}
