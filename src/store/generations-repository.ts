// Generations and their state machine. Every transition is one conditional update on one
// document, so a stale or duplicate worker can never overwrite a final state, and the two
// outboxes (render job, final event) need no transaction: a flag on the row says what still
// has to be published, and sweepers finish it after a crash.
import { ObjectId, type Db, type Filter } from 'mongodb';
import type { JsonObject } from '../domain/template.ts';
import {
  COLLECTIONS,
  GENERATION_HISTORY_KEPT,
  type GenerationDoc,
  type GenerationHistoryEntry,
  type GenerationStatus,
  type IdempotencyDoc,
} from './documents.ts';
import { GenerationQueueRepository, type QueueRepair, type QueueState } from './generation-queue-repository.ts';
import { insertOnce, isDuplicateKeyError as isDuplicateKey } from './mongo.ts';
import { keysetPage, NEWEST_FIRST, type Page, type PageRequest } from './pagination.ts';

export interface NewGeneration {
  workspaceId: ObjectId;
  templateId: ObjectId | null;
  templateRef: string;
  templateName: string;
  data: JsonObject;
  /** Made with a test key (docs/interface.md#test-mode). */
  test?: boolean;
  /** An item of a batch: its id, index and whether it sends its own events. */
  batch?: { batchId: string; index: number; itemEvents: boolean };
}

export interface ListQuery {
  workspaceId: ObjectId;
  /** Test generations only, or live ones only (docs/interface.md#test-mode); absent: both (the admin plane). */
  test?: boolean;
  status?: GenerationStatus;
  templateId?: ObjectId;
  createdAfter?: Date;
  createdBefore?: Date;
  /** `bat_…`: only that batch's items. */
  batchId?: string;
}

/** What the outbox sweeper reads of a generation whose job may not be in JetStream. */
export type StrandedGeneration = Pick<
  GenerationDoc,
  '_id' | 'workspaceId' | 'batchId' | 'status' | 'jobPublishedAt' | 'attempts'
>;
/** What a final event is built from (src/queue/messages.ts finalEventFor). */
export type FinalEventSource = Pick<
  GenerationDoc,
  | '_id'
  | 'workspaceId'
  | 'status'
  | 'error'
  | 'errorCode'
  | 'updatedAt'
  | 'createdAt'
  | 'templateId'
  | 'templateRef'
  | 'templateName'
  | 'test'
> &
  Partial<Pick<GenerationDoc, 'batchId' | 'batchIndex' | 'batchItemEvents'>>;
/** What merging a batch's PDFs reads of an item. */
export type BatchItemOutput = Pick<GenerationDoc, '_id' | 'batchIndex' | 'status' | 'outputKey'>;
/** What the retention sweeper erases a generation by. */
export type ExpiredGeneration = Pick<GenerationDoc, '_id' | 'workspaceId' | 'status' | 'outputKey' | 'createdAt'>;

// Sweepers read many rows at a time: only the fields they use, never `data` (the variables,
// up to the body limit each).
const STRANDED_FIELDS = { _id: 1, workspaceId: 1, batchId: 1, status: 1, jobPublishedAt: 1, attempts: 1 } as const;
// The final event's fields, and what the workspace statistics count (src/store/stats-repository.ts).
const FINAL_EVENT_FIELDS = {
  _id: 1,
  workspaceId: 1,
  status: 1,
  error: 1,
  errorCode: 1,
  updatedAt: 1,
  createdAt: 1,
  templateId: 1,
  templateRef: 1,
  templateName: 1,
  test: 1,
  batchId: 1,
  batchIndex: 1,
  batchItemEvents: 1,
} as const;

/** Appends a step to a generation's story, keeping the newest GENERATION_HISTORY_KEPT. */
function historyPush(entry: GenerationHistoryEntry) {
  return { history: { $each: [entry], $slice: -GENERATION_HISTORY_KEPT } };
}
const EXPIRED_FIELDS = { _id: 1, workspaceId: 1, status: 1, outputKey: 1, createdAt: 1 } as const;

