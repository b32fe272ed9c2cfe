// The webhooks role end to end, in process (buildApp with roles ['webhooks']), on a real
// nats-server, the MongoDB stand-in and real HTTP receivers on loopback. Final events are
// published the way the render pipeline publishes them (publishFinalEvent), which is the
// producer the webhooks role consumes.
//
// The retry tests wait out the real schedule (1+2+4+8+16 s), so the tests of this file run
// concurrently; each uses a workspace of its own.
import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryAdmin } from '../../src/admin/delivery-admin.ts';
import { WebhookEndpointAdmin } from '../../src/admin/webhook-endpoint-admin.ts';
import { webhookSecretContext } from '../../src/webhooks/secret-box.ts';
import { buildApp, type App } from '../../src/app/build-app.ts';
import { SWEEP_GRACE_MS, WEBHOOK_DISPATCHER_CONSUMER } from '../../src/app/webhooks-role.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { EmbeddedNats } from '../../src/dev/embedded-nats.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { formatId, parseId } from '../../src/domain/ids.ts';
import { createLogger, type Logger } from '../../src/ops/logger.ts';
import type { WebhookEndpointDoc } from '../../src/store/documents.ts';
import { deliveryIdFor, newDeliveryDoc } from '../../src/webhooks/delivery-dispatcher.ts';
import { DeliverySweeper } from '../../src/webhooks/delivery-sweeper.ts';
import { generateWebhookSecret, sealSecret } from '../../src/webhooks/secret-box.ts';
import { startMongo, startNats, type TestMongo } from '../harness/dependencies.ts';
import { startHttpReceiver, type HttpReceiver, type ReceivedRequest } from '../harness/http-receiver.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { firstPage, testPageTokens } from '../harness/test-config.ts';
import {
  PACKAGE_VERSION,
  createEndpoint,
  createWorkspace,
  finalEvent,
  gaps,
  verifies,
  waitForDelivery,
  webhooksEnv,
  type TestEndpoint,
} from './webhook-test-support.ts';

let nats: EmbeddedNats;
let mongo: TestMongo;
/** DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS=true: receivers on loopback are reachable. */
let app: App;
/** The production setting: insecure URLs refused. */
let strict: App;
const receivers: HttpReceiver[] = [];
const canaries: Server[] = [];
const logLines: string[] = [];

function testLogger(): Logger {
  return createLogger({ level: 'info', role: 'webhooks', stream: { write: (line: string) => logLines.push(line) } });
}

async function receiver(secret?: () => string): Promise<HttpReceiver> {
  const r = await startHttpReceiver();
  // Every request is verified like a real receiver would; a bad signature is refused (401).
  if (secret) r.answerOtherwise((req) => (verifies(req, secret()) ? { status: 204 } : { status: 401 }));
  receivers.push(r);
  return r;
}

/** A TCP listener that only counts connections: anything reaching it is a failure. */
async function canary(host: string): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  canaries.push(server);
  const address = server.address();
  return { port: typeof address === 'object' && address ? address.port : 0, connections: () => connections };
}

function endpointOf(app: App) {
  return { secretKey: app.config.secretKey, allowInsecureUrls: app.config.webhooks.allowInsecureUrls };
}

function deliveryOf(event: { eventId: string; timestamp: number }, endpoint: TestEndpoint): ObjectId {
  return deliveryIdFor(parseId('event', event.eventId)!, endpoint.objectId, event.timestamp);
}

