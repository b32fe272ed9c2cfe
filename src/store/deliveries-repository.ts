// Webhook deliveries: one document per (event, endpoint) with every attempt appended.
import type { Db, Filter, ObjectId } from 'mongodb';
import {
  COLLECTIONS,
  DELIVERY_ATTEMPTS_KEPT,
  type DeliveryAttemptDoc,
  type DeliveryDoc,
  type DeliveryStatus,
} from './documents.ts';
import { insertOnce } from './mongo.ts';
import { retryTransient } from './mongo-errors.ts';
import { keysetPage, NEWEST_FIRST, type Page, type PageRequest } from './pagination.ts';

export interface DeliveryFilter {
  workspaceId?: ObjectId;
  generationId?: ObjectId;
  endpointId?: ObjectId;
  status?: DeliveryStatus;
}

/** What the delivery sweeper reads of an overdue delivery. */
export type OverdueDelivery = Pick<DeliveryDoc, '_id' | 'endpointId' | 'round' | 'roundAttempts' | 'nextAttemptAt'>;

export class DeliveriesRepository {
  private readonly collection;
  constructor(db: Db) {
    this.collection = db.collection<DeliveryDoc>(COLLECTIONS.deliveries);
  }

  /** Inserts the delivery unless it exists (its _id is derived from event and endpoint). */
  insertOnce(doc: DeliveryDoc): Promise<boolean> {
    return insertOnce(this.collection, doc);
  }

  get(id: ObjectId): Promise<DeliveryDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  /** Newest first (by creation: a delivery's _id is derived, not a creation time). */
  list(filter: DeliveryFilter, page: PageRequest): Promise<Page<DeliveryDoc>> {
    const query: Filter<DeliveryDoc> = {};
    if (filter.workspaceId) query.workspaceId = filter.workspaceId;
    if (filter.generationId) query.generationId = filter.generationId;
    if (filter.endpointId) query.endpointId = filter.endpointId;
    if (filter.status) query.status = filter.status;
    return keysetPage(this.collection, query, NEWEST_FIRST, page);
  }

  /**
   * Removes every delivery of a generation (right to erasure); returns how many went. Several
   * documents: the driver does not retry that, so it is retried here through a failover.
   */
  async deleteByGeneration(generationId: ObjectId): Promise<number> {
    let deleted = 0;
    await retryTransient(async () => {
      deleted += (await this.collection.deleteMany({ generationId })).deletedCount;
    });
    return deleted;
  }

  /**
   * Records an attempt of the given round, and the resulting state. Conditional on the
   * number of attempts made so far, so a duplicate worker cannot record the same attempt twice.
   */
  async recordAttempt(
    id: ObjectId,
    round: number,
    attemptsBefore: number,
    attempt: DeliveryAttemptDoc,
    next: { status: 'PENDING'; nextAttemptAt: Date } | { status: 'SUCCEEDED' | 'DROPPED' },
  ): Promise<DeliveryDoc | null> {
    const result = await this.collection.findOneAndUpdate(
      { _id: id, status: 'PENDING', round, roundAttempts: attemptsBefore },
      {
        // The newest DELIVERY_ATTEMPTS_KEPT stay; the count goes on (attempt.number is it).
        $push: { attempts: { $each: [attempt], $slice: -DELIVERY_ATTEMPTS_KEPT } },
        $inc: { roundAttempts: 1 },
        $set: {
          attemptCount: attempt.number,
          status: next.status,
          nextAttemptAt: next.status === 'PENDING' ? next.nextAttemptAt : null,
          updatedAt: new Date(),
          statsDue: {
            attempt: attempt.number,
            outcome: next.status === 'SUCCEEDED' ? 'succeeded' : next.status === 'DROPPED' ? 'dropped' : 'retried',
            at: attempt.attemptedAt,
          },
        },
      },
      { returnDocument: 'after' },
    );
    return result ?? null;
  }

  /** The statistics counted this attempt: clears statsDue unless a later attempt replaced it. */
  async markAttemptCounted(id: ObjectId, attempt: number): Promise<void> {
    await this.collection.updateOne({ _id: id, 'statsDue.attempt': attempt }, { $set: { statsDue: null } });
  }

  /** Deliveries whose last attempt the statistics may not have counted (a crash in between). */
  findUncounted(before: Date, limit: number): Promise<Array<Pick<DeliveryDoc, '_id' | 'workspaceId' | 'statsDue'>>> {
    return this.collection
      .find<Pick<DeliveryDoc, '_id' | 'workspaceId' | 'statsDue'>>(
        { 'statsDue.at': { $lt: before } },
        { projection: { _id: 1, workspaceId: 1, statsDue: 1 } },
      )
      .limit(limit)
      .toArray();
  }

  /** Starts a new round of attempts for a delivery that is not already pending. */
  async startNewRound(id: ObjectId): Promise<DeliveryDoc | null> {
    const now = new Date();
    const result = await this.collection.findOneAndUpdate(
      { _id: id, status: { $in: ['DROPPED', 'SUCCEEDED'] } },
      { $set: { status: 'PENDING', roundAttempts: 0, nextAttemptAt: now, updatedAt: now }, $inc: { round: 1 } },
      { returnDocument: 'after' },
    );
    return result ?? null;
  }

  /**
   * PENDING deliveries whose next attempt is overdue (their job was lost): the sweeper requeues
   * them. Only the fields it needs: not the payload, not the attempts.
   */
  findOverdue(before: Date, limit: number): Promise<OverdueDelivery[]> {
    return this.collection
      .find<OverdueDelivery>(
        { status: 'PENDING', nextAttemptAt: { $lt: before } },
        { projection: { _id: 1, endpointId: 1, round: 1, roundAttempts: 1, nextAttemptAt: 1 } },
      )
      .limit(limit)
      .toArray();
  }

  /**
   * Claims an overdue delivery for the sweeper: moves nextAttemptAt from the value seen to
   * `at`, unless the delivery changed meanwhile. False when another sweeper or a worker got
   * there first, so only one of several webhooks processes re-queues it.
   */
  async markRequeued(
    id: ObjectId,
    seen: { round: number; roundAttempts: number; nextAttemptAt: Date },
    at: Date,
  ): Promise<boolean> {
    const result = await this.collection.updateOne(
      {
        _id: id,
        status: 'PENDING',
        round: seen.round,
        roundAttempts: seen.roundAttempts,
        nextAttemptAt: seen.nextAttemptAt,
      },
      { $set: { nextAttemptAt: at, updatedAt: new Date() } },
    );
    return result.modifiedCount === 1;
  }
}
