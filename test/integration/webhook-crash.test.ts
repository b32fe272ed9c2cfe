// Crash safety of webhook delivery: the webhooks role runs as its own process
// (`docgen serve --role webhooks`, as in production) and is killed with SIGKILL in the middle
// of a retry sequence, or while an attempt is in flight. A new process must finish the
// delivery, on schedule and without losing or repeating recorded attempts, and an event
// published while no webhooks process runs is delivered once one starts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Infrastructure } from '../../src/app/infrastructure.ts';
import type { Config } from '../../src/config/config.ts';
import type { EmbeddedNats } from '../../src/dev/embedded-nats.ts';
import { formatId, parseId } from '../../src/domain/ids.ts';
import { deliveryIdFor } from '../../src/webhooks/delivery-dispatcher.ts';
import { startMongo, startNats, type TestMongo } from '../harness/dependencies.ts';
import { startHttpReceiver, type HttpReceiver } from '../harness/http-receiver.ts';
import { spawnDocgen, type DocgenProcess } from '../harness/spawn-docgen.ts';
import {
  connectAsProducer,
  createEndpoint,
  createWorkspace,
  finalEvent,
  gaps,
  verifies,
  waitForDelivery,
  webhooksEnv,
} from './webhook-test-support.ts';

let nats: EmbeddedNats;
let mongo: TestMongo;
let env: Record<string, string>;
let producer: { config: Config; infrastructure: Infrastructure };
const processes: DocgenProcess[] = [];
const receivers: HttpReceiver[] = [];

function startWebhooksProcess(processEnv = env): DocgenProcess {
  const p = spawnDocgen({ role: 'webhooks', env: processEnv });
  processes.push(p);
  return p;
}

const started = (p: DocgenProcess) => p.waitForLine((line) => line.json?.msg === 'docgen started', 30_000);