beforeAll(async () => {
  [nats, mongo] = await Promise.all([startNats(), startMongo()]);
  app = await buildApp(loadConfig(webhooksEnv({ nats, mongo }, { DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true' })), {
    logger: testLogger(),
  });
  strict = await buildApp(loadConfig(webhooksEnv({ nats, mongo }, { DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'false' })), {
    logger: testLogger(),
  });
  watchSchedules(app);
  watchSchedules(strict);
});

afterAll(async () => {
  await Promise.allSettled([app?.close(), strict?.close()]);
  await Promise.allSettled(receivers.map((r) => r.close()));
  await Promise.allSettled(canaries.map((c) => new Promise((resolve) => c.close(resolve))));
  await Promise.allSettled([mongo?.stop(), nats?.stop()]);
});

describe.concurrent('webhooks role', () => {
  it('signs every delivery (verified with node:crypto, timing-safe), sends the contract headers and body, and only to endpoints that selected the event', async () => {
    const repos = app.infrastructure.repositories;
    const ws = await createWorkspace(repos);
    const other = await createWorkspace(repos, 'another workspace');
    const secrets = new Map<HttpReceiver, string>();
    const make = async (workspaceId: string, events: string[]) => {
      const r = await receiver(() => secrets.get(r)!);
      const endpoint = await createEndpoint(
        repos,
        endpointOf(app),
        workspaceId,
        `${r.url}/hooks/docgen?tenant=1`,
        events,
      );
      secrets.set(r, endpoint.secret);
      return { r, endpoint };
    };
    const both = await make(ws.id, ['generation.completed', 'generation.failed']);
    const completedOnly = await make(ws.id, ['generation.completed']);
    const failedOnly = await make(ws.id, ['generation.failed']);
    const otherWorkspace = await make(other.id, ['generation.completed', 'generation.failed']);

    const completed = finalEvent(ws.id, 'generation.completed');
    const failed = finalEvent(ws.id, 'generation.failed', 'Template "invoice" has no published version');
    await app.infrastructure.queue.publishFinalEvent(completed);
    await app.infrastructure.queue.publishFinalEvent(failed);

    const expectations: [typeof both, typeof completed][] = [
      [both, completed],
      [both, failed],
      [completedOnly, completed],
      [failedOnly, failed],
    ];
    for (const [{ endpoint }, event] of expectations) {
      const doc = await waitForDelivery(
        repos,
        deliveryOf(event, endpoint),
        (d) => d.status === 'SUCCEEDED',
        10_000,
        `${event.event} to ${endpoint.id}`,
      );
      expect(doc.attempts).toHaveLength(1);
      expect(doc.attempts[0]).toMatchObject({ number: 1, statusCode: 204, error: '' });
    }

    const check = (request: ReceivedRequest, endpoint: TestEndpoint, event: typeof completed) => {
      expect(request.method).toBe('POST');
      expect(request.url).toBe('/hooks/docgen?tenant=1');
      // Exactly these headers (names as sent), nothing else beyond what HTTP itself needs.
      const names = request.rawHeaders.filter((_, i) => i % 2 === 0);
      expect([...names].sort()).toEqual(
        [
          'Content-Length',
          'Content-Type',
          'Host',
          'User-Agent',
          'X-Service-Delivery',
          'X-Service-Event',
          'X-Service-Signature',
          'webhook-id',
          'webhook-signature',
          'webhook-timestamp',
          'Connection',
        ].sort(),
      );
      expect(request.header('content-type')).toBe('application/json');
      expect(request.header('user-agent')).toBe(`docgen-webhooks/${PACKAGE_VERSION}`);
      expect(request.header('x-service-event')).toBe(event.event);
      const deliveryId = formatId('delivery', deliveryOf(event, endpoint));
      expect(request.header('x-service-delivery')).toBe(deliveryId);
      expect(request.header('webhook-id')).toBe(deliveryId);
      expect(request.header('x-service-signature')).toMatch(/^sha256=[0-9a-f]{64}$/);
      expect(Math.abs(Number(request.header('webhook-timestamp')) - Date.now() / 1000)).toBeLessThan(60);
      expect(verifies(request, endpoint.secret)).toBe(true);
      // Another endpoint's secret does not verify it.
      expect(verifies(request, generateWebhookSecret())).toBe(false);
      const payload =
        event.event === 'generation.failed'
          ? { generationId: event.generationId, error: event.error }
          : { generationId: event.generationId };
      // The exact bytes: compact JSON, keys in this order, Unix seconds.
      expect(
        request.body.equals(Buffer.from(JSON.stringify({ event: event.event, payload, timestamp: event.timestamp }))),
      ).toBe(true);
    };
    const byEvent = (r: HttpReceiver, event: string) => r.requests.filter((q) => q.header('x-service-event') === event);
    check(byEvent(both.r, 'generation.completed')[0]!, both.endpoint, completed);
    check(byEvent(both.r, 'generation.failed')[0]!, both.endpoint, failed);
    check(completedOnly.r.requests[0]!, completedOnly.endpoint, completed);
    check(failedOnly.r.requests[0]!, failedOnly.endpoint, failed);
    expect((failedOnly.r.requests[0]!.json() as { payload: { error: string } }).payload.error).toBe(
      'Template "invoice" has no published version',
    );

    // The same event again, past the broker's duplicate detection (as the outbox sweeper
    // republishes after a crash): the fan-out finds its deliveries and sends nothing new.
    const nats = app.infrastructure.queue.nats;
    await nats.publish(
      `${nats.names.subjects.eventsWildcard.slice(0, -1)}${completed.event}`,
      completed,
      `${completed.eventId}:republished`,
    );
    await pollUntil(
      () => nats.jsm.consumers.info(nats.names.streams.events, WEBHOOK_DISPATCHER_CONSUMER),
      (info) => info.num_pending === 0 && info.num_ack_pending === 0,
      { description: 'the dispatcher to take the republished event' },
    );
    await new Promise((resolve) => setTimeout(resolve, 500));

    expect(both.r.requests).toHaveLength(2);
    expect(completedOnly.r.requests).toHaveLength(1);
    expect(failedOnly.r.requests).toHaveLength(1);
    expect(otherWorkspace.r.requests).toHaveLength(0);
    expect(
      (await repos.deliveries.list({ generationId: parseId('generation', completed.generationId)! }, firstPage()))
        .items,
    ).toHaveLength(2);
  });

  it('500, 500, 200: delivered on the third attempt, about 1 s and 2 s apart, same id and bytes each time', async () => {
    const repos = app.infrastructure.repositories;
    const ws = await createWorkspace(repos);
    let secret = '';
    const r = await receiver(() => secret);
    r.answerNext({ status: 500 }, { status: 500 });
    const endpoint = await createEndpoint(repos, endpointOf(app), ws.id, r.url, ['generation.completed']);
    secret = endpoint.secret;

    const event = finalEvent(ws.id, 'generation.completed');
    await app.infrastructure.queue.publishFinalEvent(event);
    const requests = await r.waitForRequests(3, 30_000);
    const doc = await waitForDelivery(repos, deliveryOf(event, endpoint), (d) => d.status === 'SUCCEEDED');

    const measured = gaps(requests.map((q) => q.receivedAt));
    console.info(`[webhooks] 500,500,200 gaps between attempts (ms): ${measured.join(', ')}`);
    expectSchedule(deliveryOf(event, endpoint), measured, [1000, 2000]);
    expect(doc.attempts.map((a) => a.statusCode)).toEqual([500, 500, 204]);
    expect(doc.attempts.map((a) => a.number)).toEqual([1, 2, 3]);
    expect(doc.attempts[0]!.error).toBe('receiver answered 500');
    expect(new Set(requests.map((q) => q.header('x-service-delivery')))).toEqual(
      new Set([formatId('delivery', doc._id)]),
    );
    expect(requests.every((q) => q.body.equals(requests[0]!.body))).toBe(true);
    expect(requests.every((q) => verifies(q, secret))).toBe(true);
  });

  it(
    'always 500: exactly 6 attempts 1, 2, 4, 8, 16 s apart, then dropped; a redeliver keeps the dlv_ id and succeeds',
    { timeout: 150_000 },
    async () => {
      const repos = app.infrastructure.repositories;
      const ws = await createWorkspace(repos);
      let secret = '';
      let failing = true;
      const r = await receiver();
      r.answerOtherwise((req) =>
        failing
          ? { status: 500, body: 'down for maintenance' }
          : verifies(req, secret)
            ? { status: 200 }
            : { status: 401 },
      );
      const endpoint = await createEndpoint(repos, endpointOf(app), ws.id, r.url, ['generation.failed']);
      secret = endpoint.secret;

      const event = finalEvent(ws.id, 'generation.failed', 'Rendering timed out after 10000 ms');
      await app.infrastructure.queue.publishFinalEvent(event);
      const requests = await r.waitForRequests(6, 75_000);
      const dropped = await waitForDelivery(repos, deliveryOf(event, endpoint), (d) => d.status === 'DROPPED');

      const measured = gaps(requests.map((q) => q.receivedAt));
      console.info(`[webhooks] always-500 gaps between attempts (ms): ${measured.join(', ')}`);
      expectSchedule(deliveryOf(event, endpoint), measured, [1000, 2000, 4000, 8000, 16000]);
      expect(dropped.attempts).toHaveLength(6);
      expect(dropped.roundAttempts).toBe(6);
      expect(dropped.nextAttemptAt).toBeNull();
      expect(dropped.attempts.every((a) => a.statusCode === 500 && a.error === 'receiver answered 500')).toBe(true);
      // Nothing after the sixth.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(r.requests).toHaveLength(6);

      // The operator redelivers (the admin plane's code path) once the receiver is back.
      failing = false;
      const admin = new DeliveryAdmin({
        workspaces: repos.workspaces,
        deliveries: repos.deliveries,
        enqueueDelivery: (job, msgId) => app.infrastructure.queue.publishDeliveryJob(job, msgId),
        pageTokens: testPageTokens(),
      });
      const deliveryId = formatId('delivery', dropped._id);
      const view = await admin.redeliver(deliveryId);
      expect(view).toMatchObject({ id: deliveryId, status: 'PENDING' });
      const after = await r.waitForRequests(7, 10_000);
      const succeeded = await waitForDelivery(repos, dropped._id, (d) => d.status === 'SUCCEEDED');
      expect(succeeded.attempts).toHaveLength(7);
      expect(succeeded.attempts[6]).toMatchObject({ number: 7, statusCode: 200, error: '' });
      expect(succeeded.round).toBe(2);
      expect(after[6]!.header('x-service-delivery')).toBe(deliveryId);
      expect(after[6]!.body.equals(requests[0]!.body)).toBe(true);
      expect(verifies(after[6]!, secret)).toBe(true);
      expect((after[6]!.json() as { payload: unknown }).payload).toEqual({
        generationId: event.generationId,
        error: 'Rendering timed out after 10000 ms',
      });
    },
  );

  it('insecure URLs not allowed: 127.0.0.1, [::1] and a name resolving to 127.0.0.1 are refused at creation and at delivery; the canaries see nothing', async () => {
    const repos = strict.infrastructure.repositories;
    const ws = await createWorkspace(repos);
    const v4 = await canary('127.0.0.1');
    const v6 = await canary('::1');
    const name = await loopbackHostName();
    const urls = [`https://127.0.0.1:${v4.port}/hook`, `https://[::1]:${v6.port}/hook`];
    if (name) urls.push(`https://${name}:${v4.port}/hook`);
    else console.warn('[webhooks] no host name resolving only to loopback in /etc/hosts; the name case is skipped');

    const admin = new WebhookEndpointAdmin({
      workspaces: repos.workspaces,
      endpoints: repos.webhookEndpoints,
      secretKey: strict.config.secretKey,
      allowInsecureUrls: false,
      pageTokens: testPageTokens(),
    });
    for (const url of urls) {
      const refused = await admin.create({ workspaceId: ws.id, url, events: ['generation.completed'] }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused, url).toBeInstanceOf(DomainError);
      expect(JSON.stringify((refused as DomainError).details ?? (refused as Error).message)).toMatch(/loopback/);
    }

    // Rows as if they had been created before the policy changed: refused again at delivery.
    const endpoints: WebhookEndpointDoc[] = urls.map((url) => {
      const _id = new ObjectId();
      return {
        _id,
        workspaceId: ws.objectId,
        url,
        events: ['generation.completed'],
        description: '',
        secret: sealSecret(generateWebhookSecret(), strict.config.secretKey, webhookSecretContext(_id)),
        previousSecret: null,
        previousSecretExpiresAt: null,
        createdAt: new Date(),
        secretRotatedAt: null,
        deletedAt: null,
      };
    });
    for (const doc of endpoints) await repos.webhookEndpoints.insert(doc);
    const event = finalEvent(ws.id, 'generation.completed');
    await strict.infrastructure.queue.publishFinalEvent(event);
    for (const doc of endpoints) {
      const delivery = await waitForDelivery(
        repos,
        deliveryIdFor(parseId('event', event.eventId)!, doc._id, event.timestamp),
        (d) => d.attempts.length >= 2,
        10_000,
        `two refused attempts to ${doc.url}`,
      );
      expect(delivery.status).toBe('PENDING');
      for (const attempt of delivery.attempts) {
        expect(attempt.statusCode, doc.url).toBe(0);
        expect(attempt.error, doc.url).toMatch(/^refused: .*loopback/);
      }
    }
    expect(v4.connections()).toBe(0);
    expect(v6.connections()).toBe(0);
  });

  it('a 302 answer is a failed attempt and the redirect target (a loopback canary) receives nothing', async () => {
    const repos = app.infrastructure.repositories;
    const ws = await createWorkspace(repos);
    const target = await receiver();
    const r = await receiver();
    r.answerOtherwise({ status: 302, headers: { Location: `${target.url}/stolen` } });
    const endpoint = await createEndpoint(repos, endpointOf(app), ws.id, r.url, ['generation.completed']);
    const event = finalEvent(ws.id, 'generation.completed');
    await app.infrastructure.queue.publishFinalEvent(event);

    const doc = await waitForDelivery(
      repos,
      deliveryOf(event, endpoint),
      (d) => d.attempts.length >= 2,
      10_000,
      'two redirected attempts',
    );
    expect(doc.status).toBe('PENDING');
    for (const attempt of doc.attempts) {
      expect(attempt.statusCode).toBe(302);
      expect(attempt.error).toMatch(/redirect, which is not followed/);
    }
    expect(target.requests).toHaveLength(0);
  });

  it('a PENDING delivery whose job never reached the broker is re-queued by the sweeper and delivered', async () => {
    const repos = app.infrastructure.repositories;
    const ws = await createWorkspace(repos);
    let secret = '';
    const r = await receiver(() => secret);
    const endpoint = await createEndpoint(repos, endpointOf(app), ws.id, r.url, ['generation.completed']);
    secret = endpoint.secret;

    // What the dispatcher writes before publishing; the publish "was lost" long ago.
    const event = finalEvent(ws.id, 'generation.completed');
    const longAgo = new Date(Date.now() - SWEEP_GRACE_MS - 60_000);
    const doc = newDeliveryDoc(event, endpoint.objectId, longAgo);
    expect(await repos.deliveries.insertOnce(doc)).toBe(true);

    const queue = app.infrastructure.queue.nats;
    const sweeper = new DeliverySweeper({
      deliveries: repos.deliveries,
      publishJob: async (job, msgId) => {
        await queue.publish(queue.names.subjects.deliveryJobs, job, msgId);
      },
      intervalMs: 60_000,
      graceMs: SWEEP_GRACE_MS,
    });
    // Other tests' deliveries are never overdue by the grace; this one is.
    expect(await sweeper.sweepOnce()).toBe(1);
    expect(await sweeper.sweepOnce()).toBe(0);
    const delivered = await waitForDelivery(repos, doc._id, (d) => d.status === 'SUCCEEDED');
    expect(delivered.attempts).toHaveLength(1);
    expect(r.requests).toHaveLength(1);
    expect(verifies(r.requests[0]!, secret)).toBe(true);
  });

  it('shutdown: stops pulling, lets an attempt finish within the grace period, cuts off and hands back one that does not; the next process delivers it', async () => {
    const env = webhooksEnv({ nats, mongo }, { DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true' });
    const first = await buildApp(loadConfig(env), { logger: testLogger() });
    let second: App | undefined;
    try {
      const repos = first.infrastructure.repositories;
      const ws = await createWorkspace(repos);
      const quick = await receiver();
      quick.answerNext({ status: 204, delayMs: 300 });
      const stuck = await receiver();
      stuck.answerNext({ status: 204, delayMs: 10_000 });
      stuck.answerOtherwise({ status: 204 });
      const quickEndpoint = await createEndpoint(repos, endpointOf(first), ws.id, quick.url, ['generation.completed']);
      const stuckEndpoint = await createEndpoint(repos, endpointOf(first), ws.id, stuck.url, ['generation.completed']);
      const event = finalEvent(ws.id, 'generation.completed');
      await first.infrastructure.queue.publishFinalEvent(event);
      await Promise.all([quick.waitForRequests(1), stuck.waitForRequests(1)]);

      await first.stopAccepting();
      const drainStarted = Date.now();
      await first.drain(AbortSignal.timeout(1_500));
      const drainMs = Date.now() - drainStarted;
      expect(drainMs).toBeLessThan(3_000);
      // Finished within the grace period: recorded as usual.
      expect((await repos.deliveries.get(deliveryOf(event, quickEndpoint)))?.status).toBe('SUCCEEDED');
      // Cut off: not counted against the receiver, still pending.
      const handedBack = await repos.deliveries.get(deliveryOf(event, stuckEndpoint));
      expect(handedBack).toMatchObject({ status: 'PENDING', attempts: [] });
      await first.close();

      second = await buildApp(loadConfig(env), { logger: testLogger() });
      const delivered = await waitForDelivery(
        second.infrastructure.repositories,
        deliveryOf(event, stuckEndpoint),
        (d) => d.status === 'SUCCEEDED',
      );
      expect(delivered.attempts).toHaveLength(1);
      expect(stuck.requests).toHaveLength(2);
      expect(quick.requests).toHaveLength(1);
    } finally {
      await first.close();
      await second?.close();
    }
  });

  it('a delivery whose endpoint was deleted is dropped without a request', async () => {
    const repos = app.infrastructure.repositories;
    const ws = await createWorkspace(repos);
    const r = await receiver();
    const endpoint = await createEndpoint(repos, endpointOf(app), ws.id, r.url, ['generation.completed']);
    await repos.webhookEndpoints.delete(endpoint.objectId);
    const event = finalEvent(ws.id, 'generation.completed');
    const now = new Date();
    const doc = newDeliveryDoc(event, endpoint.objectId, now);
    await repos.deliveries.insertOnce(doc);
    await app.infrastructure.queue.publishDeliveryJob(
      { deliveryId: formatId('delivery', doc._id) },
      `${formatId('delivery', doc._id)}:1`,
    );
    const dropped = await waitForDelivery(repos, doc._id, (d) => d.status === 'DROPPED');
    expect(dropped.attempts).toEqual([
      expect.objectContaining({ number: 1, statusCode: 0, error: 'not sent: the webhook endpoint was deleted' }),
    ]);
    expect(r.requests).toHaveLength(0);
  });
});

interface ScheduledRetry {
  /** When the failed attempt began (stored with it). */
  attemptedAt: number;
  /** When the worker recorded it, with its next attempt's time: after the attempt ended. */
  recordedAt: number;
  nextAttemptAt: number;
}

/** Every retry the delivery workers schedule, by delivery id (both apps' workers take jobs). */
const scheduledRetries = new Map<string, ScheduledRetry[]>();

/** Watches what an app's delivery worker schedules after each failed attempt. */
function watchSchedules(watched: App): void {
  const deliveries = watched.infrastructure.repositories.deliveries;
  const original = deliveries.recordAttempt;
  // The worker calls the repository it was given: this one.
  deliveries.recordAttempt = async function (this: typeof deliveries, id, round, before, attempt, next) {
    if (next.status === 'PENDING') {
      const list = scheduledRetries.get(id.toHexString()) ?? [];
      list.push({
        attemptedAt: attempt.attemptedAt.getTime(),
        recordedAt: Date.now(),
        nextAttemptAt: next.nextAttemptAt.getTime(),
      });
      scheduledRetries.set(id.toHexString(), list);
    }
    return original.call(this, id, round, before, attempt, next);
  };
}

/**
 * The schedule's delay ±10 % jitter, counted from the end of the failed attempt: read from
 * what the worker stores (the next attempt's time lies at most 1.1 delays after the attempt
 * was recorded, and at least 0.9 delays after it began), so a slow machine cannot blur one
 * delay into its neighbour. The receiver saw each attempt no sooner than that (a gap at the
 * receiver also holds the time to pick the due job up and send it, which load stretches).
 */
function expectSchedule(deliveryId: ObjectId, measured: number[], schedule: number[]): void {
  const scheduled = scheduledRetries.get(deliveryId.toHexString()) ?? [];
  expect(scheduled).toHaveLength(schedule.length);
  expect(measured).toHaveLength(schedule.length);
  schedule.forEach((base, i) => {
    const s = scheduled[i]!;
    const what = `retry ${i + 1} (${base} ms)`;
    expect(s.nextAttemptAt - s.recordedAt, `${what}: scheduled at most 1.1 delays ahead`).toBeLessThanOrEqual(
      base * 1.1 + 1,
    );
    expect(s.nextAttemptAt - s.attemptedAt, `${what}: no sooner than 0.9 delays`).toBeGreaterThanOrEqual(
      base * 0.9 - 1,
    );
    expect(measured[i]!, `${what}: the receiver's gap`).toBeGreaterThanOrEqual(base * 0.9 - 20);
  });
}

/** A name from /etc/hosts that resolves (through the system resolver, no DNS query) to loopback only. */
async function loopbackHostName(): Promise<string | undefined> {
  let hosts: string;
  try {
    hosts = readFileSync('/etc/hosts', 'utf8');
  } catch {
    return undefined;
  }
  const names: string[] = [];
  for (const line of hosts.split('\n')) {
    const [address, ...aliases] = line.replace(/#.*/, '').trim().split(/\s+/);
    if (address?.startsWith('127.')) names.push(...aliases);
  }
  for (const name of names) {
    if (name === 'localhost' || name.endsWith('.localhost')) continue; // refused without resolving: not this case
    try {
      const answers = await lookup(name, { all: true });
      if (answers.length > 0 && answers.every((a) => a.address.startsWith('127.') || a.address === '::1')) return name;
    } catch {
      // next
    }
  }
  return undefined;
}
