// A batch item reached its final state: count it, and when it was the last one, finish the batch
// (merge its PDFs if asked, COMPLETED, one `batch.completed` event).
//
// This runs inside a final generation's event outbox step (render-pipeline.ts publishEvent),
// before the generation's outbox flag is cleared. So if anything here fails or the process dies,
// the outbox sweeper runs the step again, and every step is safe to repeat:
//   - counting: one conditional update of the batch sets the item's slot and increments the
//     count together, so an item already counted matches nothing (batches-repository.ts);
//   - the merge writes the same object under the same key;
//   - COMPLETED is a conditional transition that happens once;
//   - the event's id derives from the batch: JetStream drops a repeated publish within its
//     duplicate window, and the webhook fan-out writes one delivery per event and endpoint
//     whatever the number of publishes.
import { PDFDocument } from 'pdf-lib';
import { formatId, parseId } from '../domain/ids.ts';
import { batchCompletedEventFor, type BatchCompletedEvent } from '../queue/messages.ts';
import type { BatchesRepository } from '../store/batches-repository.ts';
import type { BatchDoc } from '../store/documents.ts';
import type { FinalEventSource, GenerationsRepository } from '../store/generations-repository.ts';

export interface BatchEventPublisher {
  publishBatchEvent(event: BatchCompletedEvent): Promise<void>;
}

export interface BatchPdfStore {
  getObject(key: string): Promise<Buffer>;
  exists(key: string): Promise<boolean>;
  putPdf(key: string, pdf: Buffer, options: { downloadFilename: string }): Promise<void>;
}

export interface BatchProgressDeps {
  batches: Pick<BatchesRepository, 'countItem' | 'getSummary' | 'complete' | 'markEventPublished'>;
  generations: Pick<GenerationsRepository, 'listBatchItems'>;
  store: BatchPdfStore;
  events: BatchEventPublisher;
  /** A batch finished (for logs and metrics). */
  onCompleted?: (info: { batchId: string; completed: number; failed: number; mergedPages?: number }) => void;
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
      current =
        (await this.deps.batches.complete(current._id, key)) ?? (await this.deps.batches.getSummary(current._id));
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

  /** One PDF of every completed item's pages, in item order, stored under the batch's key. */
  private async merge(batch: BatchDoc): Promise<{ key: string | null; pages: number }> {
    const items = await this.deps.generations.listBatchItems(formatId('batch', batch._id));
    const merged = await PDFDocument.create();
    for (const item of items) {
      if (item.status !== 'COMPLETED' || !item.outputKey) continue;
      const bytes = await this.readItemPdf(item.outputKey);
      // Erased since it completed (right to erasure, retention): it is left out.
      if (!bytes) continue;
      const source = await PDFDocument.load(bytes, { updateMetadata: false });
      const pages = await merged.copyPages(source, source.getPageIndices());
      for (const page of pages) merged.addPage(page);
    }
    // No item completed: there is no document to show (outputUrl stays null).
    if (merged.getPageCount() === 0) return { key: null, pages: 0 };
    const key = batchObjectKey(batch);
    await this.deps.store.putPdf(key, Buffer.from(await merged.save()), {
      downloadFilename: `${formatId('batch', batch._id)}.pdf`,
    });
    return { key, pages: merged.getPageCount() };
  }

  private async readItemPdf(key: string): Promise<Buffer | null> {
    try {
      return await this.deps.store.getObject(key);
    } catch (err) {
      // Storage that fails is retried with the whole step; a PDF that is gone is not coming back.
      if (await this.deps.store.exists(key)) throw err;
      return null;
    }
  }
}
