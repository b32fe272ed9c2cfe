// `npm run bench:stats`: how fast GetWorkspaceStats answers for a workspace with many
// generations, on the embedded MongoDB stand-in (which scans whole collections).
//
// The workspace gets BENCH_GENERATIONS generation rows (default 100,000) spread over the
// last 30 days, two templates, a tenth failed with one of three error codes, BENCH_QUEUED
// (default 20) still queued (half of them claimed) and written the way the API writes them
// (queue rows and counters: src/store/generation-queue-repository.ts), plus the counter rows
// the final ones produce (one per hour and per day, template and final status: what the
// render role writes as each becomes final, src/store/stats-repository.ts), and the delivery
// counter rows of one endpoint. Then it times WorkspaceStatsService.get, the whole server side
// of the RPC, for each period (BENCH_CALLS calls each, default 40), and each query it makes on
// its own (where the time goes). As baselines measured in the same run: one get-by-id on the
// generations collection (what GET /v1/generations/{id} costs on the stand-in, which reads by
// _id without a scan) and one query by another field (a scan of the collection at this size).
import { MongoClient, ObjectId } from 'mongodb';
import { startEmbeddedMongo } from '../src/dev/embedded-mongo.ts';
import { bucketField, latencyBucket } from '../src/domain/latency-histogram.ts';
import { BatchesRepository } from '../src/store/batches-repository.ts';
import { GenerationsRepository } from '../src/store/generations-repository.ts';
import { COLLECTIONS } from '../src/store/documents.ts';
import { StatsRepository, hourOf, spanStart, type StatsDoc } from '../src/store/stats-repository.ts';
import { WorkspacesRepository } from '../src/store/workspaces-repository.ts';
import { WorkspaceStatsService, periodBounds, type StatsPeriod } from '../src/stats/workspace-stats.ts';
import type { GenerationDoc } from '../src/store/documents.ts';
import { loadavg } from 'node:os';
import { formatId } from '../src/domain/ids.ts';
import { formatTable, percentile } from './lib/measure.ts';

const GENERATIONS = Number(process.env.BENCH_GENERATIONS ?? 100_000);
const CALLS = Number(process.env.BENCH_CALLS ?? 40);
const QUEUED = Number(process.env.BENCH_QUEUED ?? 20);
const DAY_MS = 86_400_000;
const CODES = ['LIQUID_ERROR', 'RENDER_TIMEOUT', 'TEMPLATE_UNAVAILABLE'];

