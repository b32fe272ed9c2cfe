// Issue 7: structured logs, and no secret in them. api, render and webhooks run as real
// `docgen serve` processes at DOCGEN_LOG_LEVEL=debug (the most that is ever logged); the test
// creates API keys and webhook endpoints (secrets rotated too), generations, requests with a
// revoked key, an unknown key and a wrong admin token, and webhook deliveries (one retried),
// then stops every process and reads all it wrote:
// - every stdout line is a JSON record with time, level, msg and role;
// - no API key, webhook secret, admin token, secret key or S3 secret key appears anywhere,
//   stdout or stderr;
// - request records carry the request id, render records the generation id.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { ApiKeyService } from '../../src/gen/docgen/admin/v1/api_key_pb.js';
import { WebhookEndpointService } from '../../src/gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { WorkspaceService } from '../../src/gen/docgen/admin/v1/workspace_pb.js';
import { startHttpReceiver, type HttpReceiver } from '../harness/http-receiver.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { adminClients, postJson, publishedTemplate, request, startDeps, type Deps } from './api-stack.ts';
import { probe, records, startRole, type RoleProcess } from './ops-stack.ts';

let deps: Deps;
let receiver: HttpReceiver;
let roles: RoleProcess[] = [];
const NATS_PASSWORD = `nats-pw-${randomBytes(8).toString('hex')}`;

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
  // Credentials in the NATS URL (nats-server without authorization ignores them): error
  // messages that quote the connection string must not carry the password.
  const natsUrl = deps.env.DOCGEN_NATS_URL!.replace('nats://', `nats://docgen:${NATS_PASSWORD}@`);
  roles = await Promise.all(
    (['api', 'render', 'webhooks'] as const).map((role) =>
      startRole(deps, role, { DOCGEN_LOG_LEVEL: 'debug', DOCGEN_NATS_URL: natsUrl }),
    ),
  );
});

afterAll(async () => {
  await Promise.all(roles.map((p) => p.proc.stop(10_000)));
  await receiver?.close();
  await deps?.stop();
});

