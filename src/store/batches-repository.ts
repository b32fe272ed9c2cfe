// Batches: many generations from one request (src/batches/). Every write here is one
// conditional update of one batch document, so counting needs neither a transaction nor a scan
// of the items, and a repeated count (a retried outbox step, a crashed worker's successor) is a
// no-op: the item's slot in `settled` is set by the same update that increments the count.
import { type Binary, type Db, type ObjectId } from 'mongodb';
import { COLLECTIONS, type BatchDoc } from './documents.ts';
import { insertOnce } from './mongo.ts';

export interface NewBatch {
  _id: ObjectId;
  workspaceId: ObjectId;
  total: number;
  merge: boolean;
  itemEvents: boolean;
  /** A test key's batch (docs/interface.md#test-mode). */
  test?: boolean;
  /** The resolved items, to finish a create cut off by a crash (src/batches/batch-items.ts). */
  request?: Binary | null;
}

/** What the creation sweeper reads of a batch whose items were not all stored. */
export type UnstoredBatch = Pick<BatchDoc, '_id' | 'workspaceId' | 'total' | 'itemEvents' | 'test' | 'createdAt'>;
/** What retention erases a batch by. */
export type ExpiredBatch = Pick<BatchDoc, '_id' | 'workspaceId' | 'status' | 'outputKey' | 'createdAt'>;
/** Unfinished batches now (the progress gauges). */
export interface BatchProgressTotals {
  pending: number;
  processing: number;
  /** Items of unfinished batches not yet counted final. */
  itemsPending: number;
}

/** A batch without its per-item slots and its kept request (all a reader or the finisher needs). */
const SUMMARY = { settled: 0, request: 0 } as const;
const UNSTORED_FIELDS = { _id: 1, workspaceId: 1, total: 1, itemEvents: 1, test: 1, createdAt: 1 } as const;
const EXPIRED_FIELDS = { _id: 1, workspaceId: 1, status: 1, outputKey: 1, createdAt: 1 } as const;
/**
 * Only a batch that is COMPLETED and whose batch.completed left (the finisher's outbox flag) is
 * erased: until then a repeated finishing step still needs the row.
 */
const ERASABLE = { status: 'COMPLETED', eventPublished: { $ne: false } } as const;

export class BatchesRepository {
  private readonly collection;
  constructor(db: Db) {
    this.collection = db.collection<BatchDoc>(COLLECTIONS.batches);
  }

  newDoc(input: NewBatch, now = new Date()): BatchDoc {
    return {
      _id: input._id,
      workspaceId: input.workspaceId,
      status: 'PENDING',
      total: input.total,
      completed: 0,
      failed: 0,
      settled: {},
      merge: input.merge,
      itemEvents: input.itemEvents,
      itemsStored: false,
      outputKey: null,
      eventPublished: null,
      test: input.test === true,
      request: input.request ?? null,
      createdAt: now,
      updatedAt: now,
    };
  }

  /** False when a batch with this _id exists (a retried create meets its first attempt's). */
  insertOnce(doc: BatchDoc): Promise<boolean> {
    return insertOnce(this.collection, doc);
  }

  get(id: ObjectId): Promise<BatchDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  /** Every item is stored: the kept request goes in the same update (it holds the variables). */
  async markItemsStored(id: ObjectId): Promise<void> {
    await this.collection.updateOne({ _id: id, itemsStored: false }, { $set: { itemsStored: true, request: null } });
  }

  /** Batches created before the date whose items are not all stored yet, oldest first. */
  findUnstored(createdBefore: Date, limit: number): Promise<UnstoredBatch[]> {
    return this.collection
      .find<UnstoredBatch>(
        { itemsStored: false, createdAt: { $lt: createdBefore } },
        { projection: UNSTORED_FIELDS, sort: { createdAt: 1 }, limit },
      )
      .toArray();
  }

  /** The kept create request of a batch (null when the items are stored, or it has none). */
  async storedRequest(id: ObjectId): Promise<{ itemsStored: boolean; request: Binary | null } | null> {
    const doc = await this.collection.findOne<Pick<BatchDoc, 'itemsStored' | 'request'>>(
      { _id: id },
      { projection: { itemsStored: 1, request: 1 } },
    );
    return doc ? { itemsStored: doc.itemsStored, request: doc.request ?? null } : null;
  }