/**
 * The rows of one mode (docs/interface.md#test-mode). Test rows say `test: true`; live rows
 * say `test: false`, or nothing when written before test mode. `test: true` is what the
 * partial `workspace_test_created` index covers; a live query skips at most a day of test rows.
 */
export function modeFilter(test: boolean): Filter<GenerationDoc> {
  return test ? { test: true } : { test: { $ne: true } };
}

/** True when the row belongs to the mode: a get of the other mode's generation is a 404. */
export function inMode(doc: Pick<GenerationDoc, 'test'>, test: boolean): boolean {
  return (doc.test === true) === test;
}

export class GenerationsRepository {
  private readonly collection;
  private readonly idempotency;
  /**
   * The workspace's queue as bookkeeping (src/store/generation-queue-repository.ts): a row per
   * unfinished generation, written BEFORE the generation, and counters kept in line with the
   * rows; the outbox sweeper finishes what a crash left (repairQueue).
   */
  private readonly queue;
  constructor(db: Db) {
    this.collection = db.collection<GenerationDoc>(COLLECTIONS.generations);
    this.idempotency = db.collection<IdempotencyDoc>(COLLECTIONS.idempotency);
    this.queue = new GenerationQueueRepository(db);
  }

  private async dequeue(id: ObjectId): Promise<void> {
    await this.queue.finished(id);
  }

  newDoc(input: NewGeneration, now = new Date(), id = new ObjectId()): GenerationDoc {
    const doc: GenerationDoc = {
      _id: id,
      workspaceId: input.workspaceId,
      templateId: input.templateId,
      templateRef: input.templateRef,
      templateName: input.templateName,
      format: 'PDF',
      status: 'PENDING',
      data: input.data,
      templateVersion: 0,
      outputKey: null,
      error: null,
      createdAt: now,
      updatedAt: now,
      jobPublishedAt: null,
      attempts: 0,
      leaseOwner: null,
      leaseUntil: null,
      lastError: null,
      eventPublished: null,
      test: input.test === true,
    };
    if (input.batch) {
      doc.batchId = input.batch.batchId;
      doc.batchIndex = input.batch.index;
      if (!input.batch.itemEvents) doc.batchItemEvents = false;
    }
    return doc;
  }

