// Issue 7: SIGTERM to a render process with renders in flight. Real `docgen serve` processes
// (api, render) on nats-server, the MongoDB stand-in, s3rver and Chromium. Renders of a
// ~20-page invoice take seconds, so several are running when the signal arrives.
// - Long grace: the in-flight renders finish on the stopping process, the rest of the queue
//   is rendered by a second one, the first exits 0 within the grace period.
// - Short grace: what is still rendering when the grace ends is handed back (lease released,
//   message nak'ed) and finishes on the second process at once, not after the lease expires.
//   A render that completes on the stopping process just as the grace ends is not handed back
//   (and not logged as such): the release finds its row final.
// Either way every generation ends COMPLETED exactly once, with one object in the bucket.
// The tests wait for events (log lines, rows, exits), not for the clock; the bounds on exit
// times are the feature's promise, with room for a loaded machine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoClient } from 'mongodb';
import { formatId } from '../../src/domain/ids.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { adminClients, postJson, startDeps, type Deps, workspaceWithKey } from './api-stack.ts';
import {
  bucketKeys,
  generationsCollection,
  invoiceTemplate,
  longInvoiceValues,
  probe,
  records,
  startRole,
  type RoleProcess,
} from './ops-stack.ts';

const LINES = 500;
// What is tested is the shutdown, not the time-outs: on a loaded machine four 20-page renders at
// once can take longer than the defaults, and a timed-out render would be retried elsewhere.
const RENDER_ENV = {
  DOCGEN_RENDER_CONCURRENCY: '4',
  DOCGEN_RENDER_TIMEOUT_MS: '120000',
  DOCGEN_LIQUID_TIMEOUT_MS: '30000',
};
let deps: Deps;
let mongo: MongoClient;
let api: RoleProcess;
const processes: RoleProcess[] = [];
let secret: string;
let templateId: string;
const created: string[] = [];

beforeAll(async () => {
  deps = await startDeps({ DOCGEN_RATE_LIMIT_PER_SECOND: '1000', DOCGEN_RATE_LIMIT_BURST: '1000' });
  mongo = new MongoClient(deps.env.DOCGEN_MONGODB_URL!);
  api = await startRole(deps, 'api');
  processes.push(api);
  const admin = adminClients(api.adminPort!, deps.adminToken);
  const created = await workspaceWithKey(admin, 'graceful shutdown');
  const workspaceId = created.workspaceId;
  secret = created.secret;
  templateId = await invoiceTemplate(admin, workspaceId);
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.proc.stop(10_000)));
  await mongo?.close();
  await deps?.stop();
});

async function createGenerations(count: number): Promise<string[]> {
  const variables = longInvoiceValues(LINES);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await postJson(`http://127.0.0.1:${api.publicPort}`, secret, {
      templateId,
      variables: { ...variables, invoiceNumber: `INV-${created.length + i}` },
    });
    expect(res.status, res.text).toBe(201);
    ids.push(res.body.id as string);
  }
  created.push(...ids);
  return ids;
}

/** Ids of the generations being rendered now (PROCESSING under a live lease). */
async function rendering(ids: string[]): Promise<string[]> {
  const rows = await generationsCollection(mongo, deps)
    .find({ status: 'PROCESSING', leaseOwner: { $ne: null } })
    .toArray();
  return rows.map((r) => formatId('generation', r._id)).filter((id) => ids.includes(id));
}

async function waitForFinal(ids: string[], timeoutMs: number) {
  return pollUntil(
    async () => {
      const rows = await generationsCollection(mongo, deps).find({}).toArray();
      return rows.filter((r) => ids.includes(formatId('generation', r._id)));
    },
    (rows) => rows.length === ids.length && rows.every((r) => r.status === 'COMPLETED' || r.status === 'FAILED'),
    { timeoutMs, intervalMs: 200, description: `${ids.length} generations to reach a final state` },
  );
}

/** generationId -> how many times a process logged `render completed` for it. */
function completions(...procs: RoleProcess[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const p of procs) {
    for (const r of records(p.proc, 'render completed'))
      counts.set(String(r.generationId), (counts.get(String(r.generationId)) ?? 0) + 1);
  }
  return counts;
}

function completedBy(p: RoleProcess): Set<string> {
  return new Set(records(p.proc, 'render completed').map((r) => String(r.generationId)));
}

async function expectExactlyOnce(ids: string[], procs: RoleProcess[]): Promise<void> {
  const rows = await waitForFinal(ids, 120_000);
  for (const row of rows)
    expect({ id: formatId('generation', row._id), status: row.status, error: row.error }).toEqual({
      id: formatId('generation', row._id),
      status: 'COMPLETED',
      error: null,
    });
  // A process logs `render completed` a moment after the row turns COMPLETED (the event is
  // published first): wait for the lines, then check that none is there twice.
  const counts = await pollUntil(
    async () => completions(...procs),
    (c) => ids.every((id) => (c.get(id) ?? 0) >= 1),
    {
      timeoutMs: 10_000,
      intervalMs: 50,
      description: 'a render completed line for every generation',
    },
  ).catch(() => completions(...procs));
  const trace = (id: string) =>
    procs
      .flatMap((p) => p.proc.lines.filter((l) => l.text.includes(id)).map((l) => `[${p.proc.pid}] ${l.text}`))
      .join('\n');
  for (const id of ids) expect(counts.get(id), `render completed logged for ${id}:\n${trace(id)}`).toBe(1);
  // One object per generation, at the key the row names; nothing else in the bucket.
  const keys = await bucketKeys(deps);
  const all = await generationsCollection(mongo, deps).find({}).toArray();
  expect(keys.sort()).toEqual(all.map((r) => r.outputKey).sort());
  expect(all.filter((r) => r.status === 'PROCESSING' || r.status === 'PENDING')).toEqual([]);
}

