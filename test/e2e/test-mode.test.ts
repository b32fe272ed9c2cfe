// Test mode (docs/interface.md#test-mode) on the real stack: api, render and webhooks roles on
// NATS, S3 and the Mongo stand-in, Chromium printing. A `svc_test_` key's PDF shows "TEST" on
// every page to pdftotext (a live key's, of the same template, nowhere); a live key gets 404
// for a test generation and its list never shows it, over REST and gRPC; a webhook endpoint
// that did not opt in to test events receives nothing for a test generation, while one that
// did gets it with "test": true.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Code, ConnectError } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGenerationClient } from '../../sdk/typescript/src/connect.ts';
import { uniqueRunDir } from '../harness/dependencies.ts';
import { startHttpReceiver, type HttpReceiver } from '../harness/http-receiver.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { bearer, postJson, request, startApiStack, type ApiStack } from './api-stack.ts';
import { storeTemplate } from './template-fixtures.ts';

/** Three pages, none of which says "TEST" by itself. */
const THREE_PAGES = {
  body: '{% for i in (1..3) %}<section style="break-after: page"><h1>Page {{ i }} of {{ who }}</h1></section>{% endfor %}',
  variables: [{ name: 'who', required: true, description: '' }],
};

let stack: ApiStack;
let optedIn: HttpReceiver;
let liveOnly: HttpReceiver;
let workspace: string;
let template: string;
let keys: { live: string; test: string };
let endpoints: { optedIn: string; liveOnly: string };