const mongo = await startEmbeddedMongo();
const client = new MongoClient(mongo.url);
try {
  await client.connect();
  const db = client.db('bench');
  const workspaces = new WorkspacesRepository(db);
  const generations = new GenerationsRepository(db);
  const stats = new StatsRepository(db);
  const service = new WorkspaceStatsService({ workspaces, stats, generations, batches: new BatchesRepository(db) });
  const workspace = await workspaces.create('bench');
  const templates = [
    { id: new ObjectId(), name: 'Invoice' },
    { id: new ObjectId(), name: 'Shipping label' },
  ];
  const now = Date.now();
  const counters = new Map<string, StatsDoc>();
  const generationRows = db.collection(COLLECTIONS.generations);
  let batch: object[] = [];
  const queued: GenerationDoc[] = [];
  for (let i = 0; i < GENERATIONS; i++) {
    const template = templates[i % 2]!;
    const createdAt = new Date(now - Math.floor((i / GENERATIONS) * 30 * DAY_MS) - 1000);
    const isQueued = i < QUEUED;
    const failed = !isQueued && i % 10 === 3;
    const latencyMs = 400 + ((i * 7919) % 5000);
    const doc = generations.newDoc(
      {
        workspaceId: workspace._id,
        templateId: template.id,
        templateRef: formatId('template', template.id),
        templateName: template.name,
        data: { customer: `Customer ${i}`, total: i * 3.5 },
      },
      createdAt,
    );
    if (isQueued) {
      // Written and claimed the way the API and the render role do (queue rows and counters).
      queued.push(doc);
      continue;
    }
    const status = failed ? 'FAILED' : 'COMPLETED';
    const code = CODES[i % 3]!;
    Object.assign(doc, {
      status,
      updatedAt: new Date(createdAt.getTime() + latencyMs),
      error: failed ? `${code}: something went wrong` : null,
      errorCode: failed ? code : null,
      eventPublished: true,
    });
    batch.push(doc);
    {
      // The counter rows this generation is counted in (its hour and its day), as countGeneration writes them.
      for (const span of ['hour', 'day'] as const) {
        const { rowId } = stats.generationTarget(doc, span);
        const key = rowId.toHexString();
        const row: StatsDoc = counters.get(key) ?? {
          _id: rowId,
          workspaceId: workspace._id,
          span,
          hour: spanStart(createdAt, span),
          kind: 'generation',
          templateId: template.id,
          templateName: template.name,
          status: status as 'COMPLETED' | 'FAILED',
          count: 0,
          latency: {},
          applied: [],
        };
        row.count! += 1;
        const field = bucketField(latencyBucket(latencyMs));
        row.latency![field] = (row.latency![field] ?? 0) + 1;
        if (failed) {
          row.causes = { ...row.causes, [code]: (row.causes?.[code] ?? 0) + 1 };
          row.causeMessages = { ...row.causeMessages, [code]: `${code}: something went wrong` };
        }
        counters.set(key, row);
      }
    }
    if (batch.length === 2000) {
      await generationRows.insertMany(batch);
      batch = [];
    }
  }
  if (batch.length) await generationRows.insertMany(batch);
  for (let i = 0; i < queued.length; i += 2000) await generations.insertManyOnce(queued.slice(i, i + 2000));
  for (const [i, doc] of queued.entries()) if (i % 2 === 0) await generations.claim(doc._id, 'bench', 600_000);
  // Delivery attempts: one row per hour (and per day) with some of each outcome.
  for (let h = 0; h < 30 * 24; h++) {
    const hour = hourOf(new Date(now - h * 3_600_000));
    const { rowId: id } = stats.deliveryTarget(workspace._id, new ObjectId(), 1, hour, 'hour');
    counters.set(id.toHexString(), {
      _id: id,
      workspaceId: workspace._id,
      span: 'hour',
      hour,
      kind: 'delivery',
      succeeded: 120,
      retried: 6,
      dropped: 1,
      applied: [],
    });
  }
  for (let d = 0; d < 31; d++) {
    const day = spanStart(new Date(now - d * 86_400_000), 'day');
    const { rowId: id } = stats.deliveryTarget(workspace._id, new ObjectId(), 1, day, 'day');
    counters.set(id.toHexString(), {
      _id: id,
      workspaceId: workspace._id,
      span: 'day',
      hour: day,
      kind: 'delivery',
      succeeded: 2880,
      retried: 144,
      dropped: 24,
      applied: [],
    });
  }
  await db.collection<StatsDoc>(COLLECTIONS.workspaceStats).insertMany([...counters.values()]);
  // What the outbox sweeper keeps of them: hour rows of the last three days, every day row.
  const expired = await stats.deleteExpiredHours();
  const counterRows = counters.size - expired;
  console.error(
    `stats bench: ${GENERATIONS} generations, ${counterRows} counter rows kept (${expired} hour rows expired)`,
  );

  const rows: string[][] = [];
  const time = async (label: string, call: () => Promise<unknown>) => {
    for (let n = 0; n < 3; n++) await call(); // warm-up
    const times: number[] = [];
    for (let n = 0; n < CALLS; n++) {
      const started = performance.now();
      await call();
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    rows.push([label, percentile(times, 50).toFixed(1), percentile(times, 95).toFixed(1)]);
  };
  const anyId = (await generationRows.findOne({}, { projection: { _id: 1 } }))!._id;
  await time('baseline: one get-by-id on generations', () => generationRows.findOne({ _id: anyId }));
  await time('baseline: one query by another field (a scan of generations)', () =>
    generationRows.findOne({ outputKey: 'no such key' }),
  );
  const wsId = formatId('workspace', workspace._id);
  for (const period of ['24h', '7d', '30d'] as StatsPeriod[]) {
    await time(`GetWorkspaceStats ${period}`, () => service.get(wsId, period));
  }
  // Where the time goes: each query GetWorkspaceStats makes, on its own.
  const day = periodBounds('24h', new Date());
  const month = periodBounds('30d', new Date());
  await time('  its part: the workspace by id', () => workspaces.get(workspace._id));
  await time('  its part: 24 h of hour rows', () => stats.range(workspace._id, day.start, day.end, 'hour'));
  await time('  its part: 30 d of day rows', () => stats.range(workspace._id, month.start, month.end, 'day'));
  await time('  its part: the queue (counters, oldest)', () => generations.queueState(workspace._id));
  const check = await service.get(wsId, '30d');
  console.log(
    `MongoDB stand-in (CongoDB): GetWorkspaceStats with ${GENERATIONS} generations in the workspace ` +
      `(${counterRows} counter rows, ${QUEUED} queued); ${CALLS} calls each; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
  console.log(formatTable(['query', 'p50 ms', 'p95 ms'], rows));
  console.log(
    `30 d answer: ${check.completed} completed, ${check.failed} failed, queue ${check.queue.pending} pending / ${check.queue.processing} processing`,
  );
} finally {
  await client.close();
  await mongo.stop();
}
