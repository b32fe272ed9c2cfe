// Batches end to end (docs/interface.md#batches), through the REST API on a real stack (api,
// render and webhooks roles, NATS, S3, real Chromium):
// - a 200-item batch completes with correct counts, its items list by batchId, and exactly one
//   signed batch.completed arrives (checked with openssl), no per-item events (itemEvents false);
// - merge: true gives one PDF whose page count (pdfinfo) is the sum of the items' (merged from
//   files with qpdf), and the batch metrics show on the ops endpoint;
// - an invalid item refuses the whole batch with 422 naming items[i].…, and nothing is stored;
// - a render process SIGKILLed during a batch still leaves every item final and one batch event.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseId } from '../../src/domain/ids.ts';
import type { JsonObject, TemplateVersionContent } from '../../src/domain/template.ts';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import { COLLECTIONS } from '../../src/store/documents.ts';
import { uniqueRunDir } from '../harness/dependencies.ts';
import { startHttpReceiver, type HttpReceiver, type ReceivedRequest } from '../harness/http-receiver.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { spawnDocgen, type DocgenProcess } from '../harness/spawn-docgen.ts';
import { request, startApiStack, type ApiStack, type HttpAnswer } from './api-stack.ts';
import { loadOpenApi } from './api-openapi.ts';

const openapi = loadOpenApi();

interface BatchJson {
  id: string;
  status: string;
  total: number;
  completed: number;
  failed: number;
  outputUrl: string | null;
  createdAt: string;
  updatedAt: string;
}

let stack: ApiStack;
let key: string;
let workspaceId: string;
let receiver: HttpReceiver;
let secret: string;

async function template(content: Partial<TemplateVersionContent>): Promise<string> {
  const { templates } = stack.app.infrastructure.repositories;
  const { template: created } = await templates.create(
    parseId('workspace', workspaceId)!,
    `t-${Math.random().toString(36).slice(2, 8)}`,
    { body: '', css: '', partials: {}, variables: [], pdfOptions: DEFAULT_PDF_OPTIONS, ...content },
  );
  await templates.publish(created._id, 1);
  return `tpl_${created._id.toHexString()}`;
}

/** A request with the test's key; every answer is checked against docs/openapi.yaml. */
async function call(
  method: string,
  pathname: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const answer = await request(stack.baseUrl, {
    method,
    path: pathname,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  openapi.check({ method, path: pathname, status: answer.status, headers: answer.headers, body: answer.body });
  return answer;
}

async function createBatch(body: unknown, headers: Record<string, string> = {}): Promise<BatchJson> {
  const res = await call('POST', '/v1/batches', body, headers);
  expect(res.status, res.text).toBe(201);
  return res.body as BatchJson;
}

function waitCompleted(id: string, timeoutMs: number): Promise<BatchJson> {
  return pollUntil(
    async () => (await call('GET', `/v1/batches/${id}`)).body as BatchJson,
    (b) => b.status === 'COMPLETED',
    { timeoutMs, intervalMs: 250, description: `batch ${id} to complete` },
  );
}

/** Every item of a batch, through the public list (all pages). */
async function listItems(batchId: string): Promise<{ id: string; status: string; outputUrl: string | null }[]> {
  const items = [];
  let token: string | null = null;
  do {
    const query = new URLSearchParams({ batchId, pageSize: '100', ...(token ? { pageToken: token } : {}) });
    const res = await call('GET', `/v1/generations?${query}`);
    expect(res.status, res.text).toBe(200);
    items.push(...res.body.generations);
    token = res.body.nextPageToken;
  } while (token);
  return items;
}

function batchEvents(batchId: string): ReceivedRequest[] {
  return receiver.requests.filter((r) => {
    const body = r.json() as { event: string; payload: { batchId?: string } };
    return body.event === 'batch.completed' && body.payload.batchId === batchId;
  });
}

/** X-Service-Signature recomputed with openssl (an independent HMAC), as a receiver would. */
function verifiesWithOpenssl(r: ReceivedRequest): boolean {
  const file = path.join(uniqueRunDir('batch-webhook'), 'body.json');
  writeFileSync(file, r.text());
  const digest = execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret, '-r', file], { encoding: 'utf8' });
  return r.header('x-service-signature') === `sha256=${digest.split(' ')[0]}`;
}

