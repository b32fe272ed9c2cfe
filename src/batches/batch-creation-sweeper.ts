// Finishes batch creates cut off by a crash (docs/architecture.md#batches-cut-off-by-a-crash).
//
// A create writes the batch row (with its resolved request kept in it), then the items, then
// itemsStored. An API process that dies in between leaves a batch with itemsStored false: some
// of its items exist (the outbox sweeper publishes their jobs like any generation's), the rest
// do not, so the batch would never complete. Past a grace period (a create that is merely slow
// finishes on its own well within it) this sweeper finishes the create from the kept request,
// with the same steps the request takes (batch-items.ts): the items that are missing are written
// under their derived ids, itemsStored is set, the jobs are published. The batch then renders
// and completes as if the request had not been cut off: a create that reached the database is
// carried out, as a single generation's is (its row is rendered even when the client never got
// the answer), and a retry with the same Idempotency-Key gets the same batch.
//
// A batch without a kept request (written before it existed, or too large to keep) cannot be
// finished: the items that were never stored are counted FAILED, and the batch completes with
// the ones that were (one batch.completed, as always).
//
// Leader-free and without transactions: every render replica sweeps on its own timer, and an
// API process still writing the same batch may race it; each step is idempotent (derived _ids,
// a conditional itemsStored, a job id JetStream de-duplicates, an item's counting slot), so
// whoever writes first wins and the others change nothing.
import { DEFAULT_BATCH_CREATION_GRACE_MS } from '../config/limits.ts';
import { formatId } from '../domain/ids.ts';
import type { RenderJobPublisher } from '../generations/generation-service.ts';
import { PeriodicTask } from '../ops/periodic-task.ts';
import type { BatchesRepository, UnstoredBatch } from '../store/batches-repository.ts';
import type { GenerationsRepository } from '../store/generations-repository.ts';
import type { BatchProgress } from './batch-progress.ts';
import { batchItemDocs, keptBatchItems, storeBatchItems } from './batch-items.ts';

/** How old an unstored batch must be before it counts as cut off (a slow create is still running). */
export const BATCH_CREATION_GRACE_MS = DEFAULT_BATCH_CREATION_GRACE_MS;

export interface BatchCreationSweeperDeps {
  batches: Pick<BatchesRepository, 'findUnstored' | 'storedRequest' | 'markItemsStored' | 'countItem' | 'getSummary'>;
  generations: Pick<GenerationsRepository, 'newDoc' | 'insertManyOnce' | 'markJobsPublished' | 'listBatchItems'>;
  jobs: RenderJobPublisher;
  /** Finishes a batch whose items are all counted (merge, COMPLETED, batch.completed). */
  progress: Pick<BatchProgress, 'finishIfDone'>;
  intervalMs: number;
  graceMs?: number;
  now?: () => number;
  onFinished?: (info: { batchId: string; outcome: BatchCreationOutcome; missingItems: number }) => void;
  onError?: (err: unknown, batchId?: string) => void;
}

/** `resumed`: written from the kept request; `items_failed`: no request, missing items counted FAILED. */
export type BatchCreationOutcome = 'resumed' | 'items_failed';

export class BatchCreationSweeper {
  private readonly deps: BatchCreationSweeperDeps;
  private readonly loop: PeriodicTask;

  constructor(deps: BatchCreationSweeperDeps) {
    this.deps = deps;
    this.loop = new PeriodicTask({
      intervalMs: deps.intervalMs,
      jitter: 0.2,
      run: () => this.sweepOnce(),
      onError: (err) => deps.onError?.(err),
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One pass: every batch cut off before the grace period, oldest first (50 a pass). */
  async sweepOnce(): Promise<{ finished: number; failed: number }> {
    const now = this.deps.now ?? Date.now;
    const cutoff = new Date(now() - (this.deps.graceMs ?? BATCH_CREATION_GRACE_MS));
    const stuck = await this.deps.batches.findUnstored(cutoff, 50);
    const result = { finished: 0, failed: 0 };
    for (const batch of stuck) {
      try {
        if (await this.finish(batch)) result.finished++;
      } catch (err) {
        result.failed++;
        this.deps.onError?.(err, formatId('batch', batch._id));
      }
    }
    return result;
  }

  /** Finishes one cut-off create; false when someone else finished it first. */
  async finish(batch: UnstoredBatch): Promise<boolean> {
    const { batches, generations } = this.deps;
    const kept = await batches.storedRequest(batch._id);
    if (!kept || kept.itemsStored) return false;
    const batchId = formatId('batch', batch._id);
    if (kept.request) {
      // Dated as the request would have dated them: the batch's creation.
      const items = batchItemDocs(generations, batch, await keptBatchItems(kept.request), batch.createdAt);
      await storeBatchItems({ batches, generations, jobs: this.deps.jobs }, batch._id, items);
      this.deps.onFinished?.({ batchId, outcome: 'resumed', missingItems: 0 });
      return true;
    }
    // Nothing to write the missing items from: they count as failed, the batch completes with the rest.
    // itemsStored last: a crash before it means the next sweep repeats these steps, each a no-op
    // the second time (an item's slot is counted once; finishing is conditional).
    const present = new Set((await generations.listBatchItems(batchId)).map((item) => item.batchIndex));
    let missing = 0;
    for (let index = 0; index < batch.total; index++) {
      if (present.has(index)) continue;
      missing++;
      await batches.countItem(batch._id, index, 'FAILED');
    }
    const current = await batches.getSummary(batch._id);
    if (current) await this.deps.progress.finishIfDone(current);
    await batches.markItemsStored(batch._id);
    this.deps.onFinished?.({ batchId, outcome: 'items_failed', missingItems: missing });
    return true;
  }
}