  /** Finished batches of a workspace created before the date, oldest first (`workspace_status_created`). */
  findExpired(workspaceId: ObjectId, createdBefore: Date, limit: number): Promise<ExpiredBatch[]> {
    return this.collection
      .find<ExpiredBatch>(
        { workspaceId, createdAt: { $lt: createdBefore }, ...ERASABLE },
        { projection: EXPIRED_FIELDS, sort: { createdAt: 1 }, limit },
      )
      .toArray();
  }

  /** Finished test batches of every workspace created before the date, oldest first (`test_expiry`). */
  findExpiredTests(createdBefore: Date, limit: number): Promise<ExpiredBatch[]> {
    return this.collection
      .find<ExpiredBatch>(
        { test: true, createdAt: { $lt: createdBefore }, ...ERASABLE },
        { projection: EXPIRED_FIELDS, sort: { createdAt: 1 }, limit },
      )
      .toArray();
  }

  /** Forgets a batch's merged PDF (its object was removed: an item in it was erased). */
  async dropOutput(id: ObjectId, now = new Date()): Promise<void> {
    await this.collection.updateOne(
      { _id: id, outputKey: { $ne: null } },
      { $set: { outputKey: null, updatedAt: now } },
    );
  }

  /** Removes a finished batch's row; false when it was gone already. */
  async delete(id: ObjectId): Promise<boolean> {
    return (await this.collection.deleteOne({ _id: id, status: 'COMPLETED' })).deletedCount === 1;
  }

  /** The unfinished batches and their items not yet final (`status_created` index, unfinished rows only). */
  async progressTotals(): Promise<BatchProgressTotals> {
    const groups = await this.collection
      .aggregate<{ _id: 'PENDING' | 'PROCESSING'; batches: number; items: number }>([
        { $match: { status: { $in: ['PENDING', 'PROCESSING'] } } },
        { $project: { status: 1, total: 1, completed: 1, failed: 1 } },
        {
          $group: {
            _id: '$status',
            batches: { $sum: 1 },
            items: { $sum: { $subtract: ['$total', { $add: ['$completed', '$failed'] }] } },
          },
        },
      ])
      .toArray();
    const totals: BatchProgressTotals = { pending: 0, processing: 0, itemsPending: 0 };
    for (const group of groups) {
      if (group._id === 'PENDING') totals.pending = group.batches;
      else totals.processing = group.batches;
      totals.itemsPending += group.items;
    }
    return totals;
  }

  /**
   * Counts one final item, once: null when it was counted before (the caller reads the batch).
   * A batch being counted is never COMPLETED (that needs every item counted), so the status can
   * be set to PROCESSING here unconditionally.
   */
  async countItem(
    id: ObjectId,
    index: number,
    outcome: 'COMPLETED' | 'FAILED',
    now = new Date(),
  ): Promise<BatchDoc | null> {
    const slot = `settled.${index}`;
    const result = await this.collection.findOneAndUpdate(
      { _id: id, [slot]: { $exists: false } },
      {
        $set: { [slot]: outcome === 'COMPLETED' ? 'C' : 'F', status: 'PROCESSING', updatedAt: now },
        $inc: outcome === 'COMPLETED' ? { completed: 1 } : { failed: 1 },
      },
      { returnDocument: 'after', projection: SUMMARY },
    );
    return result ?? null;
  }

  /**
   * A workspace's live batches not yet complete (their items all stored), newest first: the
   * Overview's "batches in progress". A range on the workspace_status index, never the items.
   */
  listInProgress(workspaceId: ObjectId, limit: number): Promise<BatchDoc[]> {
    return this.collection
      .find(
        { workspaceId, status: { $in: ['PENDING', 'PROCESSING'] }, itemsStored: true, test: { $ne: true } },
        { projection: { settled: 0 }, sort: { _id: -1 }, limit },
      )
      .toArray();
  }

  /** The batch without its per-item slots (all a reader or the finisher needs). */
  getSummary(id: ObjectId): Promise<BatchDoc | null> {
    return this.collection.findOne({ _id: id }, { projection: SUMMARY });
  }

  /** Every item final: -> COMPLETED with the merged PDF's key, its event to publish. Null if it was already. */
  async complete(id: ObjectId, outputKey: string | null, now = new Date()): Promise<BatchDoc | null> {
    const result = await this.collection.findOneAndUpdate(
      { _id: id, status: { $ne: 'COMPLETED' } },
      { $set: { status: 'COMPLETED', outputKey, eventPublished: false, updatedAt: now } },
      { returnDocument: 'after', projection: SUMMARY },
    );
    return result ?? null;
  }

  async markEventPublished(id: ObjectId): Promise<void> {
    await this.collection.updateOne({ _id: id, eventPublished: false }, { $set: { eventPublished: true } });
  }
}
