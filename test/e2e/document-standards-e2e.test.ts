// Document standards end to end, as a user works: `docgen admin` (the CLI, against the admin
// listener) uploads a signing certificate and creates the sample invoice with --conformance
// PDF/A-3b --e-invoice … --sign … --outline; a client renders it through the public REST API;
// the stored PDF is opened with independent tools (qpdf --json, pdfinfo, pdfdetach, pdfsig).
// A loopback RFC 3161 timestamp authority (DOCGEN_TIMESTAMP_URL) makes the signature B-T.
// Also: `docgen dev`'s "E-invoice (Factur-X EN 16931)" sample renders with factur-x.xml, and
// a missing `from` variable or invalid CII fails the generation with its reason, nothing stored.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleEInvoiceContent, sampleInvoiceContent } from '../../src/dev/dev-seed.ts';
import { parseId } from '../../src/domain/ids.ts';
import type { JsonObject } from '../../src/domain/template.ts';
import { detach, PdfFiles, pdfInfoFields, QpdfView, qpdfText, tool } from '../integration/finishing-support.ts';
import { inProcessCli, type InProcessCli } from '../harness/admin-cli.ts';
import { uniqueRunDir } from '../harness/dependencies.ts';
import { startLoopbackTsa, type LoopbackTsa } from '../harness/loopback-tsa.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { pkcs12, testPki } from '../harness/signing-certificates.ts';
import { request, startApiStack, type ApiStack } from './api-stack.ts';

interface GenerationJson {
  id: string;
  status: string;
  outputUrl: string | null;
  error: string | null;
}

const pki = testPki();
const INVOICE_XML = await readFile(new URL('../fixtures/e-invoice/sample-invoice.cii.xml', import.meta.url), 'utf8');
let stack: ApiStack;
let tsa: LoopbackTsa;
let admin: InProcessCli;
let key: string;
let workspaceId: string;
let files: string;
let pdfs: PdfFiles;

beforeAll(async () => {
  tsa = await startLoopbackTsa(pki.tsa);
  stack = await startApiStack({
    env: {
      DOCGEN_ROLES: 'api,render',
      DOCGEN_RENDER_TIMEOUT_MS: '20000',
      DOCGEN_RENDER_CONCURRENCY: '1',
      DOCGEN_TIMESTAMP_URL: tsa.url,
    },
  });
  admin = inProcessCli({
    env: { DOCGEN_ADMIN_URL: `http://127.0.0.1:${stack.app.adminPort}`, DOCGEN_ADMIN_TOKEN: stack.deps.adminToken },
  });
  workspaceId = (await admin.json('workspace', 'create', '--name', 'Standards')).id as string;
  key = (await stack.key(workspaceId)).secret;
  files = await mkdtemp(join(tmpdir(), 'docgen-standards-e2e-'));
  pdfs = new PdfFiles(uniqueRunDir('standards-e2e'));
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await tsa?.close();
});

async function generate(templateId: string, variables: JsonObject): Promise<GenerationJson> {
  const res = await request(stack.baseUrl, {
    method: 'POST',
    path: '/v1/generations',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ templateId, variables }),
  });
  expect(res.status, res.text).toBe(201);
  const id = (res.body as GenerationJson).id;
  return pollUntil(
    async () =>
      (await request(stack.baseUrl, { path: `/v1/generations/${id}`, headers: { authorization: `Bearer ${key}` } }))
        .body as GenerationJson,
    (g) => g.status === 'COMPLETED' || g.status === 'FAILED',
    { timeoutMs: 60_000, intervalMs: 200, description: `generation ${id} to finish` },
  );
}

async function download(g: GenerationJson, name: string): Promise<{ path: string; bytes: Buffer }> {
  expect(g.status, g.error ?? '').toBe('COMPLETED');
  const res = await fetch(g.outputUrl!);
  expect(res.status).toBe(200);
  const bytes = Buffer.from(await res.arrayBuffer());
  return { path: await pdfs.save(bytes, name), bytes };
}

