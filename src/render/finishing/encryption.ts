// The encryption stage: AES-256 with Debian's qpdf, the passwords and permissions of the
// version's pdfOptions.protection. qpdf reads the whole job from a JSON file (mode 0600): the
// passwords are JSON strings there, so any text is a password (one starting with '-' is not
// taken for an option, as it would be by `--encrypt USER OWNER 256`; the `--user-password=`
// forms exist only from qpdf 11.7, Debian 12 has 11.3), and never on a command line that `ps` shows.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PdfProtection } from '../../domain/document-settings.ts';
import { childEnvironment } from '../child-environment.ts';
import { RenderError } from '../render-error.ts';

/** qpdf's job (qpdf --job-json-help) for encrypting `input` into `output`. */
export function encryptionJob(p: PdfProtection, input: string, output: string): Record<string, unknown> {
  return {
    inputFile: input,
    outputFile: output,
    warningExit0: '',
    encrypt: {
      userPassword: p.userPassword,
      ownerPassword: p.ownerPassword,
      '256bit': {
        print: p.allowPrinting ? 'full' : 'none',
        extract: p.allowCopying ? 'y' : 'n',
        modify: p.allowModifying ? 'all' : 'none',
      },
    },
  };
}

export async function encryptPdf(pdf: Buffer, p: PdfProtection): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'docgen-qpdf-'));
  try {
    const input = join(dir, 'in.pdf');
    const output = join(dir, 'out.pdf');
    const job = join(dir, 'job.json');
    await writeFile(input, pdf);
    await writeFile(job, JSON.stringify(encryptionJob(p, input, output)), { mode: 0o600 });
    await new Promise<void>((resolve, reject) => {
      execFile(
        'qpdf',
        [`--job-json-file=${job}`],
        { timeout: 30_000, env: childEnvironment() },
        (err, _stdout, stderr) => {
          if (!err) return resolve();
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
            return reject(
              new RenderError(
                'INTERNAL',
                'PDF protection needs qpdf, which is not installed on the render host (Debian package qpdf)',
              ),
            );
          }
          reject(
            new RenderError('INTERNAL', 'Encrypting the PDF failed', {
              cause: new Error(String(stderr).slice(0, 500)),
            }),
          );
        },
      );
    });
    return await readFile(output);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