function adminTransport(port: number, token: string) {
  return createConnectTransport({
    baseUrl: `http://127.0.0.1:${port}`,
    httpVersion: '1.1',
    interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${token}`), next(req))],
  });
}

it('logs JSON records with request and generation ids and never a secret', async () => {
  const [api, render, webhooks] = roles as [RoleProcess, RoleProcess, RoleProcess];
  const baseUrl = `http://127.0.0.1:${api.publicPort}`;
  const admin = adminClients(api.adminPort!, deps.adminToken);
  const endpoints = createClient(WebhookEndpointService, adminTransport(api.adminPort!, deps.adminToken));
  const secrets: string[] = [
    deps.adminToken,
    deps.env.DOCGEN_SECRET_KEY!,
    deps.env.DOCGEN_S3_SECRET_KEY!,
    NATS_PASSWORD,
  ];

  const workspaceId = (await admin.workspaces.createWorkspace({ name: 'logs' })).workspace!.id;
  const key = await admin.apiKeys.createApiKey({
    workspaceId,
    name: 'live',
    scopes: ['generations:trigger', 'generations:read'],
  });
  const revoked = await admin.apiKeys.createApiKey({
    workspaceId,
    name: 'to revoke',
    scopes: ['generations:trigger', 'generations:read'],
  });
  secrets.push(key.secret, revoked.secret);
  const templateId = await publishedTemplate(admin, workspaceId);
  const endpoint = await endpoints.createWebhookEndpoint({
    workspaceId,
    url: `${receiver.url}/hooks?token=abc`,
    events: ['generation.completed'],
  });
  const rotated = await endpoints.rotateWebhookEndpointSecret({ id: endpoint.endpoint!.id });
  secrets.push(endpoint.secret, rotated.secret);
  for (const s of secrets) expect(s.length).toBeGreaterThanOrEqual(6);

  // The revoked key is used before and after its revocation (the cache lapses within 500 ms).
  const list = (secret: string, requestId?: string) =>
    request(baseUrl, {
      path: '/v1/generations',
      headers: { Authorization: `Bearer ${secret}`, ...(requestId ? { 'X-Request-Id': requestId } : {}) },
    });
  expect((await list(revoked.secret)).status).toBe(200);
  await admin.apiKeys.revokeApiKey({ id: revoked.apiKey!.id });
  await pollUntil(
    () => list(revoked.secret),
    (a) => a.status === 401,
    { timeoutMs: 5_000, intervalMs: 100, description: 'the revoked key refused' },
  );
  // A well-formed key that never existed, the admin token on the public API, a wrong admin token.
  const unknownKey = `svc_live_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x')}`;
  secrets.push(unknownKey);
  expect((await list(unknownKey)).status).toBe(401);
  expect((await list(deps.adminToken)).status).toBe(401);
  const wrongToken = `wrong-admin-${randomBytes(12).toString('hex')}`;
  secrets.push(wrongToken);
  const refused = await createClient(WorkspaceService, adminTransport(api.adminPort!, wrongToken))
    .listWorkspaces({})
    .then(
      () => undefined,
      (err: unknown) => ConnectError.from(err).code,
    );
  expect(refused).toBe(Code.Unauthenticated);
  const refusedKeys = await createClient(ApiKeyService, adminTransport(api.adminPort!, `${deps.adminToken}x`))
    .createApiKey({ workspaceId, name: 'nope', scopes: ['generations:read'] })
    .then(
      () => undefined,
      (err: unknown) => ConnectError.from(err).code,
    );
  expect(refusedKeys).toBe(Code.Unauthenticated);

  // Generations, and their webhooks: the first attempt fails (with the secret-looking header
  // echoed back in the body), the retry succeeds.
  receiver.answerNext({ status: 500, body: `nope: ${endpoint.secret} ${key.secret}` });
  const requestId = `ops-logs-${randomBytes(4).toString('hex')}`;
  const generationIds: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await postJson(
      baseUrl,
      key.secret,
      { templateId, variables: { name: `logs ${i}` } },
      i === 0 ? { 'X-Request-Id': requestId } : {},
    );
    expect(res.status, res.text).toBe(201);
    generationIds.push(res.body.id as string);
  }
  for (const id of generationIds) {
    await pollUntil(
      () => request(baseUrl, { path: `/v1/generations/${id}`, headers: { Authorization: `Bearer ${key.secret}` } }),
      (a) => a.body?.status === 'COMPLETED',
      { timeoutMs: 30_000, intervalMs: 100, description: `generation ${id} completed` },
    );
  }
  await receiver.waitForRequests(4, 20_000);
  // The receiver saw the signatures (so they existed to be leaked); collect them too.
  for (const r of receiver.requests) secrets.push(r.header('webhook-signature')!, r.header('x-service-signature')!);
  expect((await list(key.secret, `${requestId}-list`)).status).toBe(200);

  // A NATS outage: readiness failures and reconnection trouble get logged, with error texts.
  await deps.nats.kill();
  try {
    for (const role of roles) {
      await pollUntil(
        () => probe(role, '/readyz'),
        (p) => p.status === 503,
        { timeoutMs: 10_000, intervalMs: 100, description: `${role.role} not ready without NATS` },
      );
    }
    // Work arriving meanwhile is accepted: the row is written, its job published from the outbox later.
    const during = await postJson(baseUrl, key.secret, { templateId, variables: { name: 'no nats' } });
    expect(during.status, during.text).toBe(201);
    generationIds.push(during.body.id as string);
  } finally {
    await deps.nats.restart();
  }
  for (const role of roles) {
    await pollUntil(
      () => probe(role, '/readyz'),
      (p) => p.status === 200,
      { timeoutMs: 15_000, intervalMs: 100, description: `${role.role} ready again` },
    );
  }

  await pollUntil(
    () =>
      request(baseUrl, {
        path: `/v1/generations/${generationIds.at(-1)}`,
        headers: { Authorization: `Bearer ${key.secret}` },
      }),
    (a) => a.body?.status === 'COMPLETED',
    { timeoutMs: 30_000, intervalMs: 200, description: 'the generation created during the outage completed' },
  );

  // Stop everything so the shutdown records are in the capture too.
  const exits = await Promise.all(roles.map((p) => p.proc.stop(15_000)));
  expect(exits, roles.map((p) => p.proc.output().slice(-2_000)).join('\n')).toEqual(
    roles.map(() => ({ code: 0, signal: null })),
  );

  // 1. Every stdout line is one JSON record with the envelope.
  const levels = new Set(['debug', 'info', 'warn', 'error']);
  for (const role of roles) {
    const stdout = role.proc.lines.filter((l) => l.stream === 'stdout');
    expect(stdout.length).toBeGreaterThan(5);
    for (const line of stdout) {
      const where = `${role.role} stdout: ${line.text.slice(0, 300)}`;
      expect(line.json, where).toBeDefined();
      const record = line.json!;
      expect(typeof record.time === 'string' && !Number.isNaN(Date.parse(record.time)), where).toBe(true);
      expect(levels.has(String(record.level)), where).toBe(true);
      expect(typeof record.msg === 'string' && record.msg.length > 0, where).toBe(true);
      expect(record.role, where).toBe(role.role);
    }
    // Nothing goes around the logger.
    expect(role.proc.lines.filter((l) => l.stream === 'stderr').map((l) => l.text)).toEqual([]);
  }
  // Debug records were written (the level took effect), so the secret check covers them.
  expect(api.proc.lines.some((l) => l.json?.level === 'debug')).toBe(true);

  // 2. No secret anywhere, in any form the processes might have written it.
  const everything = roles.map((p) => p.proc.output()).join('\n');
  for (const secret of secrets) {
    expect(everything.includes(secret), `a secret (${secret.slice(0, 6)}…) appears in the logs`).toBe(false);
  }
  expect(everything).not.toMatch(/svc_live_[A-Za-z0-9]/);
  expect(everything).not.toMatch(/whsec_[A-Za-z0-9]/);
  expect(everything).not.toMatch(/Bearer\s+(?!\[REDACTED\])\S/i);

  // 3. Ids: request records carry the request id (the client's X-Request-Id or a generated
  // one); render records the generation id.
  const requests = records(api.proc, 'request');
  expect(requests.length).toBeGreaterThan(0);
  for (const r of requests)
    expect(typeof r.requestId === 'string' && r.requestId.length > 0, JSON.stringify(r)).toBe(true);
  expect(requests.find((r) => r.requestId === requestId)).toMatchObject({
    route: '/v1/generations',
    method: 'POST',
    status: 201,
  });
  expect(requests.filter((r) => r.status === 401).length).toBeGreaterThanOrEqual(3);
  const completed = records(render.proc, 'render completed').map((r) => r.generationId);
  expect(completed.sort()).toEqual([...generationIds].sort());
  // The retried delivery was logged with its ids and status code, not the receiver's body.
  const retried = records(webhooks.proc, 'webhook attempt failed; will retry');
  expect(retried.length).toBe(1);
  expect(retried[0]).toMatchObject({ statusCode: 500, endpointId: endpoint.endpoint!.id });
  expect(typeof retried[0]!.deliveryId).toBe('string');
});
