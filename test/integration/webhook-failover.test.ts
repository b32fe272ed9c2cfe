// The webhooks role on a MongoDB that fails over while it delivers: the role reaches the
// stand-in through the fault proxy (test/harness/mongo-fault-proxy.ts); the test publishes
// final events and reads deliveries through its own connection. A delivery is recorded once
// and ends SUCCEEDED; the receiver gets the event (at least once, here exactly once).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app/build-app.ts';
import { loadConfig, type Config } from '../../src/config/config.ts';
import type { EmbeddedNats } from '../../src/dev/embedded-nats.ts';
import { parseId } from '../../src/domain/ids.ts';
import type { FinalEvent } from '../../src/queue/messages.ts';
import type { Infrastructure } from '../../src/app/infrastructure.ts';
import { silentLogger } from '../../src/ops/logger.ts';
import { COLLECTIONS } from '../../src/store/documents.ts';
import { deliveryIdFor } from '../../src/webhooks/delivery-dispatcher.ts';
import { startMongo, startNats, type TestMongo } from '../harness/dependencies.ts';
import { startHttpReceiver, type HttpReceiver } from '../harness/http-receiver.ts';
import { startMongoFaultProxy, type MongoFaultProxy } from '../harness/mongo-fault-proxy.ts';
import {
  connectAsProducer,
  createEndpoint,
  createWorkspace,
  finalEvent,
  waitForDelivery,
  webhooksEnv,
  type TestEndpoint,
} from './webhook-test-support.ts';

let nats: EmbeddedNats;
let mongo: TestMongo;
let proxy: MongoFaultProxy;
let producer: { config: Config; infrastructure: Infrastructure };
let app: App;
let receiver: HttpReceiver;
let workspaceId: string;

beforeAll(async () => {
  [nats, mongo] = await Promise.all([startNats(), startMongo()]);
  proxy = await startMongoFaultProxy({ upstreamUrl: mongo.url });
  const env = webhooksEnv({ nats, mongo }, { DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true' });
  producer = await connectAsProducer(env);
  app = await buildApp(loadConfig({ ...env, DOCGEN_MONGODB_URL: proxy.url }), { logger: silentLogger });
  receiver = await startHttpReceiver({ defaultAnswer: { status: 204 } });
  workspaceId = (await createWorkspace(producer.infrastructure.repositories)).id;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await producer?.infrastructure.close();
  await receiver?.close();
  await proxy?.stop();
  await Promise.allSettled([nats?.stop(), mongo?.stop()]);
});

async function endpointFor(events: string[]) {
  return createEndpoint(
    producer.infrastructure.repositories,
    { secretKey: producer.config.secretKey, allowInsecureUrls: true },
    workspaceId,
    receiver.url,
    events,
  );
}

/**
 * Publishes the event; once its delivery SUCCEEDED (and a duplicate had time to show), the row and
 * the requests received.
 */
async function deliver(event: FinalEvent, endpoint: TestEndpoint, timeoutMs: number) {
  await producer.infrastructure.queue.publishFinalEvent(event);
  const id = deliveryIdFor(parseId('event', event.eventId)!, endpoint.objectId, event.timestamp);
  const done = await waitForDelivery(
    producer.infrastructure.repositories,
    id,
    (d) => d.status === 'SUCCEEDED',
    timeoutMs,
  );
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  return { done, requests: requestsFor(event.generationId).length };
}

const requestsFor = (generationId: string) =>
  receiver.requests.filter(
    (r) => (r.json() as { payload: { generationId: string } }).payload.generationId === generationId,
  );

describe('webhook deliveries through a MongoDB failover', () => {
  it('a writeConcernError on recording the attempt: the attempt stands (it was applied), one request, SUCCEEDED', async () => {
    const endpoint = await endpointFor(['generation.completed']);
    const fault = proxy.inject({
      commands: ['findAndModify'],
      collection: COLLECTIONS.deliveries,
      times: 1,
      action: { kind: 'writeConcernError', code: 64, codeName: 'WriteConcernFailed' },
    });
    const { done, requests } = await deliver(finalEvent(workspaceId, 'generation.completed'), endpoint, 20_000);
    expect(fault.applied).toBe(1);
    expect(done.attempts.map((a) => a.statusCode)).toEqual([204]);
    expect(requests).toBe(1);
  }, 40_000);

  it('a 12 s election while the receiver answers: the attempt is recorded after it, once', async () => {
    const endpoint = await endpointFor(['generation.failed']);
    let election: Promise<void> | undefined;
    // The receiver takes its time; the primary goes away meanwhile.
    receiver.answerNext(() => {
      election = proxy.electionWindow(12_000);
      return { status: 204, delayMs: 500 };
    });
    const event = finalEvent(workspaceId, 'generation.failed', 'Template "x" has no published version');
    const { done, requests } = await deliver(event, endpoint, 45_000);
    await election;
    expect(done.attempts.map((a) => [a.number, a.statusCode])).toEqual([[1, 204]]);
    expect(requests).toBe(1);
  }, 60_000);
});