  /**
   * Inserts every row whose _id is not taken yet (a retried batch create writes the rows its
   * first attempt did not). Unordered: one existing row does not stop the others.
   */
  async insertManyOnce(docs: GenerationDoc[]): Promise<void> {
    if (docs.length === 0) return;
    await this.queue.add(docs);
    try {
      await this.collection.insertMany(docs, { ordered: false });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    await this.queue.stored(docs.map((d) => d._id));
  }

  /** The items of a batch in item order, only what a merge needs (uses the batch_items index). */
  listBatchItems(batchId: string): Promise<BatchItemOutput[]> {
    return this.collection
      .find<BatchItemOutput>(
        { batchId },
        { projection: { _id: 1, batchIndex: 1, status: 1, outputKey: 1 }, sort: { batchIndex: 1 } },
      )
      .toArray();
  }

  async insert(doc: GenerationDoc): Promise<void> {
    await this.queue.add([doc]);
    await this.collection.insertOne(doc);
    await this.queue.stored([doc._id]);
  }

  /**
   * Inserts the row unless one with its _id exists; false then. A create retried through a
   * failover (the driver's retry, or the client's with the same Idempotency-Key) meets the
   * row it already wrote on the same _id instead of making a second generation.
   */
  async insertOnce(doc: GenerationDoc): Promise<boolean> {
    await this.queue.add([doc]);
    const inserted = await insertOnce(this.collection, doc);
    const stored = inserted ? doc : await this.collection.findOne({ _id: doc._id }, { projection: { status: 1 } });
    // A create retried after its generation became final must not queue it again.
    if (stored?.status === 'PENDING' || stored?.status === 'PROCESSING') await this.queue.stored([doc._id]);
    else await this.queue.finished(doc._id);
    return inserted;
  }

  get(id: ObjectId): Promise<GenerationDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  /** Newest first (createdAt, then _id, descending). */
  list(query: ListQuery, page: PageRequest): Promise<Page<GenerationDoc>> {
    const and: Filter<GenerationDoc>[] = [{ workspaceId: query.workspaceId }];
    if (query.test !== undefined) and.push(modeFilter(query.test));
    if (query.status) and.push({ status: query.status });
    if (query.templateId) and.push({ templateId: query.templateId });
    if (query.batchId) and.push({ batchId: query.batchId });
    if (query.createdAfter) and.push({ createdAt: { $gte: query.createdAfter } });
    if (query.createdBefore) and.push({ createdAt: { $lt: query.createdBefore } });
    return keysetPage(this.collection, { $and: and }, NEWEST_FIRST, page);
  }

  /**
   * A workspace's queue now: generations PENDING and PROCESSING (counter documents), and the
   * creation time of the oldest unfinished one (one index entry): no scan, however long.
   */
  queueState(workspaceId: ObjectId): Promise<QueueState> {
    return this.queue.state(workspaceId);
  }

  /** The outbox sweeper's part of the queue bookkeeping: rows a crash left out of line. */
  repairQueue(now: Date, graceMs: number): Promise<QueueRepair> {
    return this.queue.repair(now, graceMs);
  }

  /**
   * How many generations (live and test) of the template are stored, counted on the
   * workspace_template_created index; stops counting at `limit`.
   */
  countForTemplate(workspaceId: ObjectId, templateId: ObjectId, limit = 1_000_000): Promise<number> {
    return this.collection.countDocuments({ workspaceId, templateId }, { limit });
  }

  /** Removes the row (right to erasure, retention). True when there was one. */
  async delete(id: ObjectId): Promise<boolean> {
    const result = await this.collection.deleteOne({ _id: id });
    await this.dequeue(id);
    return result.deletedCount === 1;
  }

  // ---- outbox of render jobs -------------------------------------------------------------

  async markJobPublished(id: ObjectId, at = new Date()): Promise<void> {
    await this.collection.updateOne({ _id: id }, { $set: { jobPublishedAt: at } });
  }

  /** markJobPublished for many rows in one round trip (a batch's items). */
  async markJobsPublished(ids: ObjectId[], at = new Date()): Promise<void> {
    if (ids.length === 0) return;
    await this.collection.updateMany({ _id: { $in: ids } }, { $set: { jobPublishedAt: at } });
  }

  /**
   * Generations whose render job may not be in JetStream: PENDING ones never published (the
   * API died between insert and publish) or published long ago, and PROCESSING ones whose
   * worker's lease ran out (the worker died). The caller republishes; JetStream's msgID
   * de-duplication and the conditional claim make a duplicate harmless.
   */
  async findStranded(
    now: Date,
    publishGraceMs: number,
    republishAfterMs: number,
    limit: number,
  ): Promise<StrandedGeneration[]> {
    return this.collection
      .find<StrandedGeneration>(
        {
          $or: [
            { status: 'PENDING', jobPublishedAt: null, createdAt: { $lt: new Date(now.getTime() - publishGraceMs) } },
            { status: 'PENDING', jobPublishedAt: { $lt: new Date(now.getTime() - republishAfterMs) } },
            {
              status: 'PROCESSING',
              leaseUntil: { $lt: now },
              jobPublishedAt: { $lt: new Date(now.getTime() - publishGraceMs) },
            },
          ],
        },
        { projection: STRANDED_FIELDS },
      )
      .limit(limit)
      .toArray();
  }

  // ---- state machine ---------------------------------------------------------------------

  /**
   * PENDING -> PROCESSING, or takes over a PROCESSING row whose lease expired (its worker
   * died). Counts the attempt. Null when another worker holds it or it is final.
   */
  async claim(id: ObjectId, owner: string, leaseMs: number, now = new Date()): Promise<GenerationDoc | null> {
    const result = await this.collection.findOneAndUpdate(
      {
        _id: id,
        $or: [
          { status: 'PENDING' },
          { status: 'PROCESSING', leaseUntil: { $lt: now } },
          { status: 'PROCESSING', leaseOwner: null },
        ],
      },
      {
        $set: {
          status: 'PROCESSING',
          leaseOwner: owner,
          leaseUntil: new Date(now.getTime() + leaseMs),
          updatedAt: now,
        },
        $inc: { attempts: 1 },
        // The first claim's time stays (a missing field takes the value).
        $min: { pickedUpAt: now },
        $push: historyPush({ event: 'picked_up', at: now }),
      },
      { returnDocument: 'after' },
    );
    if (result) await this.queue.claimed(id, now);
    return result ?? null;
  }

  async extendLease(id: ObjectId, owner: string, leaseMs: number): Promise<boolean> {
    const result = await this.collection.updateOne(
      { _id: id, status: 'PROCESSING', leaseOwner: owner },
      { $set: { leaseUntil: new Date(Date.now() + leaseMs) } },
    );
    return result.matchedCount === 1;
  }

  /**
   * Gives the row back for another attempt after a transient failure; it stays PROCESSING
   * (docs/interface.md#lifecycle has no way back to PENDING). Any worker may claim it (leaseOwner null); the
   * sweeper only steps in if nobody has by `retryAt` plus its grace.
   */
  async releaseForRetry(
    id: ObjectId,
    owner: string,
    error: string,
    retryAt: Date,
    errorCode: string | null = null,
  ): Promise<boolean> {
    const now = new Date();
    const result = await this.collection.updateOne(
      { _id: id, status: 'PROCESSING', leaseOwner: owner },
      {
        $set: { leaseOwner: null, leaseUntil: retryAt, lastError: error, lastErrorCode: errorCode, updatedAt: now },
        $push: historyPush({ event: 'retry', at: now, error, code: errorCode }),
      },
    );
    return result.matchedCount === 1;
  }

  /**
   * Hands a claimed row back without charging the attempt (graceful shutdown: the render was
   * interrupted, it did not fail), so rolling restarts never use up a generation's attempts.
   */
  async handBack(id: ObjectId, owner: string): Promise<boolean> {
    const now = new Date();
    const result = await this.collection.updateOne(
      { _id: id, status: 'PROCESSING', leaseOwner: owner },
      {
        $set: { leaseOwner: null, leaseUntil: now, updatedAt: now },
        $inc: { attempts: -1 },
        $push: historyPush({ event: 'handed_back', at: now }),
      },
    );
    return result.matchedCount === 1;
  }

  /** PROCESSING (held by owner) -> COMPLETED. False when the row was not ours any more. */
  async complete(
    id: ObjectId,
    owner: string,
    outputKey: string,
    templateVersion: number,
  ): Promise<GenerationDoc | null> {
    const now = new Date();
    const result = await this.collection.findOneAndUpdate(
      { _id: id, status: 'PROCESSING', leaseOwner: owner },
      {
        $set: {
          status: 'COMPLETED',
          outputKey,
          templateVersion,
          error: null,
          leaseOwner: null,
          leaseUntil: null,
          updatedAt: now,
          eventPublished: false,
        },
      },
      { returnDocument: 'after' },
    );
    if (result) await this.dequeue(id);
    return result ?? null;
  }

  /**
   * -> FAILED from PROCESSING held by owner, or (owner null) from any non-final state.
   * Null when the row is already final or held by someone else.
   */
  async fail(
    id: ObjectId,
    owner: string | null,
    error: string,
    templateVersion?: number,
    errorCode: string | null = null,
  ): Promise<GenerationDoc | null> {
    const now = new Date();
    const filter: Filter<GenerationDoc> =
      owner === null
        ? { _id: id, status: { $in: ['PENDING', 'PROCESSING'] } }
        : { _id: id, status: 'PROCESSING', leaseOwner: owner };
    const set: Partial<GenerationDoc> = {
      status: 'FAILED',
      error,
      errorCode,
      leaseOwner: null,
      leaseUntil: null,
      updatedAt: now,
      eventPublished: false,
    };
    if (templateVersion !== undefined) set.templateVersion = templateVersion;
    const result = await this.collection.findOneAndUpdate(filter, { $set: set }, { returnDocument: 'after' });
    if (result) await this.dequeue(id);
    return result ?? null;
  }

  // ---- outbox of final events ------------------------------------------------------------

  async markEventPublished(id: ObjectId): Promise<void> {
    // A crash between the final transition and its dequeue is finished here (idempotent).
    await this.dequeue(id);
    await this.collection.updateOne({ _id: id, eventPublished: false }, { $set: { eventPublished: true } });
  }

  findUnpublishedEvents(olderThan: Date, limit: number): Promise<FinalEventSource[]> {
    return this.collection
      .find<FinalEventSource>(
        { eventPublished: false, updatedAt: { $lt: olderThan } },
        { projection: FINAL_EVENT_FIELDS },
      )
      .limit(limit)
      .toArray();
  }

  // ---- retention -------------------------------------------------------------------------

  /**
   * Finished (COMPLETED or FAILED) generations of a workspace created before `createdBefore`,
   * oldest first: what the retention sweeper erases. Uses the workspace_status_created index.
   */
  findExpired(workspaceId: ObjectId, createdBefore: Date, limit: number): Promise<ExpiredGeneration[]> {
    return this.collection
      .find<ExpiredGeneration>(
        { workspaceId, status: { $in: ['COMPLETED', 'FAILED'] }, createdAt: { $lt: createdBefore } },
        { projection: EXPIRED_FIELDS },
      )
      .sort({ createdAt: 1 })
      .limit(limit)
      .toArray();
  }

  /**
   * Finished test generations (of any workspace) created before `createdBefore`, oldest first:
   * what the retention sweep erases after DOCGEN_TEST_GENERATION_RETENTION_SECONDS. Uses the
   * partial test_expiry index: it reads test rows only, never the collection.
   */
  findExpiredTests(createdBefore: Date, limit: number): Promise<ExpiredGeneration[]> {
    return this.collection
      .find<ExpiredGeneration>(
        { test: true, createdAt: { $lt: createdBefore }, status: { $in: ['COMPLETED', 'FAILED'] } },
        { projection: EXPIRED_FIELDS },
      )
      .sort({ test: 1, createdAt: 1 })
      .limit(limit)
      .toArray();
  }

  // ---- idempotency -----------------------------------------------------------------------

  /**
   * Claims an idempotency key for a new generation. Returns null when this caller won (go on
   * and insert the generation), or the existing record when the key is already taken.
   * An expired record is replaced by a conditional update, so a race still has one winner.
   */
  async claimIdempotencyKey(record: IdempotencyDoc): Promise<IdempotencyDoc | null> {
    for (let tries = 0; tries < 5; tries++) {
      try {
        await this.idempotency.insertOne(record);
        return null;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const existing = await this.idempotency.findOne({ _id: record._id });
      if (!existing) continue; // expired and removed in between: try again
      if (existing.expiresAt > record.createdAt) return existing;
      const replaced = await this.idempotency.updateOne(
        { _id: record._id, expiresAt: existing.expiresAt, generationId: existing.generationId },
        {
          $set: {
            bodyHash: record.bodyHash,
            generationId: record.generationId,
            createdAt: record.createdAt,
            expiresAt: record.expiresAt,
          },
        },
      );
      if (replaced.matchedCount === 1) return null;
    }
    throw new Error('could not claim the idempotency key under contention');
  }
}
