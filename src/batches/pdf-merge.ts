// Merging a batch's PDFs from files with Debian's qpdf, so the render process never holds them
// in memory: the item PDFs are streamed from storage into a temporary directory a chunk at a
// time, each chunk is merged into a part file (and its inputs deleted), and the parts into the
// result, which is streamed to storage. Node's memory stays a few stream buffers whatever the
// batch's size; qpdf copies page objects and reads stream data from its input files while it
// writes, and never has more than MERGE_CHUNK_FILES inputs (or parts) open.
//
// The job goes to qpdf as a JSON file (qpdf --job-json-file), not a command line: thousands of
// file names would not fit in one.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { childEnvironment } from '../render/child-environment.ts';

/** Files one qpdf run merges at most. */
export const MERGE_CHUNK_FILES = 100;
const QPDF_TIMEOUT_MS = 120_000;

interface QpdfResult {
  code: number;
  stdout: string;
  stderr: string;
}

function qpdf(args: string[]): Promise<QpdfResult> {
  return new Promise((resolve, reject) => {
    execFile(
      'qpdf',
      args,
      { timeout: QPDF_TIMEOUT_MS, env: childEnvironment(), maxBuffer: 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
          return reject(
            new Error('Merging a batch needs qpdf, which is not installed on the render host (Debian package qpdf)'),
          );
        }
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

/**
 * Whether a PDF is encrypted (a version with a password or permissions). Such an item is left
 * out of the merged PDF: merging would either fail (an open password) or write its pages into
 * a document without its protection.
 */
export async function isEncryptedPdf(file: string): Promise<boolean> {
  const r = await qpdf(['--is-encrypted', file]);
  // qpdf --is-encrypted: 0 encrypted, 2 not; anything else is a broken file.
  if (r.code === 0) return true;
  if (r.code === 2) return false;
  throw new Error(`qpdf could not read ${file}: ${r.stderr.slice(0, 300)}`);
}

/** The page count, as qpdf reads it. */
export async function pdfPageCount(file: string): Promise<number> {
  const r = await qpdf(['--show-npages', file]);
  const pages = Number(r.stdout.trim());
  if (r.code !== 0 || !Number.isInteger(pages))
    throw new Error(`qpdf could not count the pages of ${file}: ${r.stderr.slice(0, 300)}`);
  return pages;
}

/** All pages of `inputs`, in order, into `output` (one qpdf run; at most MERGE_CHUNK_FILES inputs). */
export async function mergePdfFiles(inputs: readonly string[], output: string, jobDir: string): Promise<void> {
  const job = join(jobDir, `merge-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(
    job,
    JSON.stringify({
      empty: '',
      outputFile: output,
      // Warnings (a damaged but readable input) do not fail the merge.
      warningExit0: '',
      pages: inputs.map((file) => ({ file })),
    }),
  );
  const r = await qpdf([`--job-json-file=${job}`]);
  if (r.code !== 0)
    throw new Error(`qpdf could not merge ${inputs.length} PDFs: ${(r.stderr || r.stdout).slice(0, 500)}`);
}
