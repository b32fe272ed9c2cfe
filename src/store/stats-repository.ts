// Pre-aggregated workspace statistics (docs/architecture.md#workspace-statistics): hourly
// counter rows per workspace, template and final status (generations), and per workspace
// (webhook delivery attempts). Written when something becomes final, read by
// GetWorkspaceStats as a range of one workspace's hours: a 30-day period reads at most
// 720 × (templates × 2 + 1) small rows, however many generations the workspace has.
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

export interface StatsDoc {
  /** deterministicObjectId('stats', workspace, hour, kind, template, status). */
  _id: ObjectId;
  workspaceId: ObjectId;
  /** Start of the hour (UTC). */
  hour: Date;
  kind: 'generation' | 'delivery';
  /** Generations: the template (null when the generation named none that existed). */
  templateId?: ObjectId | null;
  templateName?: string;
  status?: 'COMPLETED' | 'FAILED';
  /** Generations that became final with this status, created in this hour. */
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

  /** The counter row a final generation is counted in, and its event key. */
  generationTarget(doc: FinalGeneration): { rowId: ObjectId; key: string } {
    const template = doc.templateId ? doc.templateId.toHexString() : `ref:${doc.templateRef}`;
    const hour = hourOf(doc.createdAt).toISOString();
    return {
      rowId: deterministicObjectId('stats', doc.workspaceId.toHexString(), hour, 'generation', template, doc.status),
      key: `gen:${doc._id.toHexString()}`,
    };
  }

  /** Counts a final (COMPLETED or FAILED) generation once; false when it already was. */
  async countGeneration(doc: FinalGeneration): Promise<boolean> {
    if (doc.status !== 'COMPLETED' && doc.status !== 'FAILED') return false;
    const { rowId, key } = this.generationTarget(doc);
    const latencyMs = Math.max(0, doc.updatedAt.getTime() - doc.createdAt.getTime());
    const inc: Record<string, number> = { count: 1, [`latency.${bucketField(latencyBucket(latencyMs))}`]: 1 };
    const set: Record<string, unknown> = { templateName: doc.templateName };
    if (doc.status === 'FAILED') {
      const code = codeField(doc.errorCode);
      inc[`causes.${code}`] = 1;
      set[`causeMessages.${code}`] = (doc.error ?? '').slice(0, 300);
    }
    return this.applyOnce(rowId, key, inc, set, {
      workspaceId: doc.workspaceId,
      hour: hourOf(doc.createdAt),
      kind: 'generation',
      templateId: doc.templateId,
      status: doc.status,
    });
  }

  settleGeneration(doc: FinalGeneration): Promise<void> {
    const { rowId, key } = this.generationTarget(doc);
    return this.settle(rowId, key);
  }

  deliveryTarget(workspaceId: ObjectId, deliveryId: ObjectId, attempt: number, at: Date) {
    return {
      rowId: deterministicObjectId('stats', workspaceId.toHexString(), hourOf(at).toISOString(), 'delivery'),
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
    const { rowId, key } = this.deliveryTarget(workspaceId, deliveryId, attempt, at);
    return this.applyOnce(
      rowId,
      key,
      { [outcome]: 1 },
      {},
      {
        workspaceId,
        hour: hourOf(at),
        kind: 'delivery',
      },
    );
  }

  settleDeliveryAttempt(workspaceId: ObjectId, deliveryId: ObjectId, attempt: number, at: Date): Promise<void> {
    const { rowId, key } = this.deliveryTarget(workspaceId, deliveryId, attempt, at);
    return this.settle(rowId, key);
  }

  /** One workspace's counter rows of [from, to): a range on the workspace_hour index. */
  range(workspaceId: ObjectId, from: Date, to: Date): Promise<StatsDoc[]> {
    return this.collection
      .find({ workspaceId, hour: { $gte: from, $lt: to } }, { projection: { applied: 0 } })
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
