// What Chromium's printer cannot do itself, done on the printed PDF, and only when a version
// asks for it (a plain render pays nothing): a first page with its own header/footer (its page
// drawing taken from a second print), Author/Subject/Keywords (pdf-lib), and encryption (Debian's
// qpdf, AES-256). The Title comes from the document's <title>, /Lang from <html lang>: Chromium
// writes both, and tagging (the structure tree) is left as Chromium made it.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument, PDFName } from 'pdf-lib';
import type { DocumentMetadata, PdfProtection } from '../domain/document-settings.ts';
import { RenderError } from './render-error.ts';

export interface FinishOptions {
  metadata: DocumentMetadata;
  protection?: PdfProtection | null | undefined;
  /** The same document printed with the first-page header/footer: its page 1 replaces page 1. */
  firstPage?: Buffer | undefined;
}

export function needsFinishing(options: FinishOptions): boolean {
  const m = options.metadata;
  return (
    options.firstPage !== undefined ||
    Boolean(options.protection) ||
    m.author !== '' ||
    m.subject !== '' ||
    m.keywords !== ''
  );
}

export async function finishPdf(pdf: Buffer, options: FinishOptions): Promise<Buffer> {
  let out = pdf;
  const m = options.metadata;
  if (options.firstPage !== undefined || m.author !== '' || m.subject !== '' || m.keywords !== '') {
    const doc = await PDFDocument.load(pdf, { updateMetadata: false });
    if (options.firstPage !== undefined && doc.getPageCount() > 0) {
      // The page object stays (the structure tree points at it, and its marked content is the
      // same in both prints of the same HTML); it takes the other print's drawing.
      const first = await PDFDocument.load(options.firstPage, { updateMetadata: false });
      const [copied] = await doc.copyPages(first, [0]);
      const target = doc.getPage(0).node;
      for (const key of ['Contents', 'Resources']) {
        const value = copied!.node.get(PDFName.of(key));
        if (value !== undefined) target.set(PDFName.of(key), value);
      }
    }
    if (m.author !== '') doc.setAuthor(m.author);
    if (m.subject !== '') doc.setSubject(m.subject);
    if (m.keywords !== '')
      doc.setKeywords(
        m.keywords
          .split(',')
          .map((k) => k.trim())
          .filter(Boolean),
      );
    out = Buffer.from(await doc.save({ updateFieldAppearances: false }));
  }
  if (options.protection) out = await encryptPdf(out, options.protection);
  return out;
}

/** AES-256 encryption with qpdf; passwords go through an argument file, never the command line. */
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
