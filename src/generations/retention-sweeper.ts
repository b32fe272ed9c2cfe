// Retention of generations: deletes finished generations older than their workspace's
// retention, and test generations older than the test retention (a day by default,
// docs/interface.md#test-mode) whatever their workspace's, with their PDF and webhook
// deliveries (eraseGeneration, one at a time). Batches get the same retention: a COMPLETED
// batch older than it goes with its merged PDF (eraseBatch), its items as the generations they are.
//
// Runs in the render role: it is the role that writes PDFs and already sweeps generation
// rows (the outbox sweeper), it holds the object store's write credentials and creates the
// bucket, and a render still running when its row is erased cleans up after itself there.
//
// Leader-free: every render replica sweeps on its own timer (with jitter, so replicas drift
// apart). Two replicas erasing the same generation is harmless: each step of the erasure is
// idempotent (deleting a missing object, row or delivery succeeds), so no lock, lease or
// transaction is needed. Only COMPLETED and FAILED rows are erased: a generation still
// rendering past its retention is erased by the first sweep after it finishes.
import type { ObjectId } from 'mongodb';
import type { WorkspaceDoc } from '../store/documents.ts';
import type { ExpiredGeneration } from '../store/generations-repository.ts';
import type { ExpiredBatch } from '../store/batches-repository.ts';
import { PeriodicTask } from '../ops/periodic-task.ts';

/** `Row`: what findExpired returns (the repository's projection, or whole rows in tests). */
export interface RetentionSweeperDeps<Row extends ExpiredGeneration = ExpiredGeneration> {
  workspaces: { withRetention(limit: number, after?: ObjectId): Promise<WorkspaceDoc[]> };
  generations: {
    findExpired(workspaceId: ObjectId, createdBefore: Date, limit: number): Promise<Row[]>;
    /** Finished test generations of every workspace created before the date, oldest first. */
    findExpiredTests(createdBefore: Date, limit: number): Promise<Row[]>;
  };
  /** Finished batches past the same retention (absent: batches are not swept). */
  batches?: {
    findExpired(workspaceId: ObjectId, createdBefore: Date, limit: number): Promise<ExpiredBatch[]>;
    findExpiredTests(createdBefore: Date, limit: number): Promise<ExpiredBatch[]>;
  };
  /** Erases one batch (merged PDF, row); throws when a step fails. */
  eraseBatch?(doc: ExpiredBatch): Promise<unknown>;
  onBatchErased?: (doc: ExpiredBatch) => void;
  /** How long test generations are kept (DOCGEN_TEST_GENERATION_RETENTION_SECONDS). */
  testRetentionMs: number;
  /** Erases one generation (deliveries, PDF, row); throws when a step fails. */
  erase(doc: Row): Promise<unknown>;
  /** Time between sweeps (±20 % jitter). */
  intervalMs: number;
  /** Generations erased per workspace and query. Default 200. */
  batchSize?: number;
  /** Stop a sweep after this long, leaving the rest to the next one. Default: intervalMs. */
  maxSweepMs?: number;
  now?: () => number;
  onErased?: (doc: Row) => void;
  onError?: (err: unknown, context: { workspaceId?: ObjectId; generationId?: ObjectId; batchId?: ObjectId }) => void;
}

export interface SweepResult {
  workspaces: number;
  erased: number;
  failed: number;
  /** Batches erased (merged PDF and row). */
  batchesErased: number;
}

export class RetentionSweeper<Row extends ExpiredGeneration = ExpiredGeneration> {
  private readonly deps: RetentionSweeperDeps<Row>;
  private readonly loop: PeriodicTask;

