// Pre-aggregated workspace statistics (docs/architecture.md#workspace-statistics): counter
// rows per workspace, hour (and again per UTC day), template and final status (generations),
// and per workspace and hour/day (webhook delivery attempts). Written when something becomes
// final, read by GetWorkspaceStats as a range of one workspace's rows: 24 h reads at most
// 24 × (templates × 2 + 1) small rows, 30 d 30 × (templates × 2 + 1), however many
// generations the workspace has. Hour rows serve only the 24 h view and are deleted once
// HOUR_ROWS_KEPT_MS old (deleteExpiredHours); day rows are the history and stay.
//
// Counted once, without transactions: each increment carries an event key (the generation's
// id, a delivery attempt's id) and is applied by ONE conditional upsert on the counter row,
// `{_id, applied: {$ne: key}}` → `$inc …, $push: {applied: key}`. Applying the same key again
// (a retry, the outbox sweeper after a crash) matches nothing and changes nothing. Once the
// caller has recorded that the event is done (the generation's final-event outbox flag),
// `settle` pulls the key again, so `applied` only holds the keys in flight.
import type { Db, ObjectId, UpdateFilter } from 'mongodb';
import { deterministicObjectId } from '../domain/ids.ts';
import { bucketField, latencyBucket, type LatencyCounts } from '../domain/latency-histogram.ts';
import { COLLECTIONS } from './documents.ts';
import { isDuplicateKeyError } from './mongo.ts';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
/**
 * Hour rows older than this are deleted: only the 24 h view reads them, and a generation
 * rarely becomes final days after it was created (if one does, its hour row comes back, is
 * never read, and goes again).
 */
export const HOUR_ROWS_KEPT_MS = 3 * DAY_MS;

/** Counter rows come in two spans: hours (the 24 h view) and UTC days (7 d and 30 d read 30 rows, not 720). */
export type StatsSpan = 'hour' | 'day';
const SPANS: readonly StatsSpan[] = ['hour', 'day'];

export interface StatsDoc {
  /** deterministicObjectId('stats', workspace, span start, span, kind, template, status). */
  _id: ObjectId;
  workspaceId: ObjectId;
  span: StatsSpan;
  /** Start of the hour or day (UTC). */
  hour: Date;
  kind: 'generation' | 'delivery';
  /** Generations: the template (null when the generation named none that existed). */
  templateId?: ObjectId | null;
  templateName?: string;
  status?: 'COMPLETED' | 'FAILED';
  /** Generations that became final with this status, created in this hour or day. */
  count?: number;
  /** Their create→final latency histogram (src/domain/latency-histogram.ts). */
  latency?: LatencyCounts;
  /** FAILED: how many per error code, and the latest message of each code. */
  causes?: Record<string, number>;
  causeMessages?: Record<string, string>;
  /** Deliveries: attempts that succeeded, failed and will be retried, failed and were dropped. */
  succeeded?: number;
  retried?: number;
  dropped?: number;
  /** Event keys applied but not yet settled (see the header). */
  applied: string[];
}

/** What a generation's final state is counted from. */
export interface FinalGeneration {
  _id: ObjectId;
  workspaceId: ObjectId;
  templateId: ObjectId | null;
  templateRef: string;
  templateName: string;
  status: string;
  createdAt: Date;
  /** When it became final. */
  updatedAt: Date;
  error: string | null;
  errorCode?: string | null;
}

export type DeliveryOutcome = 'succeeded' | 'retried' | 'dropped';

export function hourOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
}

export function spanStart(at: Date, span: StatsSpan): Date {
  const size = span === 'hour' ? HOUR_MS : DAY_MS;
  return new Date(Math.floor(at.getTime() / size) * size);
}

/** Error codes become field names: only letters, digits and underscores. */
function codeField(code: string | null | undefined): string {
  const clean = (code ?? '').replace(/[^A-Za-z0-9_]/g, '_').slice(0, 64);
  return clean || 'UNKNOWN';
}

export class StatsRepository {
  private readonly collection;
  constructor(db: Db) {
    this.collection = db.collection<StatsDoc>(COLLECTIONS.workspaceStats);
  }

  /** The counter row of a final generation in one span, and its event key. */
  generationTarget(doc: FinalGeneration, span: StatsSpan = 'hour'): { rowId: ObjectId; key: string } {
    const template = doc.templateId ? doc.templateId.toHexString() : `ref:${doc.templateRef}`;
    const start = spanStart(doc.createdAt, span).toISOString();
    const parts = [doc.workspaceId.toHexString(), start, 'generation', template, doc.status];
    return {
      // Hour rows keep the id they had before day rows existed.
      rowId: deterministicObjectId('stats', ...(span === 'hour' ? parts : ['day', ...parts])),
      key: `gen:${doc._id.toHexString()}`,
    };
  }

