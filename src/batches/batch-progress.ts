// A batch item reached its final state: count it, and when it was the last one, finish the batch
// (merge its PDFs if asked, COMPLETED, one `batch.completed` event).
//
// This runs inside a final generation's event outbox step (render-pipeline.ts publishEvent),
// before the generation's outbox flag is cleared. So if anything here fails or the process dies,
// the outbox sweeper runs the step again, and every step is safe to repeat:
//   - counting: one conditional update of the batch sets the item's slot and increments the
//     count together, so an item already counted matches nothing (batches-repository.ts);
//   - the merge writes the same object under the same key (pdf-merge.ts: from files, with qpdf,
//     so a batch of any size is never held in memory);
//   - COMPLETED is a conditional transition that happens once;
//   - the event's id derives from the batch: JetStream drops a repeated publish within its
//     duplicate window, and the webhook fan-out writes one delivery per event and endpoint
//     whatever the number of publishes.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatId, parseId } from '../domain/ids.ts';
import { batchCompletedEventFor, type BatchCompletedEvent } from '../queue/messages.ts';
import type { BatchesRepository } from '../store/batches-repository.ts';
import type { BatchDoc } from '../store/documents.ts';
import type { FinalEventSource, GenerationsRepository } from '../store/generations-repository.ts';
import type { PutPdfOptions } from '../storage/object-store.ts';
import { isEncryptedPdf, MERGE_CHUNK_FILES, mergePdfFiles, pdfPageCount } from './pdf-merge.ts';

export interface BatchEventPublisher {
  publishBatchEvent(event: BatchCompletedEvent): Promise<void>;
}

/** Item PDFs in and the merged PDF out, through files (never whole in memory). */
export interface BatchPdfStore {
  /** False when there is no such object (erased since it completed); throws when storage fails. */
  downloadToFile(key: string, file: string): Promise<boolean>;
  putPdfFile(key: string, file: string, options: PutPdfOptions): Promise<void>;
}

export interface BatchProgressDeps {
  batches: Pick<BatchesRepository, 'countItem' | 'getSummary' | 'complete' | 'markEventPublished'>;
  generations: Pick<GenerationsRepository, 'listBatchItems'>;
  store: BatchPdfStore;
  events: BatchEventPublisher;
  /** A batch finished (for logs and metrics). */
  onCompleted?: (info: { batchId: string; completed: number; failed: number; mergedPages?: number }) => void;
  /** This process made the batch COMPLETED (once per batch): how long it took from its create. */
  onFinished?: (info: { merge: boolean; seconds: number }) => void;
  /** Where item PDFs are merged (a fresh directory per merge). Default: the OS temp directory. */
  tempDir?: string;
  /** Files one qpdf run merges (the chunk size). Default MERGE_CHUNK_FILES. */
  mergeChunkFiles?: number;
  /** Items left out of a merged PDF because their PDF is encrypted. */
  onSkippedEncrypted?: (info: { batchId: string; generationId: string }) => void;
}

/** Where a batch's merged PDF is stored (next to its workspace's generations). */
export function batchObjectKey(doc: Pick<BatchDoc, '_id' | 'workspaceId'>): string {
  return `workspaces/${formatId('workspace', doc.workspaceId)}/batches/${formatId('batch', doc._id)}.pdf`;
}

export class BatchProgress {
  private readonly deps: BatchProgressDeps;
  constructor(deps: BatchProgressDeps) {
    this.deps = deps;
  }

  /** Counts a final item of a batch (once, however often it is called) and finishes a full batch. */
  async itemFinal(doc: FinalEventSource): Promise<void> {
    const batchId = doc.batchId === undefined ? undefined : parseId('batch', doc.batchId);
    if (!batchId || doc.batchIndex === undefined) return;
    if (doc.status !== 'COMPLETED' && doc.status !== 'FAILED') return;
    const batch =
      (await this.deps.batches.countItem(batchId, doc.batchIndex, doc.status)) ??
      // Counted before (this step is being repeated): the batch as it stands.
      (await this.deps.batches.getSummary(batchId));
    if (batch) await this.finishIfDone(batch);
  }

