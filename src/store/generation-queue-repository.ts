// A workspace's queue now (pending, rendering, oldest wait: GetWorkspaceStats), kept as
// bookkeeping that is read without scanning, however long the queue
// (docs/architecture.md#workspace-statistics):
//
// - `generation_queue`: one small row per unfinished generation, WRITTEN BEFORE the generation
//   (so a process dying in between leaves a row the sweeper can judge, never a generation the
//   queue does not know). The oldest wait is the first row of the workspace on the
//   `workspace_status_created` index (two index ranges merged, one entry read).
// - `generation_queue_counts`: per workspace, QUEUE_COUNT_SHARDS counter documents (a busy
//   workspace's updates spread over them) holding `pending` and `processing`; read by _id and
//   summed.
//
// Counted once, without transactions. A row says what it is (`status`: PENDING, PROCESSING,
// DONE) and what the counters hold for it (`counted`: null, PENDING, PROCESSING). `sync`
// brings the counters in line: one conditional update of the counter document keyed by the
// generation and the state it leaves (`{_id, 'applied.k': {$ne: key}}` → `$inc`, `$push`),
// then `counted` moves on (a DONE row is deleted), then the key is pulled again. A row only
// moves forward, so a key is never needed twice; repeating a sync (a retry, the sweeper after
// a crash) finds the key and, from it, where the row went, and changes no count. Every change
// sets `dirtySince`; a row in line is clean (`dirtySince: null`), and the outbox sweeper
// finishes rows left dirty (`repair`): a crashed sync, a claim or final whose sync did not run,
// and rows whose generation was never written (the create died first), which it removes.
import type { Db, ObjectId } from 'mongodb';
import { deterministicObjectId } from '../domain/ids.ts';
import { COLLECTIONS, type GenerationQueueCountsDoc, type GenerationQueueDoc } from './documents.ts';
import { isDuplicateKeyError } from './mongo.ts';

/**
 * A row whose generation is not written yet is judged only after this long: a create may
 * stall through a failover (its insert has DOCGEN_MONGODB_OPERATION_TIMEOUT_MS, 30 s).
 */
export const UNSTORED_GRACE_MS = 2 * 60_000;

/** Counter documents per workspace: updates of one busy workspace spread over this many. */
export const QUEUE_COUNT_SHARDS = 8;

type Counted = 'PENDING' | 'PROCESSING';
const FIELD: Record<Counted, 'pending' | 'processing'> = { PENDING: 'pending', PROCESSING: 'processing' };

export interface QueueState {
  pending: number;
  processing: number;
  /** Creation time of the oldest unfinished generation; null when none. */
  oldest: Date | null;
}

/** What the sweeper found and did. */
export interface QueueRepair {
  /** Rows brought in line with their generation. */
  synced: number;
  /** Rows removed: their generation was never written, or is final already. */
  removed: number;
}

export class GenerationQueueRepository {
  private readonly rows;
  private readonly counts;
  private readonly generations;
  constructor(db: Db) {
    this.rows = db.collection<GenerationQueueDoc>(COLLECTIONS.generationQueue);
    this.counts = db.collection<GenerationQueueCountsDoc>(COLLECTIONS.generationQueueCounts);
    this.generations = db.collection<{ _id: ObjectId; status: string }>(COLLECTIONS.generations);
  }

  static countsId(workspaceId: ObjectId, shard: number): ObjectId {
    return deterministicObjectId('generation-queue-counts', workspaceId.toHexString(), String(shard));
  }

  /** A generation's counter document: by the last byte of its id (an ObjectId's counter). */
  static countsIdOf(row: Pick<GenerationQueueDoc, '_id' | 'workspaceId'>): ObjectId {
    const id = row._id.id;
    return GenerationQueueRepository.countsId(row.workspaceId, id[id.length - 1]! % QUEUE_COUNT_SHARDS);
  }

