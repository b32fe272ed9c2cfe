// Consumer lag per JetStream consumer, as Prometheus gauges: the figure an autoscaler acts on
// (KEDA's nats-jetstream scaler reads the same number from the NATS monitoring endpoint).
//   docgen_jetstream_consumer_pending{stream,consumer}      messages not yet delivered (backlog)
//   docgen_jetstream_consumer_ack_pending{stream,consumer}  delivered, not yet acknowledged
// Each process reports the consumers of its own roles; every replica of a role reports the
// same values, so aggregate with max by (stream, consumer).
import type { Metrics } from '../ops/metrics.ts';
import type { NatsQueue } from './jetstream.ts';

export interface WatchedConsumer {
  stream: string;
  consumer: string;
}

/** Registers the gauges' collectors; returns a function that unregisters them. */
export function registerConsumerLagMetrics(
  metrics: Metrics,
  nats: Pick<NatsQueue, 'jsm'>,
  consumers: WatchedConsumer[],
): () => void {
  if (consumers.length === 0) return () => {};
  // One consumer-info request per consumer serves both gauges of a scrape.
  let current: Promise<{ labels: Record<string, string>; pending: number; ackPending: number }[]> | undefined;
  const read = () => {
    current ??= Promise.all(
      consumers.map(async ({ stream, consumer }) => {
        const info = await nats.jsm.consumers.info(stream, consumer);
        return { labels: { stream, consumer }, pending: info.num_pending, ackPending: info.num_ack_pending };
      }),
    ).finally(() => setTimeout(() => (current = undefined), 0));
    return current;
  };
  const unregister = [
    metrics.registerGaugeCollector('docgen_jetstream_consumer_pending', async () =>
      (await read()).map((c) => ({ labels: c.labels, value: c.pending })),
    ),
    metrics.registerGaugeCollector('docgen_jetstream_consumer_ack_pending', async () =>
      (await read()).map((c) => ({ labels: c.labels, value: c.ackPending })),
    ),
  ];
  return () => {
    for (const u of unregister) u();
  };
}
