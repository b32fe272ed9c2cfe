// Document standards through the admin API and the CLI (docs/templates.md#document-standards):
// every setting set with its `docgen admin template` flag comes back from GetTemplateVersion
// and `template version get`; bad input is refused naming the flag or the field, and nothing
// is stored; signing certificates upload (PKCS#12), list and delete, their keys sealed at rest.
// In process on the admin routes (the real composition) and the MongoDB stand-in.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Code, ConnectError } from '@connectrpc/connect';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessCli } from '../harness/admin-cli.ts';
import { startAdminInProcess, type AdminInProcess } from '../harness/admin-in-process.ts';
import { pkcs12, testPki } from '../harness/signing-certificates.ts';
import { COLLECTIONS } from '../../src/store/documents.ts';
import { createCertificateSource } from '../../src/render/finishing/certificate-store.ts';

let admin: AdminInProcess;
let files: string;
let body: string;
let vars: string;

beforeAll(async () => {
  admin = await startAdminInProcess();
  files = await mkdtemp(join(tmpdir(), 'docgen-standards-'));
  body = join(files, 'invoice.liquid');
  vars = join(files, 'vars.json');
  await writeFile(body, '<h1>Invoice {{ number }}</h1><h2>Items</h2><p>{{ invoiceXml | size }}</p>');
  await writeFile(vars, JSON.stringify({ number: { required: true }, invoiceXml: { required: true } }));
});

afterAll(async () => {
  await admin?.close();
});

const { cli, json } = inProcessCli({ clients: () => admin.operatorClients });

async function templatesOf(ws: string) {
  return (await admin.clients.templates.listTemplates({ workspaceId: ws }, admin.operator)).templates;
}

