// The encryption stage: AES-256 with Debian's qpdf, the passwords and permissions of the
// version's pdfOptions.protection. Passwords go through an argument file (mode 0600), never
// the command line.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PdfProtection } from '../../domain/document-settings.ts';
import { RenderError } from '../render-error.ts';

export async function encryptPdf(pdf: Buffer, p: PdfProtection): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'docgen-qpdf-'));
  try {
    const input = join(dir, 'in.pdf');
    const output = join(dir, 'out.pdf');
    const args = join(dir, 'args');
    await writeFile(input, pdf);
    const lines = [
      '--warning-exit-0',
      '--encrypt',
      p.userPassword,
      p.ownerPassword,
      '256',
      `--print=${p.allowPrinting ? 'full' : 'none'}`,
      `--extract=${p.allowCopying ? 'y' : 'n'}`,
      `--modify=${p.allowModifying ? 'all' : 'none'}`,
      '--',
      input,
      output,
    ];
    await writeFile(args, `${lines.join('\n')}\n`, { mode: 0o600 });
    await new Promise<void>((resolve, reject) => {
      execFile('qpdf', [`@${args}`], { timeout: 30_000 }, (err, _stdout, stderr) => {
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
          new RenderError('INTERNAL', 'Encrypting the PDF failed', { cause: new Error(String(stderr).slice(0, 500)) }),
        );
      });
    });
    return await readFile(output);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