describe('SIGTERM to a render process with renders in flight', () => {
  it('with a long grace period: in-flight renders finish there, the rest elsewhere; exits 0 in time', async () => {
    // Far longer than the in-flight renders take, even on a loaded machine: the process exits
    // when they are done, not when the grace period ends.
    const graceMs = 150_000;
    const first = await startRole(deps, 'render', { ...RENDER_ENV, DOCGEN_SHUTDOWN_GRACE_MS: String(graceMs) });
    processes.push(first);
    const ids = await createGenerations(12);
    const inFlight = await pollUntil(
      () => rendering(ids),
      (r) => r.length >= 3,
      { timeoutMs: 60_000, intervalMs: 50, description: 'three renders in flight' },
    );

    const signalled = Date.now();
    first.proc.kill('SIGTERM');
    // Readiness fails at once, so a Service stops routing here while the drain runs.
    const ready = await pollUntil(
      () => probe(first, '/readyz'),
      (p) => p.status === 503,
      { timeoutMs: 5_000, intervalMs: 20, description: '/readyz 503 after SIGTERM' },
    );
    expect(ready.body?.status).toBe('shutting_down');
    const second = await startRole(deps, 'render', RENDER_ENV);
    processes.push(second);

    const exit = await first.proc.exited;
    const exitedAfterMs = Date.now() - signalled;
    expect(exit, first.proc.output().slice(-3_000)).toEqual({ code: 0, signal: null });
    expect(exitedAfterMs).toBeLessThan(graceMs);
    expect(records(first.proc, 'render handed back')).toEqual([]);
    // Whatever was rendering at the signal was finished by the stopping process itself.
    const finishedFirst = completedBy(first);
    for (const id of inFlight) expect(finishedFirst.has(id), `${id} was in flight on the stopping process`).toBe(true);

    await expectExactlyOnce(ids, [first, second]);
    // The second process took the rest of the queue.
    expect(completedBy(second).size).toBe(ids.length - finishedFirst.size);
    expect(completedBy(second).size).toBeGreaterThan(0);

    await second.proc.stop(10_000);
  }, 300_000);

  it('with a short grace period: in-flight renders are handed back and finish on another process', async () => {
    const graceMs = 500;
    const first = await startRole(deps, 'render', { ...RENDER_ENV, DOCGEN_SHUTDOWN_GRACE_MS: String(graceMs) });
    processes.push(first);
    const ids = await createGenerations(8);
    const inFlight = await pollUntil(
      () => rendering(ids),
      (r) => r.length >= 3,
      { timeoutMs: 60_000, intervalMs: 50, description: 'three renders in flight' },
    );

    const signalled = Date.now();
    first.proc.kill('SIGTERM');
    // Registered for clean-up as soon as it is up, whatever the assertions below say.
    const secondStarting = startRole(deps, 'render', RENDER_ENV).then((p) => {
      processes.push(p);
      return p;
    });
    const exit = await first.proc.exited;
    const exitedAfterMs = Date.now() - signalled;
    // Exit code 1: the grace period ran out and work was handed back (ops/shutdown.ts).
    expect(exit, first.proc.output().slice(-3_000)).toEqual({ code: 1, signal: null });
    // The grace period plus the coordinator's second for handing back, plus room for a loaded
    // machine to close its connections and Chromium; far less than the renders would take.
    expect(exitedAfterMs).toBeLessThan(graceMs + 15_000);

    const handedBack = records(first.proc, 'render handed back').map((r) => String(r.generationId));
    expect(handedBack.length).toBeGreaterThan(0);
    for (const id of handedBack) expect(inFlight.includes(id) || ids.includes(id)).toBe(true);
    // A handed-back generation is no longer held by the stopped process.
    const rows = await generationsCollection(mongo, deps).find({}).toArray();
    for (const row of rows.filter((r) => handedBack.includes(formatId('generation', r._id)))) {
      expect(row.status === 'COMPLETED' || row.leaseOwner === null, `${formatId('generation', row._id)} released`).toBe(
        true,
      );
    }

    const second = await secondStarting;
    await expectExactlyOnce(ids, [first, second]);
    const finishedSecond = completedBy(second);
    for (const id of handedBack)
      expect(finishedSecond.has(id), `${id} handed back, then completed by the second process`).toBe(true);
    // Redone at once, not taken over after the stopped process's lease ran out: a hand-back
    // gives the attempt back, a takeover counts one more.
    const final = await generationsCollection(mongo, deps).find({}).toArray();
    for (const row of final.filter((r) => handedBack.includes(formatId('generation', r._id))))
      expect({ id: formatId('generation', row._id), attempts: row.attempts }).toEqual({
        id: formatId('generation', row._id),
        attempts: 1,
      });
    expect(completedBy(first).size + finishedSecond.size).toBe(ids.length);
  }, 180_000);
});
