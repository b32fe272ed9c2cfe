// Isolation and memory under load: 1,000 events to a workspace with two endpoints, one that
// takes 2 s to answer and one that answers at once. The webhooks role runs as its own
// process (`docgen serve --role webhooks`) so its memory can be measured alone.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Infrastructure } from '../../src/app/infrastructure.ts';
import type { Config } from '../../src/config/config.ts';
import type { EmbeddedNats } from '../../src/dev/embedded-nats.ts';
import { startMongo, startNats, type TestMongo } from '../harness/dependencies.ts';
import { startHttpReceiver, type HttpReceiver, type ReceivedRequest } from '../harness/http-receiver.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { spawnDocgen, type DocgenProcess } from '../harness/spawn-docgen.ts';
import {
  connectAsProducer,
  createEndpoint,
  createWorkspace,
  finalEvent,
  percentile,
  verifies,
  webhooksEnv,
} from './webhook-test-support.ts';

const EVENTS = Number(process.env.WEBHOOK_LOAD_EVENTS ?? 1000);
/**
 * Events published per second (1,000 over 20 s). A burst of 1,000 at once measures the
 * MongoDB stand-in (single-threaded, scans whole collections, shares the cores) more than
 * docgen: fan-out then queues in the dispatcher, and that queueing would be the healthy
 * endpoint's latency. At this rate fan-out keeps up even with other test files running,
 * so what the healthy endpoint sees is the slow one's influence.
 * WEBHOOK_LOAD_EVENTS / WEBHOOK_LOAD_RATE / WEBHOOK_LOAD_ECHO=1 are for experiments.
 */
const EVENTS_PER_SECOND = Number(process.env.WEBHOOK_LOAD_RATE ?? 50);
const SLOW_ANSWER_MS = 2000;
/** The recommended DOCGEN_WEBHOOK_ENDPOINT_CONCURRENCY (docs/webhooks.md explains the choice). */
const ENDPOINT_CONCURRENCY = 64;

let nats: EmbeddedNats;
let mongo: TestMongo;
let env: Record<string, string>;
let producer: { config: Config; infrastructure: Infrastructure };
let webhooks: DocgenProcess | undefined;
const receivers: HttpReceiver[] = [];

beforeAll(async () => {
  [nats, mongo] = await Promise.all([startNats(), startMongo()]);
  env = webhooksEnv(
    { nats, mongo },
    {
      DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      DOCGEN_WEBHOOK_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
      DOCGEN_WEBHOOK_CONCURRENCY: '256',
      DOCGEN_LOG_LEVEL: 'info',
    },
  );
  producer = await connectAsProducer(env);
});

afterAll(async () => {
  await webhooks?.stop(10_000);
  await producer?.infrastructure.close();
  await Promise.allSettled(receivers.map((r) => r.close()));
  await Promise.allSettled([mongo?.stop(), nats?.stop()]);
});

/** kB values of /proc/<pid>/status (VmRSS, VmHWM); undefined once the process is gone. */
function memoryOf(pid: number): { rssKb: number; peakKb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssKb: kb('VmRSS'), peakKb: kb('VmHWM') };
  } catch {
    return undefined;
  }
}

