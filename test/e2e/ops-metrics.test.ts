// Issue 7: /metrics, /healthz and /readyz of every role, scraped from real `docgen serve`
// processes (api, render, webhooks) on nats-server, the MongoDB stand-in, s3rver, Chromium
// and a loopback webhook receiver.
// - After a few generations (REST and Connect) and their webhook deliveries, each role's
//   counters have moved and its gauges are present.
// - /readyz names NATS when NATS is down and recovers when it is back; the pipeline works
//   again afterwards.
// - Right after SIGTERM /readyz answers 503 shutting_down while in-flight work (a webhook
//   attempt, an API request) finishes; then the process exits 0.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@connectrpc/connect';
import { MongoClient } from 'mongodb';
import { createConnectTransport } from '@connectrpc/connect-node';
import { WebhookEndpointService } from '../../src/gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { GenerationService } from '../../src/gen/docgen/v1/generation_pb.js';
import { COLLECTIONS, type DeliveryDoc } from '../../src/store/documents.ts';
import { startHttpReceiver, type HttpReceiver } from '../harness/http-receiver.ts';
import { pollUntil } from '../harness/poll-until.ts';
import {
  adminClients,
  postJson,
  publishedTemplate,
  request,
  startDeps,
  type Deps,
  workspaceWithKey,
} from './api-stack.ts';
import { find, probe, scrapeMetrics, startRole, total, type RoleProcess, type Sample } from './ops-stack.ts';

let deps: Deps;
let receiver: HttpReceiver;
let api: RoleProcess;
let render: RoleProcess;
let webhooks: RoleProcess;
let secret: string;
let templateId: string;
const RENDER_CONCURRENCY = 2;
const PREVIEW_CONCURRENCY = 1;

beforeAll(async () => {
  deps = await startDeps(
    {
      DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      DOCGEN_RATE_LIMIT_PER_SECOND: '1000',
      DOCGEN_RATE_LIMIT_BURST: '1000',
    },
    { natsControl: true },
  );
  receiver = await startHttpReceiver();
  [api, render, webhooks] = await Promise.all([
    startRole(deps, 'api'),
    // Chromium is recycled after two renders so that docgen_browser_restarts_total moves.
    startRole(deps, 'render', {
      DOCGEN_RENDER_CONCURRENCY: String(RENDER_CONCURRENCY),
      DOCGEN_PREVIEW_CONCURRENCY: String(PREVIEW_CONCURRENCY),
      DOCGEN_BROWSER_RECYCLE_RENDERS: '2',
    }),
    startRole(deps, 'webhooks'),
  ]);
  const admin = adminClients(api.adminPort!, deps.adminToken);
  const created = await workspaceWithKey(admin, 'metrics');
  const workspaceId = created.workspaceId;
  secret = created.secret;
  templateId = await publishedTemplate(admin, workspaceId);
  const endpoints = createClient(WebhookEndpointService, adminTransport());
  await endpoints.createWebhookEndpoint({
    workspaceId,
    url: `${receiver.url}/hooks`,
    events: ['generation.completed', 'generation.failed'],
  });
});

afterAll(async () => {
  await Promise.all([api, render, webhooks].filter(Boolean).map((p) => p.proc.stop(10_000)));
  await receiver?.close();
  await deps?.stop();
});

function adminTransport() {
  return createConnectTransport({
    baseUrl: `http://127.0.0.1:${api.adminPort}`,
    httpVersion: '1.1',
    interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${deps.adminToken}`), next(req))],
  });
}

function publicClient() {
  return createClient(
    GenerationService,
    createConnectTransport({
      baseUrl: `http://127.0.0.1:${api.publicPort}`,
      httpVersion: '1.1',
      interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${secret}`), next(req))],
    }),
  );
}

async function createAndComplete(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await postJson(`http://127.0.0.1:${api.publicPort}`, secret, {
      templateId,
      variables: { name: `metrics ${i}` },
    });
    expect(res.status, res.text).toBe(201);
    ids.push(res.body.id as string);
  }
  await waitCompleted(ids);
  return ids;
}

async function waitCompleted(ids: string[]): Promise<void> {
  for (const id of ids) {
    const final = await pollUntil(
      () =>
        request(`http://127.0.0.1:${api.publicPort}`, {
          path: `/v1/generations/${id}`,
          headers: { Authorization: `Bearer ${secret}` },
        }),
      (answer) => answer.body?.status === 'COMPLETED' || answer.body?.status === 'FAILED',
      { timeoutMs: 30_000, intervalMs: 100, description: `generation ${id} to finish` },
    );
    expect(final.body.status, final.text).toBe('COMPLETED');
  }
}

function expectPresent(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  const found = find(samples, name, labels);
  expect(found.length, `${name}${JSON.stringify(labels)} in the scrape`).toBeGreaterThan(0);
  return found;
}

