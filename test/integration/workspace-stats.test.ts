// Workspace statistics against the real data layer (MongoDB stand-in or DOCGEN_TEST_MONGODB_URL):
// generations driven through the state machine are counted once when final, whatever is
// repeated (a retried count, two processes counting at once, a crash between counting and
// settling); GetWorkspaceStats' numbers match what listing the generations says; delivery
// attempts a crash left uncounted are counted by the delivery sweeper, once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectId } from 'mongodb';
import { percentileMs, latencyBucket, bucketField } from '../../src/domain/latency-histogram.ts';
import { BatchesRepository } from '../../src/store/batches-repository.ts';
import { DeliveriesRepository } from '../../src/store/deliveries-repository.ts';
import type { GenerationDoc } from '../../src/store/documents.ts';
import { GenerationQueueRepository } from '../../src/store/generation-queue-repository.ts';
import { GenerationsRepository } from '../../src/store/generations-repository.ts';
import { connectMongo, type MongoConnection } from '../../src/store/mongo.ts';
import { StatsRepository } from '../../src/store/stats-repository.ts';
import { WorkspacesRepository } from '../../src/store/workspaces-repository.ts';
import { WorkspaceStatsService, periodBounds } from '../../src/stats/workspace-stats.ts';
import { DeliverySweeper } from '../../src/webhooks/delivery-sweeper.ts';
import { newDeliveryDoc } from '../../src/webhooks/delivery-dispatcher.ts';
import { formatId } from '../../src/domain/ids.ts';
import { startMongo, type TestMongo } from '../harness/dependencies.ts';

let mongo: TestMongo;
let conn: MongoConnection;
let generations: GenerationsRepository;
let deliveries: DeliveriesRepository;
let stats: StatsRepository;
let workspaces: WorkspacesRepository;
let service: WorkspaceStatsService;

beforeAll(async () => {
  mongo = await startMongo();
  conn = await connectMongo({ url: mongo.url, database: mongo.database });
  generations = new GenerationsRepository(conn.db);
  deliveries = new DeliveriesRepository(conn.db);
  stats = new StatsRepository(conn.db);
  workspaces = new WorkspacesRepository(conn.db);
  service = new WorkspaceStatsService({ workspaces, stats, generations, batches: new BatchesRepository(conn.db) });
});

afterAll(async () => {
  await conn?.close();
  await mongo?.stop();
});

async function newWorkspace(): Promise<ObjectId> {
  return (await workspaces.create('stats'))._id;
}

/** A generation driven PENDING → PROCESSING → final through the repository's transitions. */
async function finished(
  workspaceId: ObjectId,
  template: { id: ObjectId; name: string },
  outcome: { status: 'COMPLETED' } | { status: 'FAILED'; code: string; error: string },
  createdAt: Date,
  retries = 0,
): Promise<GenerationDoc> {
  const doc = generations.newDoc(
    {
      workspaceId,
      templateId: template.id,
      templateRef: formatId('template', template.id),
      templateName: template.name,
      data: {},
    },
    createdAt,
  );
  await generations.insert(doc);
  for (let attempt = 0; attempt <= retries; attempt++) {
    expect(await generations.claim(doc._id, 'worker', 60_000)).not.toBeNull();
    if (attempt < retries)
      await generations.releaseForRetry(doc._id, 'worker', 'browser went away', new Date(0), 'BROWSER_CRASHED');
  }
  const final =
    outcome.status === 'COMPLETED'
      ? await generations.complete(doc._id, 'worker', 'key', 1)
      : await generations.fail(doc._id, 'worker', outcome.error, 1, outcome.code);
  return final!;
}