beforeAll(async () => {
  [optedIn, liveOnly] = await Promise.all([
    startHttpReceiver({ defaultAnswer: { status: 204 } }),
    startHttpReceiver({ defaultAnswer: { status: 204 } }),
  ]);
  stack = await startApiStack({
    env: { DOCGEN_ROLES: 'api,render,webhooks', DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true' },
  });
  workspace = await stack.workspace('test mode');
  const [live, test] = await Promise.all([stack.key(workspace), stack.key(workspace, undefined, undefined, 'test')]);
  keys = { live: live.secret, test: test.secret };
  template = await storeTemplate(stack.app, workspace, THREE_PAGES, 'Three pages');
  const events = ['generation.completed', 'generation.failed'];
  const [a, b] = await Promise.all([
    stack.admin.webhooks.createWebhookEndpoint({ workspaceId: workspace, url: optedIn.url, events, testEvents: true }),
    stack.admin.webhooks.createWebhookEndpoint({ workspaceId: workspace, url: liveOnly.url, events }),
  ]);
  endpoints = { optedIn: a.endpoint!.id, liveOnly: b.endpoint!.id };
}, 180_000);

afterAll(async () => {
  await stack?.close();
  await Promise.all([optedIn?.close(), liveOnly?.close()]);
});

async function createAndWait(key: string, who: string): Promise<Record<string, unknown>> {
  const answer = await postJson(
    stack.baseUrl,
    key,
    { templateId: template, variables: { who } },
    { Prefer: 'wait=30' },
  );
  expect(answer.status, answer.text).toBe(201);
  const generation = answer.body as Record<string, unknown>;
  if (generation.status === 'COMPLETED') return generation;
  // A loaded machine may need longer than the wait: read it until it is final.
  return (await pollUntil(
    async () =>
      (await request(stack.baseUrl, { path: `/v1/generations/${String(generation.id)}`, headers: bearer(key) })).body,
    (g) => g?.status === 'COMPLETED' || g?.status === 'FAILED',
    { timeoutMs: 60_000, description: `generation ${String(generation.id)} final` },
  )) as Record<string, unknown>;
}

/** The text of each page, as pdftotext reads it. */
async function pagesText(outputUrl: string): Promise<string[]> {
  const res = await fetch(outputUrl);
  expect(res.status).toBe(200);
  const file = path.join(uniqueRunDir('test-mode'), 'out.pdf');
  writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  const info = execFileSync('pdfinfo', [file], { encoding: 'utf8' });
  const pages = Number(/^Pages:\s+(\d+)/m.exec(info)![1]);
  return Array.from({ length: pages }, (_, i) =>
    execFileSync('pdftotext', ['-f', String(i + 1), '-l', String(i + 1), '-enc', 'UTF-8', file, '-'], {
      encoding: 'utf8',
    }),
  );
}

const mentions = (receiver: HttpReceiver, id: unknown) =>
  receiver.requests.filter((r) => r.text().includes(String(id)));

describe('test mode on the real stack', () => {
  let testGeneration: Record<string, unknown>;
  let liveGeneration: Record<string, unknown>;

  it('a svc_test_ key renders the same template with "TEST" on every page; a live key without it', async () => {
    expect(keys.test).toMatch(/^svc_test_/);
    testGeneration = await createAndWait(keys.test, 'Ada');
    liveGeneration = await createAndWait(keys.live, 'Ada');
    expect(testGeneration.status).toBe('COMPLETED');
    expect(liveGeneration.status).toBe('COMPLETED');
    // The REST Generation keeps exactly its eleven fields in both modes.
    expect(Object.keys(testGeneration).sort()).toEqual(Object.keys(liveGeneration).sort());
    expect(Object.keys(testGeneration)).toHaveLength(11);

    const testPages = await pagesText(String(testGeneration.outputUrl));
    const livePages = await pagesText(String(liveGeneration.outputUrl));
    expect(testPages).toHaveLength(3);
    expect(livePages).toHaveLength(3);
    testPages.forEach((text, i) => {
      expect(text).toContain(`Page ${i + 1} of Ada`);
      expect(text, `page ${i + 1}`).toMatch(/\bTEST\b/);
    });
    livePages.forEach((text, i) => {
      expect(text).toContain(`Page ${i + 1} of Ada`);
      expect(text).not.toContain('TEST');
    });
  });

  it('a live key gets 404 for a test generation and its list never shows it; the test key the reverse', async () => {
    const get = (key: string, id: unknown) =>
      request(stack.baseUrl, { path: `/v1/generations/${String(id)}`, headers: bearer(key) });
    const asLive = await get(keys.live, testGeneration.id);
    expect(asLive.status).toBe(404);
    expect(asLive.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String) } });
    expect((await get(keys.test, liveGeneration.id)).status).toBe(404);
    expect((await get(keys.test, testGeneration.id)).status).toBe(200);

    const ids = async (key: string) =>
      (
        (await request(stack.baseUrl, { path: '/v1/generations?pageSize=100', headers: bearer(key) })).body
          .generations as Array<{ id: string }>
      ).map((g) => g.id);
    expect(await ids(keys.live)).toEqual([liveGeneration.id]);
    expect(await ids(keys.test)).toEqual([testGeneration.id]);

    // gRPC: the same 404, and the message says test.
    const liveRpc = createGenerationClient({ baseUrl: stack.baseUrl, apiKey: keys.live, protocol: 'connect' });
    const testRpc = createGenerationClient({ baseUrl: stack.baseUrl, apiKey: keys.test });
    const err = await liveRpc.getGeneration({ id: String(testGeneration.id) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.NotFound);
    expect((await testRpc.getGeneration({ id: String(testGeneration.id) })).generation!.test).toBe(true);
    expect((await liveRpc.getGeneration({ id: String(liveGeneration.id) })).generation!.test).toBe(false);
  });

  it('only the endpoint that opted in to test events gets the test generation, with "test": true', async () => {
    // Both endpoints get the live generation: once the one that takes live events only has it,
    // the fan-out of both events is long done (each is one dispatch, to every endpoint at once).
    await pollUntil(
      async () => [mentions(optedIn, testGeneration.id).length, mentions(liveOnly, liveGeneration.id).length],
      ([test, live]) => test! > 0 && live! > 0,
      { timeoutMs: 30_000, description: 'the deliveries of both generations' },
    );
    const delivered = mentions(optedIn, testGeneration.id)[0]!.json() as Record<string, unknown>;
    expect(delivered).toEqual({
      event: 'generation.completed',
      payload: { generationId: testGeneration.id },
      timestamp: expect.any(Number),
      test: true,
    });
    const live = mentions(liveOnly, liveGeneration.id)[0]!.json() as Record<string, unknown>;
    expect(live).not.toHaveProperty('test');
    expect(mentions(optedIn, liveGeneration.id)).toHaveLength(1);
    expect(mentions(liveOnly, testGeneration.id)).toEqual([]);

    // The record agrees: the test generation has one delivery, to the endpoint that opted in.
    const { deliveries } = await stack.admin.deliveries.listDeliveries({
      workspaceId: workspace,
      generationId: String(testGeneration.id),
    });
    expect(deliveries.map((d) => d.endpointId)).toEqual([endpoints.optedIn]);
  });
});
