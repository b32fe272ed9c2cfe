// Document standards through the admin API and the CLI (docs/templates.md#document-standards):
// every setting set with its `docgen admin template` flag comes back from GetTemplateVersion
// and `template version get`; bad input is refused naming the flag or the field, and nothing
// is stored. In process on the admin routes (the real composition) and the MongoDB stand-in.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Code, ConnectError } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessCli } from '../harness/admin-cli.ts';
import { startAdminInProcess, type AdminInProcess } from '../harness/admin-in-process.ts';

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