describe('/metrics', () => {
  it('has moved after generations, a Connect call and webhook deliveries, on each role', async () => {
    const rest = await createAndComplete(3);
    // One more over Connect (counts as a created generation and a gRPC call), then read it back.
    const client = publicClient();
    const created = await client.createGeneration({ templateId, variables: { name: 'over connect' } });
    await waitCompleted([created.generation!.id]);
    const fetched = await client.getGeneration({ id: rest[0]! });
    expect(fetched.generation?.id).toBe(rest[0]);
    await receiver.waitForRequests(4, 20_000);

    // api: requests by route template and code, latency histogram, gRPC calls, creates.
    const a = await scrapeMetrics(api);
    expect(a.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(
      total(a.samples, 'docgen_http_requests_total', { route: '/v1/generations', method: 'POST', code: '201' }),
    ).toBe(3);
    expect(
      total(a.samples, 'docgen_http_request_duration_seconds_count', {
        route: '/v1/generations',
        method: 'POST',
        code: '201',
      }),
    ).toBe(3);
    expect(
      total(a.samples, 'docgen_http_requests_total', { route: '/v1/generations/{id}', method: 'GET', code: '200' }),
    ).toBeGreaterThanOrEqual(3);
    expect(total(a.samples, 'docgen_generations_created_total')).toBe(4);
    expect(
      total(a.samples, 'docgen_grpc_requests_total', {
        service: 'docgen.v1.GenerationService',
        method: 'CreateGeneration',
        code: 'ok',
      }),
    ).toBe(1);
    expect(
      total(a.samples, 'docgen_grpc_requests_total', {
        service: 'docgen.v1.GenerationService',
        method: 'GetGeneration',
        code: 'ok',
      }),
    ).toBe(1);
    expect(total(a.samples, 'docgen_grpc_request_duration_seconds_count', { method: 'GetGeneration' })).toBe(1);
    // The admin calls of the set-up went through the admin listener's Connect services.
    expect(
      total(a.samples, 'docgen_grpc_requests_total', {
        service: 'docgen.admin.v1.WorkspaceService',
        method: 'CreateWorkspace',
        code: 'ok',
      }),
    ).toBe(1);
    // No per-generation label values (they would create a series per id).
    expect(a.samples.filter((s) => Object.values(s.labels).some((v) => /gen_[0-9a-f]/.test(v)))).toEqual([]);
    expectPresent(a.samples, 'docgen_build_info');
    expectPresent(a.samples, 'process_resident_memory_bytes');
    for (const s of find(a.samples, 'docgen_http_requests_total')) expect(s.labels.role).toBe('api');

    // render: outcomes, duration, pool pages, Chromium recycling, queue depth and lag.
    const r = await scrapeMetrics(render);
    expect(total(r.samples, 'docgen_renders_total', { outcome: 'completed' })).toBe(4);
    expect(total(r.samples, 'docgen_render_duration_seconds_count', { outcome: 'completed' })).toBe(4);
    expect(total(r.samples, 'docgen_render_duration_seconds_sum', { outcome: 'completed' })).toBeGreaterThan(0);
    expect(total(r.samples, 'docgen_browser_pages', { state: 'busy' })).toBe(0);
    // Production renders' pages plus the previews' own.
    expect(total(r.samples, 'docgen_browser_pages', { state: 'free' })).toBe(RENDER_CONCURRENCY + PREVIEW_CONCURRENCY);
    expect(total(r.samples, 'docgen_browser_restarts_total', { reason: 'recycle' })).toBeGreaterThanOrEqual(1);
    expect(expectPresent(r.samples, 'docgen_render_queue_depth')[0]!.value).toBe(0);
    expect(expectPresent(r.samples, 'docgen_render_consumer_pending')[0]!.value).toBe(0);
    expectPresent(r.samples, 'docgen_render_consumer_redelivered');
    expect(total(r.samples, 'docgen_metrics_collector_errors_total')).toBe(0);
    for (const s of find(r.samples, 'docgen_renders_total')) expect(s.labels.role).toBe('render');

    // webhooks: attempts by outcome with their duration, queue depth and lag.
    const w = await scrapeMetrics(webhooks);
    expect(total(w.samples, 'docgen_webhook_attempts_total', { outcome: 'success' })).toBe(4);
    expect(total(w.samples, 'docgen_webhook_delivery_duration_seconds_count', { outcome: 'success' })).toBe(4);
    expectPresent(w.samples, 'docgen_webhook_queue_depth');
    await pollUntil(
      async () => total((await scrapeMetrics(webhooks)).samples, 'docgen_webhook_consumer_pending'),
      (pending) => pending === 0,
      { timeoutMs: 5_000, description: 'webhook consumers to have settled everything' },
    );
    expect(total(w.samples, 'docgen_metrics_collector_errors_total')).toBe(0);
  });
});

describe('/healthz and /readyz', () => {
  const expectedChecks: Record<RoleProcess['role'], string[]> = {
    api: ['mongodb', 'nats'],
    render: ['browser-pool', 'mongodb', 'nats', 'object-storage'],
    webhooks: ['mongodb', 'nats'],
  };

  it('answer 200 on every role when its dependencies are up', async () => {
    for (const role of [api, render, webhooks]) {
      const live = await probe(role, '/healthz');
      expect(live).toEqual({ status: 200, body: { status: 'ok' } });
      const ready = await probe(role, '/readyz');
      expect(ready.status, JSON.stringify(ready.body)).toBe(200);
      expect(ready.body?.status).toBe('ready');
      expect(Object.keys(ready.body?.checks ?? {}).sort()).toEqual(expectedChecks[role.role]);
    }
  });

  it('report how Chromium runs: without its sandbox only as configured, said at start too', async () => {
    // The harness sets DOCGEN_CHROMIUM_NO_SANDBOX=true explicitly (the tests run as root).
    const ready = await probe(render, '/readyz');
    expect(ready.body?.checks?.['browser-pool']?.details).toEqual({
      chromiumSandbox: 'off (DOCGEN_CHROMIUM_NO_SANDBOX=true)',
    });
    const warnings = render.proc.lines.filter(
      (l) => l.json?.level === 'warn' && /WITHOUT its sandbox/.test(String(l.json?.msg)),
    );
    expect(warnings).toHaveLength(1);
  });

  it('/readyz is 503 naming nats while NATS is down, and 200 again once it is back', async () => {
    await deps.nats.kill();
    try {
      for (const role of [api, render, webhooks]) {
        const down = await pollUntil(
          () => probe(role, '/readyz'),
          (p) => p.status === 503,
          { timeoutMs: 10_000, intervalMs: 100, description: `${role.role} /readyz 503 without NATS` },
        );
        expect(down.body?.status).toBe('not_ready');
        expect(down.body?.checks?.nats, `${role.role}: ${JSON.stringify(down.body)}`).toMatchObject({
          ok: false,
          error: expect.stringMatching(/NATS/),
        });
        for (const [name, check] of Object.entries(down.body?.checks ?? {}))
          if (name !== 'nats') expect(check.ok, `${role.role} ${name}`).toBe(true);
        // Liveness does not depend on dependencies: a restart would not bring NATS back.
        expect((await probe(role, '/healthz')).status).toBe(200);
      }
    } finally {
      await deps.nats.restart();
    }
    for (const role of [api, render, webhooks]) {
      await pollUntil(
        () => probe(role, '/readyz'),
        (p) => p.status === 200,
        { timeoutMs: 15_000, intervalMs: 100, description: `${role.role} /readyz 200 after NATS came back` },
      );
    }
    // And the consumers took up work again: render, event, webhook.
    const before = receiver.requests.length;
    await createAndComplete(1);
    await receiver.waitForRequests(before + 1, 20_000);
  });

  it('/readyz is 503 shutting_down right after SIGTERM while in-flight work finishes; then exit 0', async () => {
    // webhooks: an attempt the receiver answers slowly is in flight at the signal.
    receiver.answerNext({ status: 200, delayMs: 1_500 });
    const before = receiver.requests.length;
    await createAndComplete(1);
    await receiver.waitForRequests(before + 1, 20_000);
    webhooks.proc.kill('SIGTERM');
    const shuttingDown = await pollUntil(
      () => probe(webhooks, '/readyz'),
      (p) => p.status === 503,
      { timeoutMs: 1_000, intervalMs: 20, description: 'webhooks /readyz 503' },
    );
    expect(shuttingDown.body?.status).toBe('shutting_down');
    expect(await webhooks.proc.exited).toEqual({ code: 0, signal: null });
    // The attempt finished before the process left: every delivery is recorded as delivered
    // with one attempt (none cut off and left for a retry).
    const mongo = new MongoClient(deps.env.DOCGEN_MONGODB_URL!);
    try {
      const deliveries = await mongo
        .db(deps.env.DOCGEN_MONGODB_DATABASE)
        .collection<DeliveryDoc>(COLLECTIONS.deliveries)
        .find({})
        .toArray();
      expect(deliveries.length).toBe(before + 1);
      expect(deliveries.map((d) => [d.status, d.attempts.length])).toEqual(deliveries.map(() => ['SUCCEEDED', 1]));
    } finally {
      await mongo.close();
    }
    expect(receiver.requests.length).toBe(before + 1);

    // api: a request whose body is still arriving at the signal is answered, then the process exits promptly.
    const body = JSON.stringify({ templateId, variables: { name: 'during shutdown' } });
    const answer = new Promise<{ status: number; at: number }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: api.publicPort,
          method: 'POST',
          path: '/v1/generations',
          headers: {
            Authorization: `Bearer ${secret}`,
            'Content-Type': 'application/json',
            'Transfer-Encoding': 'chunked',
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, at: Date.now() }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        api.proc.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(10)), 500);
      }, 200);
    });
    const apiShuttingDown = await pollUntil(
      () => probe(api, '/readyz'),
      (p) => p.status === 503,
      { timeoutMs: 2_000, intervalMs: 20, description: 'api /readyz 503' },
    );
    expect(apiShuttingDown.body?.status).toBe('shutting_down');
    const answered = await answer;
    expect(answered.status).toBe(201);
    expect(await api.proc.exited).toEqual({ code: 0, signal: null });
    // Not held up by the finished request's keep-alive connection.
    expect(Date.now() - answered.at).toBeLessThan(3_000);

    render.proc.kill('SIGTERM');
    expect(await render.proc.exited).toEqual({ code: 0, signal: null });
  });
});