/** The gallery invoice as files, the way an author keeps a template, plus the e-invoice variable. */
async function invoiceFiles(): Promise<string[]> {
  const c = sampleInvoiceContent();
  const body = join(files, 'invoice.liquid');
  const css = join(files, 'invoice.css');
  const partials = join(files, 'partials.json');
  const variables = join(files, 'variables.json');
  await writeFile(body, c.body);
  await writeFile(css, c.css);
  await writeFile(partials, JSON.stringify(c.partials));
  await writeFile(
    variables,
    JSON.stringify([
      ...c.variables.map((v) => ({
        name: v.name,
        required: v.required,
        description: v.description,
        ...(v.default !== undefined ? { default: v.default } : {}),
        ...(v.schema ? { schema: v.schema } : {}),
      })),
      { name: 'invoiceXml', required: false, description: 'The CII XML of the invoice' },
    ]),
  );
  return [
    '--file',
    body,
    '--css',
    css,
    '--partials',
    partials,
    '--variables',
    variables,
    '--title',
    c.title ?? '',
    '--metadata',
    JSON.stringify(c.metadata),
    '--pdf-options',
    JSON.stringify({ ...c.pdfOptions }),
  ];
}

describe('document standards through the CLI and the public API', () => {
  it('a template made with --conformance PDF/A-3b --e-invoice --sign renders a signed Factur-X PDF/A-3b', async () => {
    const p12 = join(files, 'signer.p12');
    const password = join(files, 'signer.password');
    await writeFile(p12, pkcs12(pki.signer, [pki.ca], 'e2e secret'));
    await writeFile(password, 'e2e secret\n');
    const certificate = (
      await admin.json(
        'certificate',
        'upload',
        '--workspace',
        workspaceId,
        '--name',
        'Billing',
        '--file',
        p12,
        '--password-file',
        password,
      )
    ).id as string;
    expect(certificate).toMatch(/^crt_[0-9a-f]{24}$/);

    const eInvoice = join(files, 'e-invoice.json');
    await writeFile(eInvoice, JSON.stringify({ standard: 'factur-x', profile: 'EN16931', from: 'invoiceXml' }));
    const created = await admin.json(
      'template',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'Signed e-invoice',
      ...(await invoiceFiles()),
      '--conformance',
      'PDF/A-3b',
      '--e-invoice',
      `@${eInvoice}`,
      '--sign',
      JSON.stringify({ certificate, reason: 'Invoice issued', location: 'Hamburg' }),
      '--outline',
      '--publish',
    );
    const templateId = created.id as string;
    const variables: JsonObject = { ...sampleInvoiceContent().sampleData!, invoiceXml: INVOICE_XML };
    const { path, bytes } = await download(await generate(templateId, variables), 'signed-e-invoice');

    // The catalog: PDF/A-3 identification in the XMP, an sRGB output intent, /AF with the
    // e-invoice as Alternative, a document /ID, and the outline.
    const view = await QpdfView.of(path);
    const catalog = view.catalog;
    expect(catalog['/PageMode']).toBe('/UseOutlines');
    expect(catalog['/Outlines']).toBeDefined();
    expect(catalog['/OutputIntents'] as string[]).toHaveLength(1);
    const af = catalog['/AF'] as string[];
    expect(af).toHaveLength(1);
    const spec = view.dict(af[0]);
    expect(qpdfText(spec['/UF'])).toBe('factur-x.xml');
    expect(spec['/AFRelationship']).toBe('/Alternative');
    expect(view.trailer['/ID'] as string[]).toHaveLength(2);
    const xmp = view.streamData(catalog['/Metadata']).toString('utf8');
    expect(xmp).toMatch(/pdfaid:part(>|=")3/);
    expect(xmp).toMatch(/pdfaid:conformance(>|=")B/);
    expect(xmp).toContain('urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#');

    // The embedded XML is byte for byte what was sent.
    const attached = await detach(path, uniqueRunDir('standards-e2e-detach'));
    expect([...attached.keys()]).toEqual(['factur-x.xml']);
    expect(attached.get('factur-x.xml')!.toString('utf8')).toBe(INVOICE_XML);

    // The signature: valid, the signer named, B-T (a timestamp from the TSA), covering the
    // whole file but the signature itself.
    const sig = await tool('pdfsig', [path]);
    expect(sig).toContain('Signature Validation: Signature is Valid.');
    expect(sig).toContain('Signer Certificate Common Name: Nordlicht Software GmbH Signer');
    expect(sig).toContain('Signature Type: ETSI.CAdES.detached');
    expect(sig).toContain('Total document signed');
    const range = /Signed Ranges: \[0 - (\d+)\], \[(\d+) - (\d+)\]/.exec(sig)!;
    expect(Number(range[3])).toBe(bytes.length);
    expect(bytes.subarray(Number(range[1]), Number(range[2])).toString('latin1')).toMatch(/^<[0-9a-f]+>$/);
    expect(tsa.requests).toBeGreaterThan(0);
    const info = await pdfInfoFields(path);
    expect(info.Title).toBe(`Invoice ${String(variables.invoiceNumber)}`);
  }, 120_000);

  it('a missing `from` variable and invalid CII fail the generation with the reason; no PDF is stored', async () => {
    const eInvoice = JSON.stringify({ standard: 'zugferd', profile: 'EN16931', from: 'invoiceXml' });
    const templateId = (
      await admin.json(
        'template',
        'create',
        '--workspace',
        workspaceId,
        '--name',
        'Unsigned e-invoice',
        ...(await invoiceFiles()),
        '--conformance',
        'PDF/A-3u',
        '--e-invoice',
        eInvoice,
        '--publish',
      )
    ).id as string;
    const values = sampleInvoiceContent().sampleData!;
    const missing = await generate(templateId, values);
    expect(missing).toMatchObject({ status: 'FAILED', outputUrl: null });
    expect(missing.error).toMatch(/invoiceXml/);
    const invalid = await generate(templateId, {
      ...values,
      invoiceXml: INVOICE_XML.replace(
        /<ram:ApplicableHeaderTradeDelivery>[\s\S]*?<\/ram:ApplicableHeaderTradeDelivery>/,
        '',
      ),
    });
    expect(invalid).toMatchObject({ status: 'FAILED', outputUrl: null });
    expect(invalid.error).toMatch(
      /The e-invoice in variable "invoiceXml" is not valid: rule Factur-X 1.07.3 EN16931 XSD/,
    );
    expect(invalid.error).toContain("Element 'ApplicableHeaderTradeSettlement': This element is not expected");
  }, 120_000);

  it("docgen dev's E-invoice (Factur-X EN 16931) sample renders, with factur-x.xml attached", async () => {
    // Stored as `docgen dev` seeds it (src/dev/dev-seed.ts), rendered with its sample data.
    const content = sampleEInvoiceContent();
    const { templates } = stack.app.infrastructure.repositories;
    const { template } = await templates.create(
      parseId('workspace', workspaceId)!,
      'E-invoice (Factur-X EN 16931)',
      content,
    );
    await templates.publish(template._id, 1);
    const { path } = await download(
      await generate(`tpl_${template._id.toHexString()}`, content.sampleData!),
      'dev-e-invoice',
    );
    const attached = await detach(path, uniqueRunDir('standards-e2e-dev'));
    expect([...attached.keys()]).toEqual(['factur-x.xml']);
    const xml = attached.get('factur-x.xml')!.toString('utf8');
    expect(xml).toContain('<ram:ID>INV-2026-00042</ram:ID>');
    expect(xml).toContain('urn:cen.eu:en16931:2017');
    const info = await pdfInfoFields(path);
    expect(info['PDF subtype'] ?? info['PDF version']).toBeDefined();
    expect(await tool('pdftotext', [path, '-'])).toContain('INV-2026-00042');
  }, 120_000);
});