async function expectOneBatchEvent(batch: BatchJson): Promise<void> {
  await pollUntil(
    () => batchEvents(batch.id),
    (events) => events.length >= 1,
    { timeoutMs: 30_000, description: `batch.completed for ${batch.id}` },
  );
  // A duplicate would arrive now.
  await new Promise((r) => setTimeout(r, 1500));
  const events = batchEvents(batch.id);
  expect(events).toHaveLength(1);
  expect(events[0]!.json()).toEqual({
    event: 'batch.completed',
    payload: { batchId: batch.id, completed: batch.completed, failed: batch.failed },
    timestamp: expect.any(Number),
  });
  expect(verifiesWithOpenssl(events[0]!)).toBe(true);
}

function pdfPages(bytes: Buffer): number {
  const file = path.join(uniqueRunDir('batch-pdf'), 'doc.pdf');
  writeFileSync(file, bytes);
  const info = execFileSync('pdfinfo', [file], { encoding: 'utf8' });
  return Number(/^Pages:\s+(\d+)/m.exec(info)![1]);
}

async function download(url: string): Promise<Buffer> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

const greeting: Partial<TemplateVersionContent> = {
  body: '<h1>Hello {{ name }}</h1>',
  variables: [{ name: 'name', required: true, description: '' }],
};

