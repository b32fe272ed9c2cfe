// Batches: many generations from one request (src/batches/). Every write here is one
// conditional update of one batch document, so counting needs neither a transaction nor a scan
// of the items, and a repeated count (a retried outbox step, a crashed worker's successor) is a
// no-op: the item's slot in `settled` is set by the same update that increments the count.
import { type Db, type ObjectId } from 'mongodb';
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
}

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

  async markItemsStored(id: ObjectId): Promise<void> {
    await this.collection.updateOne({ _id: id, itemsStored: false }, { $set: { itemsStored: true } });
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
      { returnDocument: 'after', projection: { settled: 0 } },
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
    return this.collection.findOne({ _id: id }, { projection: { settled: 0 } });
  }

  /** Every item final: -> COMPLETED with the merged PDF's key, its event to publish. Null if it was already. */
  async complete(id: ObjectId, outputKey: string | null, now = new Date()): Promise<BatchDoc | null> {
    const result = await this.collection.findOneAndUpdate(
      { _id: id, status: { $ne: 'COMPLETED' } },
      { $set: { status: 'COMPLETED', outputKey, eventPublished: false, updatedAt: now } },
      { returnDocument: 'after', projection: { settled: 0 } },
    );
    return result ?? null;
  }

  async markEventPublished(id: ObjectId): Promise<void> {
    await this.collection.updateOne({ _id: id, eventPublished: false }, { $set: { eventPublished: true } });
  }
}