describe('1,000 events, one slow endpoint', () => {
  it(
    'delivers everything to the slow endpoint while the healthy one gets its deliveries without delay, in bounded memory',
    { timeout: 150_000 },
    async () => {
      const repos = producer.infrastructure.repositories;
      const ws = await createWorkspace(repos);
      const secrets = { slow: '', healthy: '' };
      const slow = await startHttpReceiver();
      const healthy = await startHttpReceiver();
      receivers.push(slow, healthy);
      slow.answerOtherwise((req) =>
        verifies(req, secrets.slow) ? { status: 204, delayMs: SLOW_ANSWER_MS } : { status: 401 },
      );
      healthy.answerOtherwise((req) => (verifies(req, secrets.healthy) ? { status: 204 } : { status: 401 }));
      const config = { secretKey: producer.config.secretKey, allowInsecureUrls: true };
      secrets.slow = (await createEndpoint(repos, config, ws.id, slow.url, ['generation.completed'])).secret;
      secrets.healthy = (await createEndpoint(repos, config, ws.id, healthy.url, ['generation.completed'])).secret;

      webhooks = spawnDocgen({ role: 'webhooks', env, echo: process.env.WEBHOOK_LOAD_ECHO === '1' });
      await webhooks.waitForLine((line) => line.json?.msg === 'docgen started', 30_000);
      const pid = webhooks.pid;
      const idle = memoryOf(pid)!;
      let maxRssKb = idle.rssKb;
      const sampler = setInterval(() => {
        const m = memoryOf(pid);
        if (m) maxRssKb = Math.max(maxRssKb, m.rssKb);
      }, 200);

      const publishedAt = new Map<string, number>();
      const started = Date.now();
      try {
        for (let i = 0; i < EVENTS; i++) {
          const event = finalEvent(ws.id, 'generation.completed');
          publishedAt.set(event.generationId, Date.now());
          await producer.infrastructure.queue.publishFinalEvent(event);
          const due = started + ((i + 1) * 1000) / EVENTS_PER_SECOND;
          if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
        }
        const publishMs = Date.now() - started;

        const generationOf = (q: ReceivedRequest) =>
          (q.json() as { payload: { generationId: string } }).payload.generationId;
        await healthy.waitForRequests(EVENTS, 60_000);
        const healthyDoneMs = Date.now() - started;
        await slow.waitForRequests(EVENTS, 120_000);
        const deliveries = producer.infrastructure.mongo.db.collection('deliveries');
        await pollUntil(
          () => deliveries.countDocuments({ workspaceId: ws.objectId, status: 'SUCCEEDED' }),
          (n) => n === 2 * EVENTS,
          { timeoutMs: 15_000, description: `${2 * EVENTS} deliveries SUCCEEDED` },
        );
        const totalMs = Date.now() - started;
        clearInterval(sampler);
        const final = memoryOf(pid)!;

        const latenciesOf = (r: HttpReceiver) =>
          r.requests.map((q) => q.receivedAt - publishedAt.get(generationOf(q))!).sort((a, b) => a - b);
        const latencies = latenciesOf(healthy);
        // The slow endpoint's first attempts: it takes 32 a second at most (64 in parallel, 2 s
        // each) of the 50 a second published, so its attempts queue behind one another.
        const slowLatencies = latenciesOf(slow);
        const report = {
          events: EVENTS,
          eventsPerSecond: EVENTS_PER_SECOND,
          publishMs,
          healthyAllDeliveredMs: healthyDoneMs,
          allDeliveredMs: totalMs,
          healthyLatencyMs: {
            p50: percentile(latencies, 50),
            p95: percentile(latencies, 95),
            p99: percentile(latencies, 99),
            max: latencies.at(-1),
          },
          slowLatencyMs: { p50: percentile(slowLatencies, 50), p95: percentile(slowLatencies, 95) },
          webhooksProcessRssMb: {
            idle: Math.round(idle.rssKb / 1024),
            maxSampled: Math.round(maxRssKb / 1024),
            peakVmHWM: Math.round(final.peakKb / 1024),
            end: Math.round(final.rssKb / 1024),
          },
          endpointConcurrency: ENDPOINT_CONCURRENCY,
        };
        console.info(`[webhooks] load: ${JSON.stringify(report)}`);

        // Everything arrived once, signed.
        await new Promise((resolve) => setTimeout(resolve, 500));
        for (const [r, secret] of [
          [slow, secrets.slow],
          [healthy, secrets.healthy],
        ] as const) {
          expect(r.requests).toHaveLength(EVENTS);
          expect(new Set(r.requests.map((q) => q.header('x-service-delivery'))).size).toBe(EVENTS);
          expect(new Set(r.requests.map(generationOf))).toEqual(new Set(publishedAt.keys()));
          expect(r.requests.every((q) => verifies(q, secret))).toBe(true);
        }
        // The slow endpoint does not hold the healthy one back: had the healthy endpoint's
        // deliveries waited behind the slow one's (one queue), they would wait as long. What both
        // share is the machine: the stand-in database runs in this test process, and with other
        // test files on the 2 cores the healthy p95 went from under 1 s to 2.8 s (a CI run) and
        // 19 s (next to the fair-share scenario), the slow one's with it. So the bound is the
        // slow endpoint's own wait in the same run, when that is more than 4 s.
        expect(report.healthyLatencyMs.p95).toBeLessThan(Math.max(2000, report.slowLatencyMs.p95 / 2));
        expect(healthyDoneMs).toBeLessThan(totalMs);
        // The slow endpoint itself goes at ENDPOINT_CONCURRENCY in parallel: 1000 × 2 s / 64 ≈ 31 s.
        expect(totalMs).toBeLessThan(75_000);
        expect(final.peakKb / 1024).toBeLessThan(450);
      } finally {
        clearInterval(sampler);
      }
    },
  );
});
