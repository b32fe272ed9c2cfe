// The consumer-lag gauges against a real nats-server -js: jobs published and not yet pulled
// show as docgen_jetstream_consumer_pending (the backlog an autoscaler acts on), a job being
// worked on moves to docgen_jetstream_consumer_ack_pending, and an acknowledged one leaves
// both. Labelled by stream and consumer, so KEDA's figure and ours can be compared.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedNats } from '../../src/dev/embedded-nats.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { registerConsumerLagMetrics } from '../../src/queue/consumer-lag-metrics.ts';
import { connectNats, type NatsQueue } from '../../src/queue/jetstream.ts';
import { startNats } from '../harness/dependencies.ts';
import { pollUntil } from '../harness/poll-until.ts';

let nats: EmbeddedNats;
let queue: NatsQueue;

beforeAll(async () => {
  nats = await startNats();
  queue = await connectNats({
    servers: [nats.url],
    streamPrefix: `L${randomBytes(3).toString('hex').toUpperCase()}`,
    name: 'docgen-lag-test',
  });
  await queue.ensureStreams();
});

afterAll(async () => {
  await queue?.close();
  await nats?.stop();
});

function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('docgen_jetstream_consumer_pending and _ack_pending', () => {
  it('report the backlog and the jobs in flight of each watched consumer', async () => {
    const stream = queue.names.streams.render;
    await queue.ensureConsumer(stream, 'render-workers', { ackWaitMs: 30_000, maxAckPending: 100 });
    const metrics = createMetrics({ defaultMetrics: false });
    const unregister = registerConsumerLagMetrics(metrics, queue, [{ stream, consumer: 'render-workers' }]);
    const labels = `stream="${stream}",consumer="render-workers"`;
    const read = async () => {
      const text = await metrics.metricsText();
      return {
        pending: sample(text, 'docgen_jetstream_consumer_pending', labels),
        ackPending: sample(text, 'docgen_jetstream_consumer_ack_pending', labels),
      };
    };

    expect(await read()).toEqual({ pending: 0, ackPending: 0 });
    for (let i = 0; i < 3; i++)
      await queue.publish(queue.names.subjects.renderJobs, { generationId: `g${i}` }, `lag-${i}`);
    expect(await read()).toEqual({ pending: 3, ackPending: 0 });

    // One worker slot: one job in flight (held until released), two still waiting.
    const stop = new AbortController();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    const loop = queue.consumeJobs({
      stream,
      consumer: 'render-workers',
      concurrency: 1,
      signal: stop.signal,
      handler: async () => {
        started++;
        if (started === 1) await held;
        else stop.abort();
      },
    });
    await pollUntil(read, (v) => v.pending === 2 && v.ackPending === 1, {
      description: 'one job in flight, two waiting',
    });
    release();
    await loop;
    await pollUntil(read, (v) => v.pending === 1 && v.ackPending === 0, {
      description: 'two acknowledged, one waiting',
    });
    unregister();
  });
});
