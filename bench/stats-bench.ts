// `npm run bench:stats`: how fast GetWorkspaceStats answers for a workspace with many
// generations, on the embedded MongoDB stand-in (which scans whole collections).
//
// The workspace gets BENCH_GENERATIONS generation rows (default 100,000) spread over the
// last 30 days, two templates, a tenth failed with one of three error codes, a few still
// queued, plus the counter rows those generations produce (one per hour, template and final
// status: what the render role writes as each becomes final, src/store/stats-repository.ts),
// and the delivery counter rows of one endpoint. Then it times WorkspaceStatsService.get,
// the whole server side of the RPC, for each period (BENCH_CALLS calls each, default 40).
// As a baseline measured in the same run: one get-by-id on the generations collection (what
// GET /v1/generations/{id} costs on the stand-in at this size).
import { MongoClient, ObjectId } from 'mongodb';
import { startEmbeddedMongo } from '../src/dev/embedded-mongo.ts';
import { bucketField, latencyBucket } from '../src/domain/latency-histogram.ts';
import { GenerationsRepository } from '../src/store/generations-repository.ts';
import { COLLECTIONS } from '../src/store/documents.ts';
import { StatsRepository, hourOf, spanStart, type StatsDoc } from '../src/store/stats-repository.ts';
import { WorkspacesRepository } from '../src/store/workspaces-repository.ts';
import { WorkspaceStatsService, type StatsPeriod } from '../src/stats/workspace-stats.ts';
import { formatId } from '../src/domain/ids.ts';
import { formatTable, percentile } from './lib/measure.ts';

const GENERATIONS = Number(process.env.BENCH_GENERATIONS ?? 100_000);
const CALLS = Number(process.env.BENCH_CALLS ?? 40);
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
  const service = new WorkspaceStatsService({ workspaces, stats, generations });
  const workspace = await workspaces.create('bench');
  const templates = [
    { id: new ObjectId(), name: 'Invoice' },
    { id: new ObjectId(), name: 'Shipping label' },
  ];
  const now = Date.now();
  const counters = new Map<string, StatsDoc>();
  const generationRows = db.collection(COLLECTIONS.generations);
  let batch: object[] = [];
  for (let i = 0; i < GENERATIONS; i++) {
    const template = templates[i % 2]!;
    const createdAt = new Date(now - Math.floor((i / GENERATIONS) * 30 * DAY_MS) - 1000);
    const queued = i < 20;
    const failed = !queued && i % 10 === 3;
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
    const status = queued ? (i % 2 ? 'PENDING' : 'PROCESSING') : failed ? 'FAILED' : 'COMPLETED';
    const code = CODES[i % 3]!;
    Object.assign(doc, {
      status,
      updatedAt: new Date(createdAt.getTime() + latencyMs),
      error: failed ? `${code}: something went wrong` : null,
      errorCode: failed ? code : null,
      eventPublished: queued ? null : true,
    });
    batch.push(doc);
    // The unfinished ones also have their queue row, as GenerationsRepository.insert writes it.
    if (queued) {
      await db
        .collection(COLLECTIONS.generationQueue)
        .insertOne({ _id: doc._id, workspaceId: workspace._id, status, createdAt });
    } else {
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
  console.error(`stats bench: ${GENERATIONS} generations, ${counters.size} counter rows stored`);

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
  const wsId = formatId('workspace', workspace._id);
  for (const period of ['24h', '7d', '30d'] as StatsPeriod[]) {
    await time(`GetWorkspaceStats ${period}`, () => service.get(wsId, period));
  }
  const check = await service.get(wsId, '30d');
  console.log(
    `MongoDB stand-in (CongoDB): GetWorkspaceStats with ${GENERATIONS} generations in the workspace ` +
      `(${counters.size} counter rows); ${CALLS} calls each`,
  );
  console.log(formatTable(['query', 'p50 ms', 'p95 ms'], rows));
  console.log(
    `30 d answer: ${check.completed} completed, ${check.failed} failed, queue ${check.queue.pending} pending / ${check.queue.processing} processing`,
  );
} finally {
  await client.close();
  await mongo.stop();
}
