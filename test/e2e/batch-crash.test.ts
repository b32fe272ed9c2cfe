// docs/architecture.md#batches-cut-off-by-a-crash: an API process SIGKILLed in the middle of a
// batch create (test/harness/serve-with-faults.ts: exit-after-batch-insert kills it right after
// the batch row's write, before any item) leaves a PENDING batch without items; the render
// role's creation sweeper finishes the create from the request kept on the row once the grace
// period has passed, and the batch renders to COMPLETED with every item, seen through another
// API process. The same Idempotency-Key then answers that batch.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pollUntil } from '../harness/poll-until.ts';
import {
  adminClients,
  publishedTemplate,
  request,
  spawnServe,
  startDeps,
  type ChildApi,
  type Deps,
  workspaceWithKey,
} from './api-stack.ts';

// A short grace period (DOCGEN_BATCH_CREATION_GRACE_MS, 60 s by default) keeps the test quick.
const GRACE_MS = 5000;
let deps: Deps;
const children: ChildApi[] = [];

beforeAll(async () => {
  deps = await startDeps();
});

afterAll(async () => {
  await Promise.all(children.map((c) => c.proc.stop(10_000)));
  await deps?.stop();
});

it('a batch whose API process died after writing it is finished by the render role and completes', async () => {
  // One after another: three processes starting at once on a loaded 2-core machine can take
  // longer than the start-up wait.
  const healthy = await spawnServe(deps, 'api');
  children.push(healthy);
  const faulty = await spawnServe(deps, 'api', {}, 'exit-after-batch-insert');
  children.push(faulty);
  const render = await spawnServe(deps, 'render', { DOCGEN_BATCH_CREATION_GRACE_MS: String(GRACE_MS) });
  children.push(render);
  const admin = adminClients(healthy.adminPort!, deps.adminToken);
  const { workspaceId, secret } = await workspaceWithKey(admin, 'batch crash');
  const templateId = await publishedTemplate(admin, workspaceId, 'batch crash template');
  const body = JSON.stringify({
    items: Array.from({ length: 6 }, (_, i) => ({ templateId, variables: { name: `crash ${i}` } })),
  });
  const headers = {
    Authorization: `Bearer ${secret}`,
    'Content-Type': 'application/json',
    'Idempotency-Key': 'batch-crash-1',
  };

  // The faulty process dies mid-request: the client sees the connection drop, no answer.
  const started = Date.now();
  const outcome = await request(faulty.baseUrl, { method: 'POST', path: '/v1/batches', headers, body }).then(
    (answer) => `answered ${answer.status}`,
    (err: Error) => `failed: ${err.message}`,
  );
  expect(outcome).toMatch(/^failed/);
  expect(await faulty.proc.exited).toEqual({ code: null, signal: 'SIGKILL' });

  // The batch was written, without items: listing by batch finds none yet.
  const get = (path: string) => request(healthy.baseUrl, { path, headers: { Authorization: `Bearer ${secret}` } });
  expect((await get('/v1/generations?pageSize=100')).body.generations).toEqual([]);

  // The sweeper finishes it after its grace period; the batch then renders to COMPLETED.
  const finished = await render.proc.waitForLine(
    (l) => l.json?.msg === 'batch create cut off by a crash finished by the sweeper',
    GRACE_MS + 60_000,
  );
  const batchId = String(finished.json!.batchId);
  expect(finished.json).toMatchObject({ outcome: 'resumed' });
  console.log(`batch create cut off by a crash: finished by the sweeper ${Date.now() - started} ms after the kill`);
  const done = await pollUntil(
    async () => (await get(`/v1/batches/${batchId}`)).body,
    (b) => b?.status === 'COMPLETED',
    { timeoutMs: 120_000, intervalMs: 500, description: `batch ${batchId} to complete` },
  );
  expect(done).toMatchObject({ id: batchId, total: 6, completed: 6, failed: 0 });
  const items = (await get(`/v1/generations?batchId=${batchId}&pageSize=100`)).body.generations;
  expect(items.map((g: { status: string }) => g.status)).toEqual(Array(6).fill('COMPLETED'));

  // The client's retry with the same key gets that batch, not a second one.
  const retry = await request(healthy.baseUrl, { method: 'POST', path: '/v1/batches', headers, body });
  expect(retry.status, retry.text).toBe(201);
  expect(retry.body).toMatchObject({ id: batchId, status: 'COMPLETED', total: 6 });
}, 300_000);
