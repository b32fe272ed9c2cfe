// Retention of generations as a user sees it: a workspace with a retention of one minute
// (the minimum) gets its finished generations deleted — the row (GET answers 404), the PDF
// in the object store and the webhook deliveries — within two minutes of their creation,
// and not before the minute is up; a workspace without a retention keeps everything.
// Real parts throughout: nats-server, MongoDB (stand-in or DOCGEN_TEST_MONGODB_URL), s3rver,
// Chromium, docgen's api, render and webhooks roles in one process, a webhook receiver.
// The sweeper runs every 2 s here (DOCGEN_RETENTION_SWEEP_INTERVAL_MS) instead of 30 s.
import { create } from '@bufbuild/protobuf';
import { DurationSchema } from '@bufbuild/protobuf/wkt';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseId } from '../../src/domain/ids.ts';
import { WebhookEndpointService } from '../../src/gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { generationObjectKey } from '../../src/generations/generation-erasure.ts';
import { startHttpReceiver, type HttpReceiver } from '../harness/http-receiver.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { firstPage } from '../harness/test-config.ts';
import { publishedTemplate, request, startApiStack, type ApiStack } from './api-stack.ts';

let stack: ApiStack;
let receiver: HttpReceiver;

beforeAll(async () => {
  receiver = await startHttpReceiver({ defaultAnswer: { status: 204 } });
  stack = await startApiStack({
    env: {
      DOCGEN_ROLES: 'api,render,webhooks',
      DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      DOCGEN_RENDER_CONCURRENCY: '1',
      DOCGEN_RETENTION_SWEEP_INTERVAL_MS: '2000',
    },
  });
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

async function workspaceWithGeneration(
  name: string,
): Promise<{ workspaceId: string; generationId: string; createdAt: number; key: string }> {
  const workspaceId = await stack.workspace(name);
  const key = (await stack.key(workspaceId)).secret;
  const templateId = await publishedTemplate(stack.admin, workspaceId);
  const transport = createConnectTransport({
    baseUrl: `http://127.0.0.1:${stack.app.adminPort}`,
    httpVersion: '1.1',
    interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${stack.deps.adminToken}`), next(req))],
  });
  await createClient(WebhookEndpointService, transport).createWebhookEndpoint({
    workspaceId,
    url: receiver.url,
    events: ['generation.completed'],
  });
  const createdAt = Date.now();
  const res = await request(stack.baseUrl, {
    method: 'POST',
    path: '/v1/generations',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ templateId, variables: { name: name } }),
  });
  expect(res.status, res.text).toBe(201);
  return { workspaceId, generationId: res.body.id as string, createdAt, key };
}

function getStatus(key: string, id: string) {
  return request(stack.baseUrl, { path: `/v1/generations/${id}`, headers: { authorization: `Bearer ${key}` } });
}

describe('retention of generations', () => {
  it('a retention of 1m deletes a finished generation, its PDF and its deliveries within 2 minutes, and not before', async () => {
    const { repositories } = stack.app.infrastructure;
    const objects = stack.app.infrastructure.objects;
    const kept = await workspaceWithGeneration('no retention');
    const expiring = await workspaceWithGeneration('one minute');
    const updated = await stack.admin.workspaces.updateWorkspace({
      id: expiring.workspaceId,
      retention: create(DurationSchema, { seconds: 60n }),
    });
    expect(updated.workspace?.retention?.seconds).toBe(60n);

    for (const g of [kept, expiring]) {
      const done = await pollUntil(
        () => getStatus(g.key, g.generationId),
        (r) => r.body?.status === 'COMPLETED',
        { timeoutMs: 30_000, intervalMs: 200, description: `${g.generationId} COMPLETED` },
      );
      expect((await fetch(done.body.outputUrl)).status).toBe(200);
      await pollUntil(
        () => repositories.deliveries.list({ generationId: parseId('generation', g.generationId)! }, firstPage()),
        (p) => p.items.some((d) => d.status === 'SUCCEEDED'),
        {
          timeoutMs: 15_000,
          description: `a delivered webhook for ${g.generationId}`,
        },
      );
    }
    const keyOf = (g: { workspaceId: string; generationId: string }) =>
      generationObjectKey({
        _id: parseId('generation', g.generationId)!,
        workspaceId: parseId('workspace', g.workspaceId)!,
      });
    expect(await objects.exists(keyOf(expiring))).toBe(true);

    const gone = await pollUntil(
      () => getStatus(expiring.key, expiring.generationId),
      (r) => r.status === 404,
      {
        timeoutMs: 125_000,
        intervalMs: 500,
        description: 'the expired generation to answer 404',
      },
    );
    const elapsedMs = Date.now() - expiring.createdAt;
    console.log(
      `retention 1m: generation deleted ${(elapsedMs / 1000).toFixed(1)} s after its creation (sweep interval 2 s)`,
    );
    expect(gone.body.error.code).toBe('NOT_FOUND');
    expect(elapsedMs).toBeGreaterThanOrEqual(60_000);
    expect(elapsedMs).toBeLessThanOrEqual(120_000);

    // Everything of it went: row, object, deliveries.
    const id = parseId('generation', expiring.generationId)!;
    expect(await repositories.generations.get(id)).toBeNull();
    expect(await objects.exists(keyOf(expiring))).toBe(false);
    expect((await repositories.deliveries.list({ generationId: id }, firstPage())).items).toEqual([]);

    // The workspace without a retention keeps its generation (older than the other one).
    const stillThere = await getStatus(kept.key, kept.generationId);
    expect(stillThere.status).toBe(200);
    expect(stillThere.body.status).toBe('COMPLETED');
    expect(await objects.exists(keyOf(kept))).toBe(true);
    expect(
      (await repositories.deliveries.list({ generationId: parseId('generation', kept.generationId)! }, firstPage()))
        .items,
    ).toHaveLength(1);
    expect(await stack.app.metrics.metricsText()).toMatch(/docgen_generations_expired_total\{[^}]*\} 1\b/);
  }, 180_000);
});