  constructor(deps: RetentionSweeperDeps<Row>) {
    this.deps = deps;
    this.loop = new PeriodicTask({
      intervalMs: deps.intervalMs,
      jitter: 0.2,
      run: () => this.sweepOnce(),
      onError: (err) => deps.onError?.(err, {}),
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One pass over every workspace with a retention. */
  async sweepOnce(): Promise<SweepResult> {
    const now = this.deps.now ?? Date.now;
    const batchSize = this.deps.batchSize ?? 200;
    const deadline = now() + (this.deps.maxSweepMs ?? this.deps.intervalMs);
    const result: SweepResult = { workspaces: 0, erased: 0, failed: 0, batchesErased: 0 };
    // Test generations first: one indexed query across workspaces, bounded by a day's traffic.
    const testCutoff = () => new Date(now() - this.deps.testRetentionMs);
    await this.eraseAll(() => this.deps.generations.findExpiredTests(testCutoff(), batchSize), {
      batchSize,
      deadline,
      result,
    });
    const { batches } = this.deps;
    if (batches)
      await this.eraseBatches(() => batches.findExpiredTests(testCutoff(), batchSize), batchSize, deadline, result);
    if (now() > deadline) return result;
    let after: ObjectId | undefined;
    for (;;) {
      const workspaces = await this.deps.workspaces.withRetention(100, after);
      for (const workspace of workspaces) {
        result.workspaces++;
        await this.sweepWorkspace(workspace, batchSize, deadline, result);
        if (now() > deadline) return result;
      }
      if (workspaces.length < 100) return result;
      after = workspaces[workspaces.length - 1]!._id;
    }
  }

  private async sweepWorkspace(
    workspace: WorkspaceDoc,
    batchSize: number,
    deadline: number,
    result: SweepResult,
  ): Promise<void> {
    const now = this.deps.now ?? Date.now;
    const retentionMs = (workspace.retentionSeconds ?? 0) * 1000;
    if (retentionMs <= 0) return;
    await this.eraseAll(
      () => this.deps.generations.findExpired(workspace._id, new Date(now() - retentionMs), batchSize),
      { batchSize, deadline, result },
    );
    const { batches } = this.deps;
    if (batches && now() <= deadline)
      await this.eraseBatches(
        () => batches.findExpired(workspace._id, new Date(now() - retentionMs), batchSize),
        batchSize,
        deadline,
        result,
      );
  }

  /** As eraseAll, for batches. */
  private async eraseBatches(
    find: () => Promise<ExpiredBatch[]>,
    batchSize: number,
    deadline: number,
    result: SweepResult,
  ): Promise<void> {
    const now = this.deps.now ?? Date.now;
    const erase = this.deps.eraseBatch;
    if (!erase) return;
    for (;;) {
      const expired = await find();
      let failedHere = 0;
      for (const doc of expired) {
        try {
          await erase(doc);
          result.batchesErased++;
          this.deps.onBatchErased?.(doc);
        } catch (err) {
          failedHere++;
          this.deps.onError?.(err, { workspaceId: doc.workspaceId, batchId: doc._id });
        }
        if (now() > deadline) break;
      }
      result.failed += failedHere;
      if (expired.length < batchSize || failedHere > 0 || now() > deadline) return;
    }
  }

  /** Erases batch after batch of what `find` returns until it runs dry, fails or the time is up. */
  private async eraseAll(
    find: () => Promise<Row[]>,
    at: { batchSize: number; deadline: number; result: SweepResult },
  ): Promise<void> {
    const now = this.deps.now ?? Date.now;
    const { batchSize, deadline, result } = at;
    for (;;) {
      const expired = await find();
      let failedHere = 0;
      for (const doc of expired) {
        try {
          await this.deps.erase(doc);
          result.erased++;
          this.deps.onErased?.(doc);
        } catch (err) {
          failedHere++;
          this.deps.onError?.(err, { workspaceId: doc.workspaceId, generationId: doc._id });
        }
        if (now() > deadline) break;
      }
      result.failed += failedHere;
      // A full batch may have more behind it, unless erasing keeps failing (storage down):
      // then the next sweep tries again rather than this one spinning.
      if (expired.length < batchSize || failedHere > 0 || now() > deadline) return;
    }
  }
}