  /** Every item counted: merge (if asked), COMPLETED, and the event, each step once. */
  async finishIfDone(batch: BatchDoc): Promise<void> {
    if (batch.completed + batch.failed < batch.total) return;
    let current: BatchDoc | null = batch;
    let mergedPages: number | undefined;
    if (current.status !== 'COMPLETED') {
      let key: string | null = null;
      if (current.merge) {
        const merged = await this.merge(current);
        key = merged.key;
        mergedPages = merged.pages;
      }
      const completed = await this.deps.batches.complete(current._id, key);
      if (completed)
        this.deps.onFinished?.({
          merge: completed.merge,
          seconds: Math.max(0, (completed.updatedAt.getTime() - completed.createdAt.getTime()) / 1000),
        });
      current = completed ?? (await this.deps.batches.getSummary(current._id));
    }
    if (!current || current.eventPublished !== false) return;
    const event = batchCompletedEventFor(current);
    await this.deps.events.publishBatchEvent(event);
    await this.deps.batches.markEventPublished(current._id);
    this.deps.onCompleted?.({
      batchId: event.batchId,
      completed: event.completed,
      failed: event.failed,
      ...(mergedPages === undefined ? {} : { mergedPages }),
    });
  }

  /**
   * One PDF of every completed item's pages, in item order, stored under the batch's key. The
   * items are streamed to files a chunk at a time and merged with qpdf (pdf-merge.ts): memory
   * stays bounded, disk holds at most a chunk of items plus the parts merged so far.
   */
  private async merge(batch: BatchDoc): Promise<{ key: string | null; pages: number }> {
    const batchId = formatId('batch', batch._id);
    const items = await this.deps.generations.listBatchItems(batchId);
    const dir = await mkdtemp(join(this.deps.tempDir ?? tmpdir(), 'docgen-merge-'));
    // At least two: the rounds of parts must shrink.
    const chunkFiles = Math.max(2, this.deps.mergeChunkFiles ?? MERGE_CHUNK_FILES);
    try {
      let parts: string[] = [];
      let chunk: string[] = [];
      const mergeChunk = async () => {
        if (chunk.length === 0) return;
        const part = join(dir, `part-0-${parts.length}.pdf`);
        await mergePdfFiles(chunk, part, dir);
        await Promise.all(chunk.map((file) => rm(file, { force: true })));
        parts.push(part);
        chunk = [];
      };
      for (const item of items) {
        if (item.status !== 'COMPLETED' || !item.outputKey) continue;
        const file = join(dir, `item-${item.batchIndex ?? 0}.pdf`);
        // Erased since it completed (right to erasure, retention): it is left out.
        if (!(await this.deps.store.downloadToFile(item.outputKey, file))) continue;
        if (await isEncryptedPdf(file)) {
          // A protected item's pages would lose their protection in an open merged document.
          await rm(file, { force: true });
          this.deps.onSkippedEncrypted?.({ batchId, generationId: formatId('generation', item._id) });
          continue;
        }
        chunk.push(file);
        if (chunk.length === chunkFiles) await mergeChunk();
      }
      await mergeChunk();
      // No item completed: there is no document to show (outputUrl stays null).
      if (parts.length === 0) return { key: null, pages: 0 };
      // Parts merged by the same rule until one is left (two rounds up to 10,000 items).
      for (let round = 1; parts.length > 1; round++) {
        const next: string[] = [];
        for (let i = 0; i < parts.length; i += chunkFiles) {
          const group = parts.slice(i, i + chunkFiles);
          const merged = join(dir, `part-${round}-${next.length}.pdf`);
          await mergePdfFiles(group, merged, dir);
          await Promise.all(group.map((file) => rm(file, { force: true })));
          next.push(merged);
        }
        parts = next;
      }
      const result = parts[0]!;
      const pages = await pdfPageCount(result);
      const key = batchObjectKey(batch);
      await this.deps.store.putPdfFile(key, result, { downloadFilename: `${batchId}.pdf` });
      return { key, pages };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