beforeAll(async () => {
  receiver = await startHttpReceiver({ defaultAnswer: { status: 204 } });
  stack = await startApiStack({
    env: {
      DOCGEN_ROLES: 'api,render,webhooks',
      DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      DOCGEN_RENDER_TIMEOUT_MS: '15000',
      DOCGEN_RENDER_CONCURRENCY: '2',
      // The SIGKILL test's long tables render on a loaded machine: no failure for slowness there.
      DOCGEN_LIQUID_TIMEOUT_MS: '15000',
    },
  });
  workspaceId = await stack.workspace('batches e2e');
  key = (await stack.key(workspaceId)).secret;
  const endpoint = await stack.admin.webhooks.createWebhookEndpoint({
    workspaceId,
    url: receiver.url,
    events: ['generation.completed', 'generation.failed', 'batch.completed'],
  });
  secret = endpoint.secret;
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

describe('batches end to end', () => {
  it('refuses a batch with invalid items, naming each by index, and stores nothing', async () => {
    const templateId = await template(greeting);
    const db = stack.app.infrastructure.mongo.db;
    const before = await Promise.all([
      db.collection(COLLECTIONS.batches).countDocuments({}),
      db.collection(COLLECTIONS.generations).countDocuments({}),
    ]);
    const items: unknown[] = Array.from({ length: 5 }, (_, i) => ({ templateId, variables: { name: `v${i}` } }));
    items[1] = { templateId, variables: [1] };
    items[3] = { templateId: '', variables: {} };
    const res = await call('POST', '/v1/batches', { items });
    expect(res.status, res.text).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([
      'items[1].variables',
      'items[3].templateId',
    ]);
    // An unknown template is refused at once too, naming every item that uses it.
    const unknown = await call('POST', '/v1/batches', {
      items: [
        { templateId, variables: { name: 'a' } },
        { templateId: 'tpl_000000000000000000000000', variables: {} },
      ],
    });
    expect(unknown.status, unknown.text).toBe(422);
    expect(unknown.body.error.details).toEqual([
      { field: 'items[1].templateId', issue: expect.stringContaining('no template') },
    ]);
    for (const body of [{ items: [] }, { items: Array.from({ length: 1001 }, () => ({ templateId })) }, {}]) {
      const refused = await call('POST', '/v1/batches', body);
      expect(refused.status, refused.text).toBe(422);
      expect(refused.body.error.details[0].field).toBe('items');
    }
    const after = await Promise.all([
      db.collection(COLLECTIONS.batches).countDocuments({}),
      db.collection(COLLECTIONS.generations).countDocuments({}),
    ]);
    expect(after).toEqual(before);
  });

  it('a 200-item batch completes with correct counts and exactly one signed batch.completed', async () => {
    const templateId = await template(greeting);
    // Two items lack the required variable: they fail, and are counted as failed.
    const items: { templateId: string; variables: JsonObject }[] = Array.from({ length: 200 }, (_, i) => ({
      templateId,
      variables: i === 17 || i === 150 ? ({} as JsonObject) : { name: `item ${i}` },
    }));
    const started = performance.now();
    const created = await createBatch({ items, itemEvents: false }, { 'Idempotency-Key': 'batch-200' });
    const createdMs = performance.now() - started;
    expect(created).toEqual({
      id: expect.stringMatching(/^bat_[0-9a-f]{24}$/),
      status: 'PENDING',
      total: 200,
      completed: 0,
      failed: 0,
      outputUrl: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    // The same key and body: the same batch, no second set of items.
    const again = await createBatch({ items, itemEvents: false }, { 'Idempotency-Key': 'batch-200' });
    expect(again.id).toBe(created.id);

    const done = await waitCompleted(created.id, 240_000);
    // For the note, not asserted (the machine's load decides them).
    console.log(
      `200-item batch: POST answered in ${Math.round(createdMs)} ms, COMPLETED after ${Math.round(performance.now() - started)} ms`,
    );
    expect(done).toMatchObject({ status: 'COMPLETED', total: 200, completed: 198, failed: 2, outputUrl: null });

    const listed = await listItems(created.id);
    expect(listed).toHaveLength(200);
    expect(listed.filter((g) => g.status === 'COMPLETED')).toHaveLength(198);
    expect(listed.filter((g) => g.status === 'FAILED')).toHaveLength(2);
    // Every item is a normal generation, readable by its id with the interface's eleven fields.
    const one = await call('GET', `/v1/generations/${listed[0]!.id}`);
    expect(Object.keys(one.body)).toHaveLength(11);

    await expectOneBatchEvent(done);
    // itemEvents: false: none of its generations sent an event of its own.
    const itemIds = new Set(listed.map((g) => g.id));
    const itemEvents = receiver.requests.filter((r) =>
      itemIds.has((r.json() as { payload: { generationId?: string } }).payload.generationId ?? ''),
    );
    expect(itemEvents).toHaveLength(0);

    // Another workspace sees neither the batch nor its items.
    const other = await stack.key(await stack.workspace('other'));
    const foreign = await request(stack.baseUrl, {
      path: `/v1/batches/${created.id}`,
      headers: { authorization: `Bearer ${other.secret}` },
    });
    expect(foreign.status).toBe(404);
    const foreignList = await request(stack.baseUrl, {
      path: `/v1/generations?batchId=${created.id}`,
      headers: { authorization: `Bearer ${other.secret}` },
    });
    expect(foreignList.body.generations).toEqual([]);
  }, 300_000);

  it('merge: true gives one PDF whose page count is the sum of the items', async () => {
    const templateId = await template({
      body: '{% for p in (1..pages) %}<p style="page-break-after: always">{{ name }} page {{ p }}</p>{% endfor %}',
      variables: [
        { name: 'name', required: true, description: '' },
        { name: 'pages', required: true, description: '' },
      ],
    });
    const pages = [1, 3, 2, 1, 4];
    const created = await createBatch({
      items: pages.map((n, i) => ({ templateId, variables: { name: `doc ${i}`, pages: n } })),
      merge: true,
    });
    const done = await waitCompleted(created.id, 120_000);
    expect(done).toMatchObject({ completed: 5, failed: 0 });
    expect(done.outputUrl).toMatch(/^http/);
    const items = await listItems(created.id);
    let sum = 0;
    for (const item of items) sum += pdfPages(await download(item.outputUrl!));
    expect(sum).toBe(pages.reduce((a, b) => a + b, 0));
    const merged = await download(done.outputUrl!);
    expect(pdfPages(merged)).toBe(sum);
    // In item order: the first page is item 0's, the last item 4's.
    const file = path.join(uniqueRunDir('batch-merged'), 'merged.pdf');
    writeFileSync(file, merged);
    const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' }).split('\f');
    expect(text[0]).toContain('doc 0 page 1');
    expect(text[sum - 1]).toContain('doc 4 page 4');
    // The ops endpoint's batch metrics (docs/deploy.md#reading-batches): this batch's
    // completion observed under merge="true"; the progress gauges read from MongoDB.
    const metrics = await (await fetch(`http://127.0.0.1:${stack.app.opsPort}/metrics`)).text();
    const mergedCount = /^docgen_batch_completion_duration_seconds_count\{[^}]*merge="true"[^}]*\} (\d+)$/m.exec(
      metrics,
    );
    expect(Number(mergedCount?.[1])).toBeGreaterThanOrEqual(1);
    expect(metrics).toMatch(/^docgen_batches_in_progress\{[^}]*status="pending"[^}]*\} \d+$/m);
    expect(metrics).toMatch(/^docgen_batch_items_pending\{[^}]*\} \d+$/m);
    // Presigned afresh on each read.
    await new Promise((r) => setTimeout(r, 1100));
    const reread = (await call('GET', `/v1/batches/${created.id}`)).body as BatchJson;
    expect(reread.outputUrl).not.toBe(done.outputUrl);
    await expectOneBatchEvent(done);
  }, 180_000);

  it('a render process SIGKILLed during a batch: every item final, one batch event', async () => {
    const templateId = await template({
      body: '<h1>{{ title }}</h1><table>{% for i in (1..1200) %}<tr><td>{{ i }}</td><td>{{ title }} row {{ i }}</td></tr>{% endfor %}</table>',
      variables: [{ name: 'title', required: true, description: '' }],
    });
    let victim: DocgenProcess | undefined = spawnDocgen({
      role: 'render',
      env: { ...stack.deps.env, DOCGEN_ROLES: 'render', DOCGEN_RENDER_CONCURRENCY: '4', DOCGEN_LOG_LEVEL: 'info' },
    });
    try {
      await victim.waitForLine((l) => l.json?.msg === 'docgen started', 60_000);
      const created = await createBatch({
        items: Array.from({ length: 16 }, (_, i) => ({ templateId, variables: { title: `kill-${i}` } })),
      });
      const { generations } = stack.app.infrastructure.repositories;
      const itemIds = (await listItems(created.id)).map((g) => parseId('generation', g.id)!);
      // Both processes rendering (more lease owners than one): kill the other one hard.
      await pollUntil(
        () => Promise.all(itemIds.map((id) => generations.get(id))),
        (docs) =>
          new Set(docs.filter((d) => d?.status === 'PROCESSING' && d.leaseOwner).map((d) => d!.leaseOwner)).size >= 2,
        { timeoutMs: 30_000, intervalMs: 20, description: 'both render processes rendering batch items' },
      );
      victim.kill('SIGKILL');
      await victim.exited;
      victim = undefined;
      const done = await waitCompleted(created.id, 180_000);
      const items = await listItems(created.id);
      // Every item final and counted once: the batch's counts are the items' states.
      expect(items.map((g) => g.status)).toEqual(Array(16).fill('COMPLETED'));
      expect(done).toMatchObject({ total: 16, completed: 16, failed: 0 });
      await expectOneBatchEvent(done);
    } finally {
      await victim?.stop(5000);
    }
  }, 240_000);
});
