// `docgen admin certificate …`: workspace signing certificates (PKCS#12), which template
// versions sign with (`--sign '{"certificate": "crt_…"}'`). The password is read from a file,
// never from the command line (where `ps` and shell history would show it).
import { readFile } from 'node:fs/promises';
import type { Certificate } from '../../gen/docgen/admin/v1/certificate_pb.js';
import { need, page, PAGE_OPTIONS, str, UsageError, type Command } from './command.ts';
import { iso, more, table, time } from './output.ts';

async function readFlagFile(flag: string, path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new UsageError(
      `${flag} ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
    );
  }
}

export const certificateCommands: Command[] = [
  {
    path: ['certificate', 'upload'],
    synopsis: '--workspace WS_ID --name NAME --file SIGNER.p12 --password-file FILE',
    summary:
      'Upload a signing certificate (PKCS#12 .p12/.pfx with its private key); prints its crt_… id. The key is stored encrypted and never returned.',
    positionals: [],
    options: {
      workspace: { type: 'string' },
      name: { type: 'string' },
      file: { type: 'string' },
      'password-file': { type: 'string' },
    },
    required: ['workspace', 'name', 'file', 'password-file'],
    async run({ values, clients, print }) {
      const pkcs12 = await readFlagFile('--file', str(values.file));
      // One trailing line break is what `echo … > FILE` leaves; it is not part of the password.
      const password = (await readFlagFile('--password-file', str(values['password-file'])))
        .toString('utf8')
        .replace(/\r?\n$/, '');
      const res = await clients.certificates.uploadCertificate({
        workspaceId: str(values.workspace),
        name: str(values.name),
        pkcs12,
        password,
      });
      const c = need(res.certificate);
      print(
        certificateJson(c),
        `Uploaded certificate ${c.id} ${c.name}: ${c.subject}, valid until ${time(c.notAfter)}; sign with --sign '{"certificate": "${c.id}"}'`,
      );
    },
  },
  {
    path: ['certificate', 'list'],
    synopsis: '--workspace WS_ID [--page-size N] [--page-token TOKEN]',
    summary: "List a workspace's signing certificates by name: subject, issuer, validity.",
    positionals: [],
    options: { workspace: { type: 'string' }, ...PAGE_OPTIONS },
    required: ['workspace'],
    async run({ values, clients, print }) {
      const res = await clients.certificates.listCertificates({ workspaceId: str(values.workspace), ...page(values) });
      print(
        { certificates: res.certificates.map(certificateJson), nextPageToken: res.nextPageToken || null },
        table(
          ['ID', 'NAME', 'SUBJECT', 'ISSUER', 'VALID FROM', 'VALID UNTIL'],
          res.certificates.map((c) => [c.id, c.name, c.subject, c.issuer, time(c.notBefore), time(c.notAfter)]),
        ) + more(res.nextPageToken),
      );
    },
  },
  {
    path: ['certificate', 'delete'],
    synopsis: 'CRT_ID',
    summary: 'Delete a signing certificate and its key; versions that sign with it fail to render.',
    positionals: ['CRT_ID'],
    options: {},
    async run({ args, clients, print }) {
      await clients.certificates.deleteCertificate({ id: args[0]! });
      print({ id: args[0], deleted: true }, `Deleted certificate ${args[0]}`);
    },
  },
];

function certificateJson(c: Certificate) {
  return {
    id: c.id,
    workspaceId: c.workspaceId,
    name: c.name,
    subject: c.subject,
    issuer: c.issuer,
    notBefore: iso(c.notBefore),
    notAfter: iso(c.notAfter),
    serialNumber: c.serialNumber,
    fingerprintSha256: c.fingerprintSha256,
    chainLength: c.chainLength,
    createdAt: iso(c.createdAt),
  };
}
