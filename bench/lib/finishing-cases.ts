// The sample invoice under each finishing stage alone (and the conformance levels), shared by
// the finishing benchmark (bench/finishing-bench.ts) and the conformance samples that CI hands
// to veraPDF (scripts/conformance-samples.ts). Signatures use a throw-away test certificate.
import { readFileSync } from 'node:fs';
import type { JsonObject, TemplateVersionContent } from '../../src/domain/template.ts';
import type { DocumentSettings } from '../../src/render/finishing/document-settings.ts';
import { signingIdentityFromPkcs12 } from '../../src/render/finishing/signing-identity.ts';
import { pkcs12, testPki } from '../../test/harness/signing-certificates.ts';
import { createRenderEngine } from '../../src/render/render-engine.ts';
import { docgenChromium, docgenChromiumNoSandbox, loadInvoiceFixture } from './measure.ts';

export interface FinishingCase {
  name: string;
  settings: DocumentSettings;
  /** Version metadata (the metadata stage). */
  metadata?: TemplateVersionContent['metadata'];
  protection?: boolean;
  /** veraPDF flavours the PDF claims (scripts/conformance-samples.ts). */
  flavours?: string[];
  /** Needs the loopback timestamp authority. */
  timestamp?: boolean;
}

const EINVOICE = { standard: 'factur-x', profile: 'EN16931', from: 'invoiceData' } as const;
const SIGN = { certificate: 'crt_bench', reason: 'Approved', location: 'Hamburg' };

export const FINISHING_CASES: FinishingCase[] = [
  { name: 'plain (no document settings)', settings: {} },
  {
    name: 'metadata',
    settings: {},
    metadata: { author: 'Nordlicht Software GmbH', subject: 'Invoice', keywords: 'invoice', language: 'en' },
  },
  { name: 'outline', settings: { outline: true } },
  // An e-invoice is only accepted in a PDF/A-3: these two run the conformance stage too; the
  // stage column tells the attachments stage's own time.
  {
    name: 'attachments: e-invoice (CII string), PDF/A-3b',
    settings: { eInvoice: EINVOICE, conformance: ['PDF/A-3b'] },
    flavours: ['3b'],
  },
  {
    name: 'attachments: e-invoice (object -> CII), PDF/A-3b',
    settings: { eInvoice: EINVOICE, conformance: ['PDF/A-3b'] },
  },
  { name: 'conformance PDF/A-2b', settings: { conformance: ['PDF/A-2b'] }, flavours: ['2b'] },
  { name: 'conformance PDF/A-2u', settings: { conformance: ['PDF/A-2u'] }, flavours: ['2u'] },
  { name: 'conformance PDF/A-3b', settings: { conformance: ['PDF/A-3b'] }, flavours: ['3b'] },
  { name: 'conformance PDF/A-3u', settings: { conformance: ['PDF/A-3u'] }, flavours: ['3u'] },
  { name: 'conformance PDF/UA-1', settings: { conformance: ['PDF/UA-1'] }, flavours: ['ua1'] },
  {
    name: 'Factur-X EN16931 (PDF/A-3b + PDF/UA-1 + outline)',
    settings: { conformance: ['PDF/A-3b', 'PDF/UA-1'], eInvoice: EINVOICE, outline: true },
    flavours: ['3b', 'ua1'],
  },
  { name: 'stamp', settings: { stamp: { text: 'DRAFT' } } },
  { name: 'encryption', settings: {}, protection: true },
  { name: 'signature B-B', settings: { sign: SIGN } },
  { name: 'signature B-T (loopback TSA)', settings: { sign: SIGN }, timestamp: true },
  {
    name: 'signed PDF/A-2b',
    settings: { conformance: ['PDF/A-2b'], sign: SIGN },
    flavours: ['2b'],
  },
];

const fixture = (name: string) => new URL(`../../test/fixtures/e-invoice/${name}`, import.meta.url);

/** The version content and variables of a case. */
export function finishingCase(c: FinishingCase): { content: TemplateVersionContent; variables: JsonObject } {
  const { content, variables } = loadInvoiceFixture();
  const fromObject = c.name.includes('object');
  const invoiceData = fromObject
    ? (JSON.parse(readFileSync(fixture('sample-invoice.json'), 'utf8')) as JsonObject)
    : readFileSync(fixture('sample-invoice.cii.xml'), 'utf8');
  return {
    content: {
      ...content,
      variables: [...content.variables, { name: 'invoiceData', required: false, description: 'CII' }],
      ...(c.metadata ? { metadata: c.metadata } : {}),
      ...c.settings,
      pdfOptions: {
        ...content.pdfOptions,
        ...(c.protection
          ? {
              protection: {
                userPassword: '',
                ownerPassword: 'owner',
                allowPrinting: true,
                allowCopying: true,
                allowModifying: false,
              },
            }
          : {}),
      },
    },
    variables: { ...(variables as JsonObject), ...(c.settings.eInvoice ? { invoiceData } : {}) },
  };
}

/** A throw-away signer (test CA) for the signature cases, and the TSA certificate. */
export function benchSigner() {
  const pki = testPki();
  const p12 = pkcs12(pki.signer, [pki.ca], 'bench');
  // Decrypted once, as a certificate store keeps it (PKCS#12 key derivation in JavaScript
  // costs more than the signature itself).
  const identity = signingIdentityFromPkcs12(p12, 'bench');
  return { pki, certificates: { identity: async () => identity } };
}

/** One render engine (one Chromium page) as the finishing benchmark and samples use it. */
export function finishingEngine() {
  return createRenderEngine({
    chromiumPath: docgenChromium(),
    noSandbox: docgenChromiumNoSandbox(),
    concurrency: 1,
    timeoutMs: 60_000,
    liquidTimeoutMs: 5_000,
    liquidMemoryMb: 128,
    browserRecycleAfterRenders: 100_000,
    browserMaxRssMb: 4096,
    maxAttempts: 1,
  });
}