describe('workspace statistics', () => {
  it('counts each final generation once and answers what the generations list says', async () => {
    const ws = await newWorkspace();
    const invoice = { id: new ObjectId(), name: 'Invoice' };
    const letter = { id: new ObjectId(), name: 'Letter' };
    const now = new Date();
    const finals: GenerationDoc[] = [];
    for (let i = 0; i < 12; i++)
      finals.push(await finished(ws, invoice, { status: 'COMPLETED' }, new Date(now.getTime() - i * 600_000), i % 3));
    for (let i = 0; i < 5; i++)
      finals.push(
        await finished(
          ws,
          letter,
          { status: 'FAILED', code: 'LIQUID_ERROR', error: `Liquid syntax error line ${i}` },
          new Date(now.getTime() - i * 3_600_000),
        ),
      );
    finals.push(
      await finished(
        ws,
        letter,
        { status: 'FAILED', code: 'RENDER_TIMEOUT', error: 'Rendering took longer than 8 s' },
        now,
      ),
    );
    finals.push(await finished(ws, letter, { status: 'COMPLETED' }, new Date(now.getTime() - 2 * 86_400_000)));

    // Counted the way the pipeline does, with every repetition a crash or a race can cause.
    for (const doc of finals) {
      await Promise.all([stats.countGeneration(doc), stats.countGeneration(doc)]); // two processes at once
      await stats.countGeneration(doc); // the outbox sweeper after a crash before settling
      await stats.settleGeneration(doc);
    }
    const rows = await stats.range(ws, new Date(0), new Date(Date.now() + 3_600_000));
    expect(rows.every((r) => r.applied === undefined)).toBe(true); // `applied` is never read out
    const inFlight = await conn.db.collection('workspace_stats').find({ workspaceId: ws }).toArray();
    expect(inFlight.flatMap((r) => r.applied as string[])).toEqual([]); // every key settled

    const day = await service.get(formatId('workspace', ws), '24h');
    const { start, end } = periodBounds('24h', new Date());
    expect(day.periodStart).toEqual(start);
    const listed = await countListed(ws, start, end);
    expect({ completed: day.completed, failed: day.failed }).toEqual(listed);
    expect(day.completed).toBe(12);
    expect(day.failed).toBe(6);
    expect(day.buckets).toHaveLength(24);
    expect(day.buckets.reduce((n, b) => n + b.completed + b.failed, 0)).toBe(18);
    expect(day.failureCauses).toEqual([
      { code: 'LIQUID_ERROR', count: 5, message: 'Liquid syntax error line 0' },
      { code: 'RENDER_TIMEOUT', count: 1, message: 'Rendering took longer than 8 s' },
    ]);
    expect(day.templateLatencies.map((t) => [t.templateName, t.count])).toEqual([
      ['Invoice', 12],
      ['Letter', 6],
    ]);
    for (const t of day.templateLatencies) expect(t.p95Ms).toBeGreaterThanOrEqual(t.p50Ms);

    const week = await service.get(formatId('workspace', ws), '7d');
    expect(week.buckets).toHaveLength(7);
    expect(week.bucketSeconds).toBe(86_400);
    expect(week.completed).toBe(13);
    expect({ completed: week.completed, failed: week.failed }).toEqual(
      await countListed(ws, week.periodStart, week.periodEnd),
    );
  });

  it('deletes hour rows past three days; the day rows keep the history', async () => {
    const ws = await newWorkspace();
    const template = { id: new ObjectId(), name: 'Invoice' };
    const old = await finished(ws, template, { status: 'COMPLETED' }, new Date(Date.now() - 4 * 86_400_000));
    const recent = await finished(ws, template, { status: 'COMPLETED' }, new Date());
    for (const doc of [old, recent]) await stats.countGeneration(doc);
    const spans = async () =>
      (await conn.db.collection('workspace_stats').find({ workspaceId: ws }).toArray()).map(
        (r) => `${r.span as string} ${(r.hour as Date).getTime() < Date.now() - 86_400_000 ? 'old' : 'recent'}`,
      );
    expect((await spans()).sort()).toEqual(['day old', 'day recent', 'hour old', 'hour recent']);
    expect(await stats.deleteExpiredHours()).toBeGreaterThanOrEqual(1);
    expect((await spans()).sort()).toEqual(['day old', 'day recent', 'hour recent']);
    expect((await service.get(formatId('workspace', ws), '7d')).completed).toBe(2);
    expect((await service.get(formatId('workspace', ws), '24h')).completed).toBe(1);
  });

  it('reports the queue now: pending, processing and the oldest wait', async () => {
    const ws = await newWorkspace();
    const old = new Date(Date.now() - 90_000);
    const a = generations.newDoc(
      { workspaceId: ws, templateId: null, templateRef: 'tpl_x', templateName: 'x', data: {} },
      old,
    );
    const b = generations.newDoc({
      workspaceId: ws,
      templateId: null,
      templateRef: 'tpl_x',
      templateName: 'x',
      data: {},
    });
    await generations.insert(a);
    await generations.insert(b);
    await generations.claim(b._id, 'worker', 60_000);
    const { queue } = await service.get(formatId('workspace', ws), '24h');
    expect(queue.pending).toBe(1);
    expect(queue.processing).toBe(1);
    expect(queue.oldestWaitMs).toBeGreaterThanOrEqual(90_000);
  });

  it('keeps the queue counts once through repeats, batches, crashes and the sweeper', async () => {
    const ws = await newWorkspace();
    const label = formatId('workspace', ws);
    const newGeneration = (createdAt = new Date()) =>
      generations.newDoc(
        { workspaceId: ws, templateId: null, templateRef: 'tpl_x', templateName: 'x', data: {} },
        createdAt,
      );
    const queueNow = async () => (await service.get(label, '24h')).queue;
    const rows = conn.db.collection('generation_queue');

    // A batch's items, stored twice (a retried create): counted once each.
    const items = Array.from({ length: 20 }, () => newGeneration());
    await generations.insertManyOnce(items);
    await generations.insertManyOnce(items);
    expect(await queueNow()).toMatchObject({ pending: 20, processing: 0 });

    // Claims, a second claim of a lease-expired row, finals repeated by the outbox flag.
    for (const item of items.slice(0, 5)) await generations.claim(item._id, 'w1', 60_000);
    await generations.claim(items[0]!._id, 'w2', 60_000, new Date(Date.now() + 120_000));
    expect(await queueNow()).toMatchObject({ pending: 15, processing: 5 });
    await generations.complete(items[1]!._id, 'w1', 'key', 1);
    await generations.markEventPublished(items[1]!._id);
    await generations.markEventPublished(items[1]!._id);
    await generations.fail(items[5]!._id, null, 'template gone', 1, 'TEMPLATE_UNAVAILABLE');
    expect(await queueNow()).toMatchObject({ pending: 14, processing: 4 });

    // The API process dies after writing the queue row, before the generation: the row is
    // not counted, and the sweeper removes it once its grace is over.
    const lost = newGeneration();
    await conn.db.collection('generation_queue').insertOne({
      _id: lost._id,
      workspaceId: ws,
      status: 'PENDING',
      createdAt: lost.createdAt,
      counted: null,
      stored: false,
      dirtySince: new Date(Date.now() - 180_000),
    });
    // …and one whose create is stalled (a failover): too young to be judged.
    const stalled = newGeneration();
    await rows.insertOne({
      _id: stalled._id,
      workspaceId: ws,
      status: 'PENDING',
      createdAt: stalled.createdAt,
      counted: null,
      stored: false,
      dirtySince: new Date(Date.now() - 30_000),
    });
    // …and another dies after inserting its generation, before counting it.
    const uncounted = newGeneration(new Date(Date.now() - 600_000));
    await rows.insertOne({
      _id: uncounted._id,
      workspaceId: ws,
      status: 'PENDING',
      createdAt: uncounted.createdAt,
      counted: null,
      stored: false,
      dirtySince: new Date(Date.now() - 180_000),
    });
    await conn.db.collection('generations').insertOne(uncounted);
    // …and a render process dies between a claim and its count.
    await conn.db
      .collection('generations')
      .updateOne({ _id: items[10]!._id }, { $set: { status: 'PROCESSING', leaseOwner: 'gone' } });
    await rows.updateOne(
      { _id: items[10]!._id },
      { $set: { status: 'PROCESSING', dirtySince: new Date(Date.now() - 60_000) } },
    );
    const before = await queueNow();
    expect(before).toMatchObject({ pending: 14, processing: 4 });
    expect(before.oldestWaitMs).toBeLessThan(300_000); // the row of an unstored generation is not "oldest"

    const repaired = await generations.repairQueue(new Date(), 5_000);
    expect(repaired).toEqual({ synced: 2, removed: 1 });
    expect(await generations.repairQueue(new Date(), 5_000)).toEqual({ synced: 0, removed: 0 });
    const after = await queueNow();
    expect(after).toMatchObject({ pending: 14, processing: 5 });
    expect(after.oldestWaitMs).toBeGreaterThanOrEqual(600_000);
    expect(await rows.countDocuments({ _id: lost._id })).toBe(0);
    expect(await rows.countDocuments({ _id: stalled._id })).toBe(1);
    // Two minutes on, its create has still not written the generation: it goes too.
    expect(await generations.repairQueue(new Date(Date.now() + 150_000), 5_000)).toEqual({ synced: 0, removed: 1 });
    expect(await rows.countDocuments({ _id: stalled._id })).toBe(0);

    // A claim counted, and the process died before the row moved on (its key still in the
    // counter document, the row still saying PENDING): the sweeper's repeat changes no number,
    // and everything ends in line.
    await generations.claim(items[12]!._id, 'w1', 60_000);
    const counts = conn.db.collection('generation_queue_counts');
    const claimedRow = items[12]!._id;
    const key = `${claimedRow.toHexString()}:PENDING`;
    const counted = await queueNow();
    await counts.updateOne({ _id: GenerationQueueRepository.countsIdOf({ _id: claimedRow, workspaceId: ws }) }, {
      $push: { applied: { k: key, to: 'PROCESSING' } },
    } as never);
    await rows.updateOne(
      { _id: claimedRow },
      { $set: { counted: 'PENDING', dirtySince: new Date(Date.now() - 60_000) } },
    );
    expect(await generations.repairQueue(new Date(), 5_000)).toEqual({ synced: 1, removed: 0 });
    expect(await queueNow()).toEqual({ ...counted, oldestWaitMs: expect.any(Number) });
    expect(await counts.countDocuments({ workspaceId: ws, 'applied.0': { $exists: true } })).toBe(0);
    expect(await rows.countDocuments({ workspaceId: ws, dirtySince: { $ne: null } })).toBe(0);

    // The counts are what the generations say.
    const listed = async (status: string) =>
      conn.db.collection('generations').countDocuments({ workspaceId: ws, status });
    expect(await queueNow()).toMatchObject({
      pending: await listed('PENDING'),
      processing: await listed('PROCESSING'),
    });

    // Everything final: the queue is empty.
    const open = await conn.db
      .collection('generations')
      .find({ workspaceId: ws, status: { $in: ['PENDING', 'PROCESSING'] } })
      .toArray();
    for (const g of open) await generations.fail(g._id, null, 'stopped', 1, 'INTERNAL');
    expect(await queueNow()).toEqual({ pending: 0, processing: 0, oldestWaitMs: 0 });
    expect(await rows.countDocuments({ workspaceId: ws })).toBe(0);
  });

  it('lists the batches in progress, newest first, from their own counters', async () => {
    const ws = await newWorkspace();
    const batches = new BatchesRepository(conn.db);
    const batch = async (opts: { total: number; test?: boolean; stored?: boolean; at: number }) => {
      const doc = batches.newDoc(
        { _id: new ObjectId(), workspaceId: ws, total: opts.total, merge: false, itemEvents: true, test: opts.test },
        new Date(opts.at),
      );
      await batches.insertOnce(doc);
      if (opts.stored !== false) await batches.markItemsStored(doc._id);
      return doc._id;
    };
    const t = Date.now();
    const older = await batch({ total: 3, at: t - 60_000 });
    const running = await batch({ total: 5, at: t - 1_000 });
    await batches.countItem(running, 0, 'COMPLETED');
    await batches.countItem(running, 1, 'COMPLETED');
    await batches.countItem(running, 4, 'FAILED');
    const done = await batch({ total: 1, at: t - 2_000 });
    await batches.countItem(done, 0, 'COMPLETED');
    await batches.complete(done, null);
    await batch({ total: 2, test: true, at: t - 3_000 }); // a test key's
    await batch({ total: 2, stored: false, at: t - 4_000 }); // its create has not written its items yet

    const { batchesInProgress } = await service.get(formatId('workspace', ws), '24h');
    expect(batchesInProgress.map((b) => ({ ...b, createdAt: b.createdAt.getTime() }))).toEqual([
      { id: formatId('batch', running), total: 5, completed: 2, failed: 1, createdAt: t - 1_000 },
      { id: formatId('batch', older), total: 3, completed: 0, failed: 0, createdAt: t - 60_000 },
    ]);
  });

  it('counts delivery attempts once; the sweeper counts what a crash left flagged', async () => {
    const ws = await newWorkspace();
    const endpointId = new ObjectId();
    const event = {
      eventId: formatId('event', new ObjectId()),
      event: 'generation.completed',
      generationId: formatId('generation', new ObjectId()),
      workspaceId: formatId('workspace', ws),
      timestamp: Math.floor(Date.now() / 1000),
    };
    const doc = newDeliveryDoc(event as never, endpointId, new Date());
    await deliveries.insertOnce(doc);
    const attempt = (n: number, ok: boolean) => ({
      number: n,
      attemptedAt: new Date(),
      statusCode: ok ? 200 : 500,
      error: '',
      durationMs: 5,
    });
    // Attempt 1 fails (retried), counted normally by the worker's path.
    const after1 = await deliveries.recordAttempt(doc._id, doc.round, 0, attempt(1, false), {
      status: 'PENDING',
      nextAttemptAt: new Date(),
    });
    await stats.countDeliveryAttempt(ws, doc._id, 1, after1!.statsDue!.at, 'retried');
    await stats.countDeliveryAttempt(ws, doc._id, 1, after1!.statsDue!.at, 'retried');
    await deliveries.markAttemptCounted(doc._id, 1);
    await stats.settleDeliveryAttempt(ws, doc._id, 1, after1!.statsDue!.at);
    // Attempt 2 succeeds, and the process dies before counting it.
    await deliveries.recordAttempt(doc._id, doc.round, 1, attempt(2, true), { status: 'SUCCEEDED' });
    const sweeper = new DeliverySweeper({
      deliveries,
      stats,
      publishJob: async () => {},
      intervalMs: 60_000,
      graceMs: 0,
    });
    await sweeper.sweepOnce();
    await sweeper.sweepOnce(); // nothing left flagged: no second count
    const day = await service.get(formatId('workspace', ws), '24h');
    expect(day.deliveries).toEqual({ succeeded: 1, retried: 1, dropped: 0 });
    expect((await deliveries.get(doc._id))!.statsDue).toBeNull();
  });
});

describe('latency histogram', () => {
  it('reads percentiles within the bucket precision', () => {
    const counts: Record<string, number> = {};
    const samples = Array.from({ length: 1000 }, (_, i) => 200 + i * 5); // 200 ms … 5195 ms
    for (const ms of samples)
      counts[bucketField(latencyBucket(ms))] = (counts[bucketField(latencyBucket(ms))] ?? 0) + 1;
    const p50 = percentileMs(counts, 50)!;
    const p95 = percentileMs(counts, 95)!;
    expect(Math.abs(p50 - 2700) / 2700).toBeLessThan(0.2);
    expect(Math.abs(p95 - 4950) / 4950).toBeLessThan(0.2);
    expect(percentileMs({}, 50)).toBeNull();
  });
});

/** The generations themselves, counted by the database (what the list pages through). */
async function countListed(
  workspaceId: ObjectId,
  from: Date,
  to: Date,
): Promise<{ completed: number; failed: number }> {
  const rows = conn.db.collection('generations');
  const count = (status: string) => rows.countDocuments({ workspaceId, status, createdAt: { $gte: from, $lt: to } });
  return { completed: await count('COMPLETED'), failed: await count('FAILED') };
}