  /**
   * Step 1 of a create: the rows of generations about to be inserted (PENDING, not counted,
   * not yet `stored`). Rows that exist (a retried create) are left as they are.
   */
  async add(
    generations: Array<{ _id: ObjectId; workspaceId: ObjectId; createdAt: Date; status?: string }>,
    now = new Date(),
  ) {
    // Only unfinished ones queue (a final row may be written as it is: imports, tests).
    const unfinished = generations.filter((g) => !g.status || g.status === 'PENDING' || g.status === 'PROCESSING');
    if (unfinished.length === 0) return;
    const docs: GenerationQueueDoc[] = unfinished.map((g) => ({
      _id: g._id,
      workspaceId: g.workspaceId,
      status: g.status === 'PROCESSING' ? 'PROCESSING' : 'PENDING',
      createdAt: g.createdAt,
      counted: null,
      stored: false,
      dirtySince: now,
    }));
    try {
      await this.rows.insertMany(docs, { ordered: false });
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
  }

  /**
   * Step 2, after the generations are inserted: they are stored, and counted as pending. A
   * batch's items are counted with one bulk write per step, not one round trip each.
   */
  async stored(ids: ObjectId[]): Promise<void> {
    if (ids.length === 0) return;
    if (ids.length === 1) {
      // One generation (the common create): one round trip to mark and read the row.
      const row = await this.rows.findOneAndUpdate(
        { _id: ids[0]! },
        { $set: { stored: true } },
        { returnDocument: 'after' },
      );
      if (row && row.dirtySince !== null) await this.syncRow(row);
      return;
    }
    await this.rows.updateMany({ _id: { $in: ids }, stored: false }, { $set: { stored: true } });
    const rows = await this.rows.find({ _id: { $in: ids }, dirtySince: { $ne: null } }).toArray();
    if (rows.length === 1) await this.syncRow(rows[0]!);
    else if (rows.length > 1) await this.syncMany(rows);
  }

  /** A claim moved the generation to PROCESSING. */
  async claimed(id: ObjectId, now = new Date()): Promise<void> {
    await this.rows.updateOne({ _id: id, status: 'PENDING' }, { $set: { status: 'PROCESSING', dirtySince: now } });
    await this.sync(id);
  }

  /** The generation is final (or erased): its row leaves the queue. Idempotent. */
  async finished(id: ObjectId, now = new Date()): Promise<void> {
    await this.rows.updateOne({ _id: id, status: { $ne: 'DONE' } }, { $set: { status: 'DONE', dirtySince: now } });
    await this.sync(id);
  }

  /** The workspace's queue now: QUEUE_COUNT_SHARDS documents by _id and one index entry. */
  async state(workspaceId: ObjectId): Promise<QueueState> {
    const ids = Array.from({ length: QUEUE_COUNT_SHARDS }, (_, shard) =>
      GenerationQueueRepository.countsId(workspaceId, shard),
    );
    const [shards, oldest] = await Promise.all([
      this.counts.find({ _id: { $in: ids } }, { projection: { pending: 1, processing: 1 } }).toArray(),
      this.rows
        .find(
          { workspaceId, status: { $in: ['PENDING', 'PROCESSING'] }, stored: { $ne: false } },
          { projection: { createdAt: 1 }, sort: { createdAt: 1 }, limit: 1 },
        )
        .toArray(),
    ]);
    return {
      // A negative sum can only be a count lost to a race the header describes: show none.
      pending: Math.max(
        0,
        shards.reduce((n, s) => n + (s.pending ?? 0), 0),
      ),
      processing: Math.max(
        0,
        shards.reduce((n, s) => n + (s.processing ?? 0), 0),
      ),
      oldest: oldest[0]?.createdAt ?? null,
    };
  }

  /**
   * The outbox sweeper's part: rows dirty for longer than `graceMs` (the normal path syncs
   * within milliseconds). A row never `stored` (after UNSTORED_GRACE_MS) is checked against
   * its generation: none means
   * the create died before inserting it, and the row is removed; a final one, the row is
   * removed; otherwise it is marked stored. Then the row is synced.
   */
  async repair(now: Date, graceMs: number, limit = 200): Promise<QueueRepair> {
    const result: QueueRepair = { synced: 0, removed: 0 };
    const dirty = await this.rows
      .find({ dirtySince: { $lt: new Date(now.getTime() - graceMs) } })
      .limit(limit)
      .toArray();
    const unstored = dirty.filter((r) => r.stored === false && r.status !== 'DONE').map((r) => r._id);
    const generations =
      unstored.length === 0
        ? []
        : await this.generations.find({ _id: { $in: unstored } }, { projection: { status: 1 } }).toArray();
    const statusOf = new Map(generations.map((g) => [g._id.toHexString(), g.status]));
    for (const row of dirty) {
      if (row.stored === false && row.status !== 'DONE') {
        if ((row.dirtySince?.getTime() ?? 0) > now.getTime() - UNSTORED_GRACE_MS) continue;
        const status = statusOf.get(row._id.toHexString());
        if (status === 'PENDING' || status === 'PROCESSING') {
          await this.rows.updateOne(
            { _id: row._id, stored: false },
            { $set: { stored: true, ...(status === 'PROCESSING' ? { status } : {}) } },
          );
        } else {
          await this.finished(row._id, now);
          result.removed++;
          continue;
        }
      }
      await this.sync(row._id);
      result.synced++;
    }
    return result;
  }

  private async sync(id: ObjectId): Promise<void> {
    const row = await this.rows.findOne({ _id: id });
    if (row) await this.syncRow(row);
  }

  /** Brings the counters in line with one row (see the header). */
  private async syncRow(start: GenerationQueueDoc): Promise<void> {
    let row: GenerationQueueDoc | null = start;
    for (let step = 0; row && step < 4; step++) {
      // Rows written before the counters have neither field: stored, and not counted.
      const counted = row.counted ?? null;
      if (row.stored === false && row.status !== 'DONE') return; // counted once its generation is written
      const target: Counted | null = row.status === 'DONE' ? null : row.status;
      if (counted === null && target === null) {
        await this.rows.deleteOne({ _id: row._id, status: 'DONE', counted: null });
        return;
      }
      if (counted === target) {
        await this.rows.updateOne(
          { _id: row._id, status: row.status, counted, stored: { $ne: false } },
          { $set: { dirtySince: null } },
        );
        return;
      }
      const key = `${row._id.toHexString()}:${counted ?? 'NEW'}`;
      const countsId = GenerationQueueRepository.countsIdOf(row);
      const inc: Record<string, number> = {};
      if (counted) inc[FIELD[counted]] = -1;
      if (target) inc[FIELD[target]] = 1;
      let movedTo: Counted | null = target;
      if (!(await this.apply(countsId, row.workspaceId, key, target, inc))) {
        // Applied before (a repeated sync): the counter document says where the row went.
        const entry = await this.counts.findOne(
          { _id: countsId, 'applied.k': key },
          { projection: { applied: { $elemMatch: { k: key } } } },
        );
        // (find by key: the stand-in's $elemMatch projection returns the whole array)
        const applied = entry?.applied?.find((e) => e.k === key);
        if (!applied) return; // settled by the sync that applied it, which moved the row on
        movedTo = applied.to;
      }
      const clean = await this.advance(row, movedTo);
      await this.counts.updateOne({ _id: countsId }, { $pull: { applied: { k: key } } });
      if (clean) return;
      row = await this.rows.findOne({ _id: row._id });
    }
  }

  /** After the count: `counted` moves on (clean if in line), or a DONE row goes. True when nothing is left to do. */
  private async advance(row: GenerationQueueDoc, to: Counted | null): Promise<boolean> {
    if (to === null) {
      return (await this.rows.deleteOne({ _id: row._id, status: 'DONE' })).deletedCount === 1;
    }
    const counted = row.counted ?? null;
    const inLine = row.stored !== false && row.status === to;
    const clean = await this.rows.updateOne(
      { _id: row._id, counted, status: row.status, stored: { $ne: false } },
      { $set: { counted: to, ...(inLine ? { dirtySince: null } : {}) } },
    );
    if (clean.matchedCount === 1) return inLine;
    await this.rows.updateOne({ _id: row._id, counted }, { $set: { counted: to } });
    return false;
  }

  /** The one conditional update of the counter document; false when the key was applied before. */
  private async apply(
    countsId: ObjectId,
    workspaceId: ObjectId,
    key: string,
    to: Counted | null,
    inc: Record<string, number>,
  ): Promise<boolean> {
    const update = () =>
      this.counts.updateOne(
        { _id: countsId, 'applied.k': { $ne: key } },
        { $inc: inc, $push: { applied: { k: key, to } } },
      );
    const first = await update();
    if (first.matchedCount === 1) return true;
    if (await this.ensureCounts([countsId], workspaceId)) return (await update()).matchedCount === 1;
    return false;
  }

  /** Creates missing counter documents (at zero); true when one was created. */
  private async ensureCounts(ids: ObjectId[], workspaceId: ObjectId): Promise<boolean> {
    let created = false;
    for (const _id of ids) {
      try {
        const result = await this.counts.updateOne(
          { _id },
          { $setOnInsert: { workspaceId, pending: 0, processing: 0, applied: [] } },
          { upsert: true },
        );
        created ||= result.upsertedCount === 1;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err; // two first upserts raced: it exists now
        created = true;
      }
    }
    return created;
  }

  /**
   * Many fresh rows (a batch's items) counted as pending in bulk: one bulk write of conditional
   * counter updates, one of the rows, one pull per counter document. Rows whose key was applied
   * before (a retried create) are finished one by one.
   */
  private async syncMany(rows: GenerationQueueDoc[]): Promise<void> {
    const fresh = rows.filter((r) => r.stored && r.counted === null && r.status === 'PENDING');
    const others = rows.filter((r) => !fresh.includes(r));
    if (fresh.length > 0) {
      const byCounts = new Map<string, { id: ObjectId; workspaceId: ObjectId; keys: string[] }>();
      for (const row of fresh) {
        const id = GenerationQueueRepository.countsIdOf(row);
        const entry = byCounts.get(id.toHexString()) ?? { id, workspaceId: row.workspaceId, keys: [] };
        entry.keys.push(`${row._id.toHexString()}:NEW`);
        byCounts.set(id.toHexString(), entry);
      }
      for (const { id, workspaceId } of byCounts.values()) await this.ensureCounts([id], workspaceId);
      await this.counts.bulkWrite(
        [...byCounts.values()].flatMap(({ id, keys }) =>
          keys.map((k) => ({
            updateOne: {
              filter: { _id: id, 'applied.k': { $ne: k } },
              update: { $inc: { pending: 1 }, $push: { applied: { k, to: 'PENDING' as const } } },
            },
          })),
        ),
        { ordered: false },
      );
      const ids = fresh.map((r) => r._id);
      await this.rows.updateMany(
        { _id: { $in: ids }, counted: null, status: 'PENDING', stored: true },
        { $set: { counted: 'PENDING', dirtySince: null } },
      );
      // Only the keys of rows that moved on are pulled: a row claimed meanwhile keeps its key,
      // and its own sync learns from it that it was counted as pending.
      const moved = await this.rows
        .find({ _id: { $in: ids }, counted: 'PENDING' }, { projection: { _id: 1 } })
        .toArray();
      const settled = new Set(moved.map((r) => `${r._id.toHexString()}:NEW`));
      for (const { id, keys } of byCounts.values()) {
        const done = keys.filter((k) => settled.has(k));
        // $pullAll of the exact entries (as pushed, same field order): the stand-in's $pull
        // knows no operator inside an element's field.
        const entries = done.map((k) => ({ k, to: 'PENDING' as const }));
        if (done.length > 0) await this.counts.updateOne({ _id: id }, { $pullAll: { applied: entries } });
      }
      for (const row of fresh) if (!settled.has(`${row._id.toHexString()}:NEW`)) await this.sync(row._id);
    }
    for (const row of others) await this.syncRow(row);
  }
}
