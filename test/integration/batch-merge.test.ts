// A batch's merged PDF, from files (src/batches/pdf-merge.ts), on real parts: the object store
// adapter against s3rver, qpdf, the repositories on the MongoDB stand-in. 30 items of 2 MB each
// merged in chunks of 8 (four parts, then one): the merged PDF has every completed item's pages
// in item order (pdfinfo, pdftotext), leaves out an erased item and an encrypted one, and the
// process does not hold the items' bytes while merging (its memory is sampled throughout).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchProgress } from '../../src/batches/batch-progress.ts';
import { formatId, parseId } from '../../src/domain/ids.ts';
import type { BatchCompletedEvent } from '../../src/queue/messages.ts';
import type { ObjectStore } from '../../src/storage/object-store.ts';
import { objectStoreOn, startS3, uniqueRunDir, type TestS3 } from '../harness/dependencies.ts';
import { startInProcessStack, type InProcessStack } from '../harness/in-process.ts';

let stack: InProcessStack;
let s3: TestS3;
let store: ObjectStore;

beforeAll(async () => {
  [stack, s3] = await Promise.all([startInProcessStack(), startS3()]);
  store = objectStoreOn(s3);
  await store.ensureBucket();
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await s3?.stop();
});

/** An item's PDF: `pages` pages saying which item and page they are, and 2 MB that do not compress. */
async function itemPdf(index: number, pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let p = 1; p <= pages; p++) doc.addPage([300, 200]).drawText(`item ${index} page ${p}`, { x: 20, y: 100, font });
  await doc.attach(randomBytes(2 * 1024 * 1024), 'payload.bin', { mimeType: 'application/octet-stream' });
  return Buffer.from(await doc.save());
}

function pdfinfoPages(file: string): number {
  return Number(/^Pages:\s+(\d+)/m.exec(execFileSync('pdfinfo', [file], { encoding: 'utf8' }))![1]);
}

describe('merging a batch from files', () => {
  it('30 items of 2 MB in chunks of 8: every completed item in order, without holding them in memory', async () => {
    const workspace = await stack.workspace();
    const templateId = await stack.template(workspace);
    const total = 30;
    const batch = await stack.batches.create(stack.principal(workspace), {
      items: Array.from({ length: total }, (_, i) => ({
        templateId,
        variables: { name: `m${i}` },
        format: 'pdf' as const,
      })),
      merge: true,
      itemEvents: false,
    });
    const { generations, batches } = stack.repositories;
    const items = await generations.listBatchItems(batch.id);
    const dir = uniqueRunDir('batch-merge');
    const pagesOf = (i: number) => 1 + (i % 3);
    const erased = 11;
    const encrypted = 20;
    const failed = 25;
    let itemBytes = 0;
    for (const item of items) {
      const i = item.batchIndex!;
      const key = `workspaces/${formatId('workspace', workspace)}/generations/${formatId('generation', item._id)}.pdf`;
      let pdf = await itemPdf(i, pagesOf(i));
      if (i === encrypted) {
        // A version with permissions: owner password only (opens without a password).
        const plain = path.join(dir, 'plain.pdf');
        const locked = path.join(dir, 'locked.pdf');
        writeFileSync(plain, pdf);
        execFileSync('qpdf', ['--encrypt', '', 'owner-secret', '256', '--', plain, locked]);
        pdf = readFileSync(locked);
      }
      itemBytes += pdf.length;
      if (i !== erased) await store.putPdf(key, pdf, { downloadFilename: 'item.pdf' });
      // Rendered: claimed and completed by a worker (the erased one's PDF was removed since).
      const claimed = await generations.claim(item._id, 'merge-test', 60_000);
      expect(claimed).not.toBeNull();
      const done =
        i === failed
          ? await generations.fail(item._id, 'merge-test', 'broken')
          : await generations.complete(item._id, 'merge-test', key, 1);
      expect(done).not.toBeNull();
    }

    const published: BatchCompletedEvent[] = [];
    const merged: { pages?: number } = {};
    const progress = new BatchProgress({
      batches,
      generations,
      store,
      events: {
        async publishBatchEvent(event) {
          published.push(event);
        },
      },
      mergeChunkFiles: 8,
      tempDir: dir,
      onCompleted: (info) => (merged.pages = info.mergedPages),
    });

    // The last item's step finishes the batch (merge included). Memory is sampled meanwhile after
    // a full collection each time: what the process holds, not garbage not yet collected.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    const base = process.memoryUsage();
    let peakExternal = 0;
    let peakHeap = 0;
    const sampler = setInterval(() => {
      gc();
      const m = process.memoryUsage();
      peakExternal = Math.max(peakExternal, m.external + m.arrayBuffers - base.external - base.arrayBuffers);
      peakHeap = Math.max(peakHeap, m.heapUsed - base.heapUsed);
    }, 1000);
    const started = performance.now();
    try {
      for (const item of items) await progress.itemFinal((await generations.get(item._id))!);
    } finally {
      clearInterval(sampler);
    }
    const mergeMs = performance.now() - started;
    console.log(
      `merge of ${total} items (${Math.round(itemBytes / 1e6)} MB) in chunks of 8: ${Math.round(mergeMs)} ms, ` +
        `peak heap +${Math.round(peakHeap / 1e6)} MB, peak external/array buffers +${Math.round(peakExternal / 1e6)} MB`,
    );

    const view = await stack.batches.get(stack.principal(workspace), batch.id);
    expect(view).toMatchObject({ status: 'COMPLETED', completed: total - 1, failed: 1 });
    const summary = await batches.getSummary(parseId('batch', batch.id)!);
    expect(summary?.outputKey).toMatch(/\/batches\/bat_[0-9a-f]{24}\.pdf$/);
    const file = path.join(dir, 'merged.pdf');
    expect(await store.downloadToFile(summary!.outputKey!, file)).toBe(true);

    const included = Array.from({ length: total }, (_, i) => i).filter((i) => ![erased, encrypted, failed].includes(i));
    const expectedPages = included.reduce((n, i) => n + pagesOf(i), 0);
    expect(pdfinfoPages(file)).toBe(expectedPages);
    expect(merged.pages).toBe(expectedPages);
    const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' })
      .split('\f')
      .map((page) => page.trim())
      .filter(Boolean);
    expect(text).toEqual(
      included.flatMap((i) => Array.from({ length: pagesOf(i) }, (_, p) => `item ${i} page ${p + 1}`)),
    );
    expect(published).toHaveLength(1);
    // Bounded: the process never held the 60 MB of items (the merge with pdf-lib held them all,
    // parsed, and the result); what it holds is a few stream buffers.
    expect(peakExternal + Math.max(0, peakHeap)).toBeLessThan(itemBytes / 4);
    // The merge's files are gone.
    expect(readdirSync(dir).filter((f) => f.startsWith('docgen-merge-'))).toEqual([]);
  }, 180_000);
});