  /** Counts a final (COMPLETED or FAILED) generation once in its hour and its day; false when it already was. */
  async countGeneration(doc: FinalGeneration): Promise<boolean> {
    if (doc.status !== 'COMPLETED' && doc.status !== 'FAILED') return false;
    const latencyMs = Math.max(0, doc.updatedAt.getTime() - doc.createdAt.getTime());
    const inc: Record<string, number> = { count: 1, [`latency.${bucketField(latencyBucket(latencyMs))}`]: 1 };
    const set: Record<string, unknown> = { templateName: doc.templateName };
    if (doc.status === 'FAILED') {
      const code = codeField(doc.errorCode);
      inc[`causes.${code}`] = 1;
      set[`causeMessages.${code}`] = (doc.error ?? '').slice(0, 300);
    }
    let counted = false;
    for (const span of SPANS) {
      const { rowId, key } = this.generationTarget(doc, span);
      const applied = await this.applyOnce(rowId, key, inc, set, {
        workspaceId: doc.workspaceId,
        span,
        hour: spanStart(doc.createdAt, span),
        kind: 'generation',
        templateId: doc.templateId,
        status: doc.status,
      });
      counted ||= applied;
    }
    return counted;
  }

  async settleGeneration(doc: FinalGeneration): Promise<void> {
    for (const span of SPANS) {
      const { rowId, key } = this.generationTarget(doc, span);
      await this.settle(rowId, key);
    }
  }

  deliveryTarget(workspaceId: ObjectId, deliveryId: ObjectId, attempt: number, at: Date, span: StatsSpan = 'hour') {
    const parts = [workspaceId.toHexString(), spanStart(at, span).toISOString(), 'delivery'];
    return {
      rowId: deterministicObjectId('stats', ...(span === 'hour' ? parts : ['day', ...parts])),
      key: `dlv:${deliveryId.toHexString()}:${attempt}`,
    };
  }

  /** Counts one recorded delivery attempt once (by delivery and attempt number). */
  async countDeliveryAttempt(
    workspaceId: ObjectId,
    deliveryId: ObjectId,
    attempt: number,
    at: Date,
    outcome: DeliveryOutcome,
  ): Promise<boolean> {
    let counted = false;
    for (const span of SPANS) {
      const { rowId, key } = this.deliveryTarget(workspaceId, deliveryId, attempt, at, span);
      const applied = await this.applyOnce(
        rowId,
        key,
        { [outcome]: 1 },
        {},
        { workspaceId, span, hour: spanStart(at, span), kind: 'delivery' },
      );
      counted ||= applied;
    }
    return counted;
  }

  async settleDeliveryAttempt(workspaceId: ObjectId, deliveryId: ObjectId, attempt: number, at: Date): Promise<void> {
    for (const span of SPANS) {
      const { rowId, key } = this.deliveryTarget(workspaceId, deliveryId, attempt, at, span);
      await this.settle(rowId, key);
    }
  }

  /**
   * Deletes the hour rows older than HOUR_ROWS_KEPT_MS, of every workspace (a range on the
   * span_hour index). Keeps the collection at about three days of hour rows plus the day rows.
   */
  async deleteExpiredHours(now = new Date()): Promise<number> {
    const result = await this.collection.deleteMany({
      span: 'hour',
      hour: { $lt: new Date(now.getTime() - HOUR_ROWS_KEPT_MS) },
    });
    return result.deletedCount;
  }

  /** One workspace's counter rows of one span in [from, to): a range on the workspace_span_hour index. */
  range(workspaceId: ObjectId, from: Date, to: Date, span: StatsSpan = 'hour'): Promise<StatsDoc[]> {
    return this.collection
      .find({ workspaceId, hour: { $gte: from, $lt: to }, span }, { projection: { applied: 0 } })
      .toArray() as Promise<StatsDoc[]>;
  }

  /**
   * The one conditional upsert (see the header). Two first events of a new row race to insert
   * it; the loser gets a duplicate-key error and tries again against the row now there,
   * unless its key is already in it (then it was applied before).
   */
  private async applyOnce(
    rowId: ObjectId,
    key: string,
    inc: Record<string, number>,
    set: Record<string, unknown>,
    identity: Record<string, unknown>,
  ): Promise<boolean> {
    const update = {
      $inc: inc,
      ...(Object.keys(set).length > 0 ? { $set: set } : {}),
      $setOnInsert: identity,
      $push: { applied: key },
    } as unknown as UpdateFilter<StatsDoc>;
    for (let tries = 0; tries < 4; tries++) {
      try {
        const result = await this.collection.updateOne({ _id: rowId, applied: { $ne: key } }, update, {
          upsert: true,
        });
        return result.modifiedCount + result.upsertedCount > 0;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        const row = await this.collection.findOne({ _id: rowId }, { projection: { applied: 1 } });
        if (row?.applied.includes(key)) return false;
      }
    }
    throw new Error('could not update a statistics row under contention');
  }

  private async settle(rowId: ObjectId, key: string): Promise<void> {
    await this.collection.updateOne({ _id: rowId }, { $pull: { applied: key } });
  }
}