beforeAll(async () => {
  [nats, mongo] = await Promise.all([startNats(), startMongo()]);
  env = webhooksEnv({ nats, mongo }, { DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true', DOCGEN_LOG_LEVEL: 'info' });
  producer = await connectAsProducer(env);
});

afterAll(async () => {
  await Promise.allSettled(processes.map((p) => p.stop(5_000)));
  await producer?.infrastructure.close();
  await Promise.allSettled(receivers.map((r) => r.close()));
  await Promise.allSettled([mongo?.stop(), nats?.stop()]);
});

describe.concurrent('webhooks process killed mid retry sequence', () => {
  it(
    'SIGKILL after the 2nd failed attempt: a new process completes the delivery on schedule; an event published meanwhile is delivered too',
    { timeout: 150_000 },
    async () => {
      const repos = producer.infrastructure.repositories;
      const ws = await createWorkspace(repos);
      let secret = '';
      const r = await startHttpReceiver();
      receivers.push(r);
      r.answerNext({ status: 500 }, { status: 500 }, { status: 503 });
      r.answerOtherwise((req) => (verifies(req, secret) ? { status: 204 } : { status: 401 }));
      const endpoint = await createEndpoint(
        repos,
        { secretKey: producer.config.secretKey, allowInsecureUrls: true },
        ws.id,
        r.url,
        ['generation.completed'],
      );
      secret = endpoint.secret;

      const first = startWebhooksProcess();
      await started(first);
      const event = finalEvent(ws.id, 'generation.completed');
      await producer.infrastructure.queue.publishFinalEvent(event);
      const deliveryId = deliveryIdFor(parseId('event', event.eventId)!, endpoint.objectId, event.timestamp);

      await r.waitForRequests(2, 10_000);
      await waitForDelivery(
        repos,
        deliveryId,
        (d) => d.roundAttempts === 2,
        5_000,
        'the second attempt to be recorded',
      );
      // The job is now back in JetStream, waiting out its 2 s delay; this process dies.
      await new Promise((resolve) => setTimeout(resolve, 100));
      first.kill('SIGKILL');
      expect((await first.exited).signal).toBe('SIGKILL');
      const killedAt = Date.now();

      // Published while no webhooks process runs: waits in the durable EVENTS consumer.
      let laterSecret = '';
      const later = await startHttpReceiver();
      receivers.push(later);
      later.answerOtherwise((req) => (verifies(req, laterSecret) ? { status: 204 } : { status: 401 }));
      const laterEndpoint = await createEndpoint(
        repos,
        { secretKey: producer.config.secretKey, allowInsecureUrls: true },
        ws.id,
        later.url,
        ['generation.failed'],
      );
      laterSecret = laterEndpoint.secret;
      const laterEvent = finalEvent(ws.id, 'generation.failed', 'Unknown template tpl_0000');
      await producer.infrastructure.queue.publishFinalEvent(laterEvent);

      const second = startWebhooksProcess();
      await started(second);
      console.info(`[webhooks] replacement process ready ${Date.now() - killedAt} ms after the kill`);

      // Generous: in a full parallel suite run, 30 s after the replacement was ready was not always enough.
      const requests = await r.waitForRequests(4, 60_000);
      const done = await waitForDelivery(repos, deliveryId, (d) => d.status === 'SUCCEEDED', 10_000);
      await later.waitForRequests(1, 10_000);
      await waitForDelivery(
        repos,
        deliveryIdFor(parseId('event', laterEvent.eventId)!, laterEndpoint.objectId, laterEvent.timestamp),
        (d) => d.status === 'SUCCEEDED',
      );
      // Let any duplicate show itself before counting.
      await new Promise((resolve) => setTimeout(resolve, 1_000));

      const measured = gaps(requests.map((q) => q.receivedAt));
      console.info(`[webhooks] gaps across the crash (ms): ${measured.join(', ')} (kill between attempts 2 and 3)`);
      expect(r.requests).toHaveLength(4);
      expect(done.attempts.map((a) => a.statusCode)).toEqual([500, 500, 503, 204]);
      expect(done.attempts.map((a) => a.number)).toEqual([1, 2, 3, 4]);
      expect(new Set(requests.map((q) => q.header('x-service-delivery')))).toEqual(
        new Set([formatId('delivery', deliveryId)]),
      );
      expect(requests.every((q) => verifies(q, secret))).toBe(true);
      // The wait stored before the crash held: not retried early by the new process, and the
      // schedule went on from there (4 s after the 3rd failure).
      expect(measured[0]).toBeGreaterThanOrEqual(900 - 20);
      expect(measured[1]).toBeGreaterThanOrEqual(1800 - 20);
      expect(measured[2]).toBeGreaterThanOrEqual(3600 - 20);
      expect(measured[2]).toBeLessThanOrEqual(4400 + 1000);
      expect(later.requests).toHaveLength(1);
      expect((later.requests[0]!.json() as { payload: unknown }).payload).toEqual({
        generationId: laterEvent.generationId,
        error: 'Unknown template tpl_0000',
      });

      // A clean stop (SIGTERM) of an idle webhooks process exits 0.
      expect(await second.stop(10_000)).toEqual({ code: 0, signal: null });
    },
  );

  it(
    'SIGKILL while an attempt is in flight: the job comes back after ack_wait and the delivery completes',
    { timeout: 90_000 },
    async () => {
      // Its own streams and database (the other test kills processes too), and a short
      // attempt time-out (the job comes back after the consumer's 6 s ack_wait either way).
      const ownEnv = webhooksEnv(
        { nats, mongo },
        { DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true', DOCGEN_LOG_LEVEL: 'info', DOCGEN_WEBHOOK_TIMEOUT_MS: '2000' },
      );
      const own = await connectAsProducer(ownEnv);
      try {
        const repos = own.infrastructure.repositories;
        const ws = await createWorkspace(repos);
        let secret = '';
        const r = await startHttpReceiver();
        receivers.push(r);
        r.answerNext({ status: 204, delayMs: 60_000 });
        r.answerOtherwise((req) => (verifies(req, secret) ? { status: 204 } : { status: 401 }));
        const endpoint = await createEndpoint(
          repos,
          { secretKey: own.config.secretKey, allowInsecureUrls: true },
          ws.id,
          r.url,
          ['generation.completed'],
        );
        secret = endpoint.secret;

        const first = startWebhooksProcess(ownEnv);
        await started(first);
        const event = finalEvent(ws.id, 'generation.completed');
        await own.infrastructure.queue.publishFinalEvent(event);
        await r.waitForRequests(1, 10_000);
        first.kill('SIGKILL');
        await first.exited;
        const killedAt = Date.now();
        const deliveryId = deliveryIdFor(parseId('event', event.eventId)!, endpoint.objectId, event.timestamp);
        expect(await repos.deliveries.get(deliveryId)).toMatchObject({ status: 'PENDING', attempts: [] });

        const second = startWebhooksProcess(ownEnv);
        await started(second);
        const done = await waitForDelivery(repos, deliveryId, (d) => d.status === 'SUCCEEDED', 30_000);
        console.info(
          `[webhooks] in-flight job redelivered and delivered ${Date.now() - killedAt} ms after the kill (ack_wait 6 s)`,
        );
        expect(done.attempts).toHaveLength(1);
        expect(done.attempts[0]).toMatchObject({ number: 1, statusCode: 204 });
        // The receiver saw the cut-off request and the completed one: same delivery id (at-least-once).
        expect(r.requests).toHaveLength(2);
        expect(new Set(r.requests.map((q) => q.header('x-service-delivery')))).toEqual(
          new Set([formatId('delivery', deliveryId)]),
        );
        await second.stop(10_000);
      } finally {
        await own.infrastructure.close();
      }
    },
  );
});