describe('document settings through the CLI and the admin API', () => {
  it('round-trips every setting: flags in, GetTemplateVersion and `template version get` out', async () => {
    const ws = await admin.workspace();
    const eInvoiceFile = join(files, 'e-invoice.json');
    await writeFile(eInvoiceFile, JSON.stringify({ standard: 'factur-x', profile: 'EN16931', from: 'invoiceXml' }));
    const created = await json(
      'template',
      'create',
      '--workspace',
      ws,
      '--name',
      'Invoice',
      '--file',
      body,
      '--variables',
      vars,
      '--title',
      'Invoice {{ number }}',
      '--conformance',
      'pdf/a-3b, PDF/UA-1',
      '--e-invoice',
      `@${eInvoiceFile}`,
      '--sign',
      '{"certificate": "crt_abc123", "reason": "Approved", "location": "Hamburg"}',
      '--stamp',
      '{"text": "DRAFT", "opacity": 0.2, "angle": 0, "firstPageOnly": true}',
      '--outline',
      '--attach',
      'terms.pdf, logo.png',
    );
    const templateId = created.id as string;

    const { version } = await admin.clients.templates.getTemplateVersion({ templateId, version: 1 }, admin.operator);
    const c = version!.content!;
    expect(c.conformance).toEqual(['PDF/A-3b', 'PDF/UA-1']);
    expect(c.eInvoice).toMatchObject({ standard: 'factur-x', profile: 'EN16931', from: 'invoiceXml' });
    expect(c.sign).toMatchObject({ certificate: 'crt_abc123', reason: 'Approved', location: 'Hamburg' });
    // An angle of 0 is kept (0 is a valid angle, not "unset").
    expect(c.stamp).toMatchObject({ text: 'DRAFT', opacity: 0.2, angle: 0, firstPageOnly: true });
    expect(c.outline).toBe(true);
    expect(c.attachments).toEqual(['terms.pdf', 'logo.png']);

    const shown = await json('template', 'version', 'get', templateId, '--version', '1');
    expect(shown.content).toMatchObject({
      conformance: ['PDF/A-3b', 'PDF/UA-1'],
      eInvoice: { standard: 'factur-x', profile: 'EN16931', from: 'invoiceXml' },
      sign: { certificate: 'crt_abc123', reason: 'Approved', location: 'Hamburg' },
      stamp: { text: 'DRAFT', opacity: 0.2, angle: 0, firstPageOnly: true },
      outline: true,
      attachments: ['terms.pdf', 'logo.png'],
    });
    const human = await cli('template', 'version', 'get', templateId, '--version', '1');
    expect(human.stdout).toMatch(
      /^standards: +PDF\/A-3b, PDF\/UA-1; e-invoice factur-x EN16931 from invoiceXml; signed with crt_abc123; stamp "DRAFT"; outline; attaches terms.pdf, logo.png$/m,
    );

    // The BASIC view of the history keeps them; a new version without flags has none.
    const [listed] = (await admin.clients.templates.listTemplateVersions({ templateId, view: 1 }, admin.operator))
      .versions;
    expect(listed!.content!.conformance).toEqual(['PDF/A-3b', 'PDF/UA-1']);
    await json('template', 'version', 'add', templateId, '--file', body, '--variables', vars);
    const plain = await json('template', 'version', 'get', templateId, '--version', '2');
    expect(plain.content).toMatchObject({
      conformance: [],
      eInvoice: null,
      sign: null,
      stamp: null,
      outline: false,
      attachments: [],
    });
    // Defaults of a stamp given only its text.
    await json(
      'template',
      'version',
      'add',
      templateId,
      '--file',
      body,
      '--variables',
      vars,
      '--stamp',
      '{"text":"COPY"}',
    );
    const stamped = await json('template', 'version', 'get', templateId, '--version', '3');
    expect(stamped.content).toMatchObject({ stamp: { text: 'COPY', opacity: 0.15, angle: 45, firstPageOnly: false } });
  });

  it('refuses bad flag values naming the flag, before sending anything', async () => {
    const ws = await admin.workspace();
    const base = ['template', 'create', '--workspace', ws, '--name', 'Bad', '--file', body, '--variables', vars];
    const cases: Array<[string[], RegExp]> = [
      [['--conformance', 'PDF/A-1b'], /--conformance: conformance "PDF\/A-1b" is not supported; use any of PDF\/A-2b/],
      [['--conformance', 'PDF/A-2b,PDF/A-3b'], /--conformance: .*pick one/],
      [['--conformance', ' , '], /--conformance: name at least one level/],
      [
        ['--e-invoice', '{"standard":"factur-x","profile":"COMFORT","from":"x"}'],
        /--e-invoice: eInvoice.profile "COMFORT"/,
      ],
      [['--e-invoice', '{"standard":"ubl","profile":"EN16931","from":"x"}'], /--e-invoice: eInvoice.standard "ubl"/],
      [['--e-invoice', 'factur-x'], /--e-invoice: not valid JSON/],
      [['--e-invoice', '{"standard":"factur-x","profile":"EN16931","form":"x"}'], /--e-invoice: unknown field "form"/],
      [
        ['--sign', '{"certificate":"signer.p12"}'],
        /--sign: sign.certificate "signer.p12" must be a certificate id \(crt_…\)/,
      ],
      [['--stamp', '{"text":"DRAFT","opacity":2}'], /--stamp: stamp.opacity 2 is out of range/],
      [['--stamp', '{"text":""}'], /--stamp: stamp.text must be a non-empty string/],
      [['--attach', 'a.png,a.png'], /--attach: attachments lists "a.png" twice/],
    ];
    for (const [flags, message] of cases) {
      const result = await cli(...base, ...flags);
      expect(result.code, flags.join(' ')).toBe(2);
      expect(result.stderr, flags.join(' ')).toMatch(message);
    }
    expect(await templatesOf(ws)).toEqual([]);
  });

  it('refuses combinations that cannot hold with a clear error, and stores nothing', async () => {
    const ws = await admin.workspace();
    const base = ['template', 'create', '--workspace', ws, '--name', 'Refused', '--file', body, '--variables', vars];
    const cases: Array<[string[], RegExp]> = [
      [
        ['--conformance', 'PDF/A-2b', '--pdf-options', '{"protection":{"ownerPassword":"owner-secret"}}'],
        /content\.conformance: PDF\/A forbids encryption \(ISO 19005-2 6\.1\.3\): remove pdfOptions\.protection or the PDF\/A conformance level/,
      ],
      [['--conformance', 'PDF/UA-1'], /PDF\/UA-1 needs a document title \(ISO 14289-1 7\.1\): set the version title/],
      [
        ['--conformance', 'PDF/A-3b', '--e-invoice', '{"standard":"factur-x","profile":"EN16931","from":"invoice"}'],
        /content\.eInvoice: eInvoice\.from names "invoice", which is not a declared variable/,
      ],
      [
        ['--e-invoice', '{"standard":"zugferd","profile":"BASIC","from":"invoiceXml"}'],
        /an e-invoice is embedded in a PDF\/A-3 document: add PDF\/A-3b/,
      ],
      [['--conformance', 'PDF/A-2u', '--attach', 'terms.pdf'], /PDF\/A-2 accepts only PDF\/A files as attachments/],
    ];
    for (const [flags, message] of cases) {
      const result = await cli(...base, ...flags);
      expect(result.code, flags.join(' ')).toBe(1);
      expect(result.stderr, flags.join(' ')).toMatch(message);
    }
    expect(await templatesOf(ws)).toEqual([]);
  });

  it('the admin API names the field of a bad setting and stores nothing', async () => {
    const ws = await admin.workspace();
    const err = await admin.clients.templates
      .createTemplate(
        {
          workspaceId: ws,
          name: 'Api',
          content: {
            body: '<p>x</p>',
            conformance: ['PDF/A-3b', 'PDF/X-4'],
            stamp: { text: 'DRAFT', angle: 720 },
          },
        },
        admin.operator,
      )
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    expect(err?.code).toBe(Code.InvalidArgument);
    expect(err?.rawMessage).toContain('content.conformance: conformance "PDF/X-4" is not supported');
    expect(err?.rawMessage).toContain('content.stamp.angle: stamp.angle 720 is out of range');
    expect(await templatesOf(ws)).toEqual([]);
    expect(admin.internal).toEqual([]);
  });

  it('attaches workspace assets, PDFs included: publishing needs them uploaded', async () => {
    const ws = await admin.workspace();
    const terms = join(files, 'terms.pdf');
    const doc = await PDFDocument.create();
    doc.addPage().drawText('Terms and conditions');
    await writeFile(terms, await doc.save());
    const uploaded = await json('asset', 'upload', '--workspace', ws, '--file', terms);
    expect(uploaded).toMatchObject({ name: 'terms.pdf', contentType: 'application/pdf', kind: 'document' });
    const created = await cli(
      'template',
      'create',
      '--workspace',
      ws,
      '--name',
      'With terms',
      '--file',
      body,
      '--variables',
      vars,
      '--conformance',
      'PDF/A-3b',
      '--attach',
      'terms.pdf',
      '--publish',
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
  });

  it('publishing checks that attachments exist as workspace assets', async () => {
    const ws = await admin.workspace();
    const result = await cli(
      'template',
      'create',
      '--workspace',
      ws,
      '--name',
      'Attached',
      '--file',
      body,
      '--variables',
      vars,
      '--attach',
      'terms.pdf',
      '--publish',
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/attachments names "terms.pdf" but the workspace has no asset of that name/);
    expect(await templatesOf(ws)).toEqual([]);
  });
});

describe('signing certificates', () => {
  const pki = testPki();
  const PASSWORD = 'correct horse battery';

  async function p12Files(name: string, cert = pki.signer) {
    const file = join(files, `${name}.p12`);
    const passwordFile = join(files, `${name}.password`);
    await writeFile(file, pkcs12(cert, [pki.ca], PASSWORD));
    await writeFile(passwordFile, `${PASSWORD}\n`);
    return { file, passwordFile };
  }

  it('uploads with the CLI (crt_…), lists subject, issuer and validity, never the key, and deletes', async () => {
    const ws = await admin.workspace();
    const { file, passwordFile } = await p12Files('signer');
    const human = await cli(
      'certificate',
      'upload',
      '--workspace',
      ws,
      '--name',
      'Company seal',
      '--file',
      file,
      '--password-file',
      passwordFile,
    );
    expect(human.stderr).toBe('');
    expect(human.stdout).toMatch(
      /^Uploaded certificate crt_[0-9a-f]{24} Company seal: CN=Nordlicht Software GmbH Signer, O=docgen tests, valid until /,
    );
    const id = /crt_[0-9a-f]{24}/.exec(human.stdout)![0];

    const listed = await json('certificate', 'list', '--workspace', ws);
    expect(listed.certificates).toEqual([
      expect.objectContaining({
        id,
        name: 'Company seal',
        subject: 'CN=Nordlicht Software GmbH Signer, O=docgen tests',
        issuer: 'CN=docgen Test CA, O=docgen tests',
        notBefore: pki.signer.cert.validity.notBefore.toISOString().replace(/\.\d{3}Z$/, '.000Z'),
        chainLength: 1,
      }),
    ]);
    const table = await cli('certificate', 'list', '--workspace', ws);
    expect(table.stdout).toMatch(/^ID +NAME +SUBJECT +ISSUER +VALID FROM +VALID UNTIL$/m);
    expect(table.stdout).toContain('CN=docgen Test CA, O=docgen tests');

    // At rest: the key sealed (no PEM, no password), the file not kept.
    const rows = await admin.stack.db.collection(COLLECTIONS.certificates).find({}).toArray();
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain('PRIVATE KEY');
    expect(stored).not.toContain(PASSWORD);
    expect(stored).not.toContain(
      Buffer.from(pkcs12(pki.signer, [pki.ca], PASSWORD))
        .toString('base64')
        .slice(0, 40),
    );
    // What the render side unseals is the signer's key.
    const identity = await createCertificateSource({
      certificates: admin.repositories.certificates,
      secretKey: admin.secretKey,
    }).identity(ws, id);
    expect(identity.certificate.checkPrivateKey(identity.key)).toBe(true);
    await expect(
      createCertificateSource({ certificates: admin.repositories.certificates, secretKey: admin.secretKey }).identity(
        await admin.workspace(),
        id,
      ),
    ).rejects.toThrow(/does not exist in this workspace/);

    // A signed version publishes while the certificate exists, and not once it is deleted.
    const signed = await cli(
      'template',
      'create',
      '--workspace',
      ws,
      '--name',
      'Signed',
      '--file',
      body,
      '--variables',
      vars,
      '--sign',
      JSON.stringify({ certificate: id, reason: 'Approved' }),
      '--publish',
    );
    expect(signed.stderr).toBe('');
    expect(await cli('certificate', 'delete', id)).toMatchObject({ code: 0, stdout: `Deleted certificate ${id}\n` });
    expect((await json('certificate', 'list', '--workspace', ws)).certificates).toEqual([]);
    const again = await cli(
      'template',
      'create',
      '--workspace',
      ws,
      '--name',
      'Signed again',
      '--file',
      body,
      '--variables',
      vars,
      '--sign',
      JSON.stringify({ certificate: id }),
      '--publish',
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`sign.certificate names "${id}", which is not a certificate of this workspace`);
    expect(await cli('certificate', 'delete', id)).toMatchObject({ code: 1 });
  });

  it('refuses a wrong password, an expired certificate, a taken name and a file that is no PKCS#12; stores nothing', async () => {
    const ws = await admin.workspace();
    const { file, passwordFile } = await p12Files('refused');
    const wrongPassword = join(files, 'wrong.password');
    await writeFile(wrongPassword, 'Tr0ub4dor&3');
    const expired = await p12Files('expired', pki.expired);
    const notP12 = join(files, 'not.p12');
    await writeFile(notP12, '-----BEGIN CERTIFICATE-----\n');
    const upload = (name: string, f: string, p: string) =>
      cli('certificate', 'upload', '--workspace', ws, '--name', name, '--file', f, '--password-file', p);

    const wrong = await upload('Seal', file, wrongPassword);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/The certificate password is wrong: the PKCS#12 file could not be opened with it/);
    const old = await upload('Seal', expired.file, expired.passwordFile);
    expect(old.code).toBe(1);
    expect(old.stderr).toMatch(/The certificate expired on \d{4}-\d{2}-\d{2}; upload a current certificate/);
    const garbage = await upload('Seal', notP12, passwordFile);
    expect(garbage.code).toBe(1);
    expect(garbage.stderr).toMatch(/not a readable PKCS#12/);
    expect((await json('certificate', 'list', '--workspace', ws)).certificates).toEqual([]);
    expect(await admin.stack.db.collection(COLLECTIONS.certificates).countDocuments({})).toBe(
      await admin.stack.db.collection(COLLECTIONS.certificateNames).countDocuments({}),
    );

    expect((await upload('Seal', file, passwordFile)).code).toBe(0);
    const taken = await upload('Seal', file, passwordFile);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/A certificate named "Seal" already exists in this workspace/);
    expect((await json('certificate', 'list', '--workspace', ws)).certificates).toHaveLength(1);

    const missing = await cli('certificate', 'upload', '--workspace', ws, '--name', 'x', '--file', file);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--password-file is required');
    expect(admin.internal).toEqual([]);
  });
});
