// OpenTelemetry: one trace per generation across processes. The api, render and webhooks
// roles run as separate `docgen serve` processes exporting OTLP over HTTP/JSON
// (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) to a receiver on 127.0.0.1:0 that parses what they
// send. One generation (REST create, render, webhook delivery) must produce spans from all
// three services sharing one trace id, a span per stage, each parented across the NATS hops.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { WebhookEndpointService } from '../../src/gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { startHttpReceiver, type HttpReceiver } from '../harness/http-receiver.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { adminClients, postJson, publishedTemplate, request, bearer, startDeps, type Deps } from './api-stack.ts';
import { startRole, type RoleProcess } from './ops-stack.ts';

interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

let deps: Deps;
let otlp: http.Server;
let otlpUrl: string;
const spans: ReceivedSpan[] = [];
const contentTypes = new Set<string>();
let webhookReceiver: HttpReceiver;
const roles: RoleProcess[] = [];

function attributeValue(v: Record<string, unknown> | undefined): unknown {
  if (!v) return undefined;
  return v.stringValue ?? v.intValue ?? v.doubleValue ?? v.boolValue;
}

/** A minimal OTLP/HTTP JSON trace receiver (ExportTraceServiceRequest). */
function startOtlpReceiver(): Promise<void> {
  otlp = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      contentTypes.add(String(req.headers['content-type']));
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans?: Array<{
            resource?: { attributes?: Array<{ key: string; value: Record<string, unknown> }> };
            scopeSpans?: Array<{
              spans?: Array<{
                traceId: string;
                spanId: string;
                parentSpanId?: string;
                name: string;
                kind: number;
                attributes?: Array<{ key: string; value: Record<string, unknown> }>;
              }>;
            }>;
          }>;
        };
        for (const rs of body.resourceSpans ?? []) {
          const service = String(
            attributeValue(rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value) ?? '',
          );
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({
                service,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? '',
                name: s.name,
                kind: s.kind,
                attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, attributeValue(a.value)])),
              });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    otlp.listen(0, '127.0.0.1', () => {
      otlpUrl = `http://127.0.0.1:${(otlp.address() as AddressInfo).port}`;
      resolve();
    }),
  );
}

beforeAll(async () => {
  await startOtlpReceiver();
  webhookReceiver = await startHttpReceiver();
  deps = await startDeps({ DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true' });
  const otel = {
    OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
  roles.push(
    ...(await Promise.all([
      startRole(deps, 'api', otel),
      startRole(deps, 'render', { ...otel, DOCGEN_RENDER_CONCURRENCY: '1' }),
      startRole(deps, 'webhooks', otel),
    ])),
  );
});

afterAll(async () => {
  await Promise.allSettled(roles.map((r) => r.proc.stop(10_000)));
  await webhookReceiver?.close();
  await deps?.stop();
  await new Promise((resolve) => otlp?.close(resolve));
});

describe('OpenTelemetry tracing', () => {
  it('one generation: spans from the api, render and webhooks processes, one trace id, a span per stage', async () => {
    const api = roles[0]!;
    for (const r of roles)
      expect(
        r.proc.lines.some((l) => l.json?.msg === 'tracing on: exporting spans over OTLP'),
        r.role,
      ).toBe(true);
    const admin = adminClients(api.adminPort!, deps.adminToken);
    const workspaceId = (await admin.workspaces.createWorkspace({ name: 'tracing' })).workspace!.id;
    const secret = (
      await admin.apiKeys.createApiKey({
        workspaceId,
        name: 'tracing',
        scopes: ['generations:trigger', 'generations:read'],
      })
    ).secret;
    const templateId = await publishedTemplate(admin, workspaceId);
    const transport = createConnectTransport({
      baseUrl: `http://127.0.0.1:${api.adminPort}`,
      httpVersion: '1.1',
      interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${deps.adminToken}`), next(req))],
    });
    await createClient(WebhookEndpointService, transport).createWebhookEndpoint({
      workspaceId,
      url: `${webhookReceiver.url}/hooks`,
      events: ['generation.completed'],
    });

    const created = await postJson(`http://127.0.0.1:${api.publicPort}`, secret, {
      templateId,
      variables: { name: 'Ada' },
    });
    expect(created.status, created.text).toBe(201);
    const generationId = created.body.id as string;
    await pollUntil(
      async () =>
        (
          await request(`http://127.0.0.1:${api.publicPort}`, {
            method: 'GET',
            path: `/v1/generations/${generationId}`,
            headers: bearer(secret),
          })
        ).body?.status,
      (s) => s === 'COMPLETED',
      { timeoutMs: 30_000, intervalMs: 100, description: 'the generation to complete' },
    );
    await webhookReceiver.waitForRequests(1, 30_000);

    const expected: Array<[service: string, name: string]> = [
      ['docgen-api', 'POST /v1/generations'],
      ['docgen-api', 'publish render job'],
      ['docgen-render', 'render generation'],
      ['docgen-render', 'liquid render'],
      ['docgen-render', 'chromium print pdf'],
      ['docgen-render', 'object store put pdf'],
      ['docgen-render', 'publish final event'],
      ['docgen-webhooks', 'dispatch final event'],
      ['docgen-webhooks', 'publish delivery job'],
      ['docgen-webhooks', 'webhook delivery job'],
      ['docgen-webhooks', 'webhook attempt'],
    ];
    const root = await pollUntil(() => spans.find((s) => s.name === 'POST /v1/generations'), Boolean, {
      timeoutMs: 15_000,
      description: 'the API request span',
    });
    const trace = await pollUntil(
      () => spans.filter((s) => s.traceId === root!.traceId),
      (t) => expected.every(([service, name]) => t.some((s) => s.service === service && s.name === name)),
      { timeoutMs: 20_000, intervalMs: 100, description: 'every stage of the generation in one trace' },
    ).catch(() => spans.filter((s) => s.traceId === root!.traceId));
    const seen = trace.map((s) => `${s.service} ${s.name}`);
    for (const [service, name] of expected)
      expect(seen, `spans in the trace: ${seen.join(', ')}`).toContain(`${service} ${name}`);
    expect(contentTypes).toEqual(new Set(['application/json']));

    // Each hop's consumer span is the child of the producer span whose message it handled.
    const one = (name: string) => trace.find((s) => s.name === name)!;
    expect(root!.parentSpanId).toBe('');
    expect(root!.attributes['http.response.status_code']).toBe(201);
    expect(one('publish render job').parentSpanId).toBe(root!.spanId);
    expect(one('publish render job').attributes['docgen.generation.id']).toBe(generationId);
    expect(one('render generation').parentSpanId).toBe(one('publish render job').spanId);
    for (const stage of ['liquid render', 'object store put pdf', 'publish final event'])
      expect(one(stage).parentSpanId, stage).toBe(one('render generation').spanId);
    expect(one('dispatch final event').parentSpanId).toBe(one('publish final event').spanId);
    expect(one('publish delivery job').parentSpanId).toBe(one('dispatch final event').spanId);
    expect(one('webhook delivery job').parentSpanId).toBe(one('publish delivery job').spanId);
    expect(one('webhook attempt').parentSpanId).toBe(one('webhook delivery job').spanId);
    expect(one('webhook attempt').attributes['http.response.status_code']).toBe(200);
    // The API key never reaches a span.
    expect(JSON.stringify(trace)).not.toContain(secret);
  });
});
