// docs/interface.md#lifecycle: nothing stays PENDING forever, even if the API process dies between the
// database write and the job publish. An API child process with the fault injected
// (test/harness/serve-with-faults.ts: exit-after-generation-insert SIGKILLs it right after the insert) takes a
// create; the row is PENDING and was never published; a render process (real Chromium)
// started afterwards finds it through its outbox sweeper and renders it to COMPLETED.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MongoClient } from 'mongodb';
import { parseId } from '../../src/domain/ids.ts';
import { COLLECTIONS, type GenerationDoc } from '../../src/store/documents.ts';
import { pollUntil } from '../harness/poll-until.ts';
import {
  adminClients,
  publishedTemplate,
  postJson,
  request,
  spawnServe,
  startDeps,
  type ChildApi,
  type Deps,
  workspaceWithKey,
} from './api-stack.ts';

let deps: Deps;
const children: ChildApi[] = [];
let mongo: MongoClient;

beforeAll(async () => {
  deps = await startDeps();
  mongo = new MongoClient(deps.env.DOCGEN_MONGODB_URL!);
});

afterAll(async () => {
  await Promise.all(children.map((c) => c.proc.stop(10_000)));
  await mongo?.close();
  await deps?.stop();
});

it('a generation whose API process died between insert and publish still leaves PENDING and completes', async () => {
  const [healthy, faulty] = await Promise.all([
    spawnServe(deps, 'api'),
    spawnServe(deps, 'api', {}, 'exit-after-generation-insert'),
  ]);
  children.push(healthy, faulty);
  const admin = adminClients(healthy.adminPort!, deps.adminToken);
  const { workspaceId, secret } = await workspaceWithKey(admin, 'crash');
  const templateId = await publishedTemplate(admin, workspaceId, 'crash template');

  // The faulty process dies mid-request: the client sees the connection drop, no answer.
  const outcome = await postJson(faulty.baseUrl, secret, { templateId, variables: { name: 'crash' } }).then(
    (answer) => `answered ${answer.status}`,
    (err: Error) => `failed: ${err.message}`,
  );
  expect(outcome).toMatch(/^failed/);
  expect(await faulty.proc.exited).toEqual({ code: null, signal: 'SIGKILL' });

  // The row is there, PENDING, and its job was never published.
  const listed = await request(healthy.baseUrl, {
    path: '/v1/generations',
    headers: { Authorization: `Bearer ${secret}` },
  });
  expect(listed.status).toBe(200);
  expect(listed.body.generations).toHaveLength(1);
  const generation = listed.body.generations[0];
  expect(generation.status).toBe('PENDING');
  const row = await mongo
    .db(deps.env.DOCGEN_MONGODB_DATABASE)
    .collection<GenerationDoc>(COLLECTIONS.generations)
    .findOne({ _id: parseId('generation', generation.id)! });
  expect(row?.jobPublishedAt, 'killed before the publish').toBeNull();

  // A render process picks it up from the outbox and renders it.
  children.push(await spawnServe(deps, 'render'));
  const get = () =>
    request(healthy.baseUrl, {
      path: `/v1/generations/${generation.id}`,
      headers: { Authorization: `Bearer ${secret}` },
    });
  const final = await pollUntil(
    get,
    (answer) => answer.body?.status === 'COMPLETED' || answer.body?.status === 'FAILED',
    {
      timeoutMs: 60_000,
      intervalMs: 250,
      description: `generation ${generation.id} to reach a final state`,
    },
  );
  expect(final.body.error).toBeNull();
  expect(final.body.status).toBe('COMPLETED');
  const pdf = await fetch(final.body.outputUrl);
  expect(pdf.status).toBe(200);
  expect(
    Buffer.from(await pdf.arrayBuffer())
      .subarray(0, 5)
      .toString(),
  ).toBe('%PDF-');
});
