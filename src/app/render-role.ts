// The render role: owns the Chromium pool and the Liquid workers, pulls render jobs from
// JetStream (never more than it has free pages: backpressure), runs the outbox sweeper, and
// on shutdown stops pulling, lets in-flight renders finish within the grace period and hands
// back the rest (nak) so another pod takes them.
import type { Config } from '../config/config.ts';
import type { Logger } from '../ops/logger.ts';
import type { Metrics } from '../ops/metrics.ts';
import type { OpsServer } from '../ops/ops-server.ts';
import type { JobContext } from '../queue/jetstream.ts';
import { createRenderEngine, type RenderEngine } from '../render/render-engine.ts';
import { OutboxSweeper } from '../render/outbox-sweeper.ts';
import { RenderPipeline, type RenderJob } from '../render/render-pipeline.ts';
import type { Infrastructure } from './infrastructure.ts';

export interface RenderRole {
  engine: RenderEngine;
  pipeline: RenderPipeline;
  stopAccepting(): Promise<void>;
  drain(signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export const RENDER_CONSUMER = 'render-workers';
/** A claimed generation's lease; renewed every third of it while rendering. */
export const RENDER_LEASE_MS = 30_000;

export async function startRenderRole(
  config: Config,
  infrastructure: Infrastructure,
  ctx: { logger: Logger; metrics: Metrics; ops: OpsServer },
): Promise<RenderRole> {
  const logger = ctx.logger.child({ module: 'render' });
  const { metrics } = ctx;
  const { repositories, queue, objects } = infrastructure;
  const engine = await createRenderEngine(config.render, { logger, metrics });

  const pipeline = new RenderPipeline({
    generations: repositories.generations,
    templates: repositories.templates,
    renderer: engine.renderer,
    store: objects,
    events: queue,
    maxAttempts: config.render.maxAttempts,
    leaseMs: RENDER_LEASE_MS,
    onOutcome: (outcome, info) => {
      if (outcome !== 'skipped') metrics.observeRender(outcome, info.durationMs / 1000);
      const fields = { generationId: info.generationId, durationMs: Math.round(info.durationMs), error: info.error };
      if (outcome === 'failed' || outcome === 'retried') logger.warn(`render ${outcome}`, fields);
      else logger.info(`render ${outcome}`, fields);
    },
    onError: (err, generationId) => logger.warn('render attempt failed', { generationId, err: String(err) }),
  });

  const names = queue.nats.names;
  await queue.nats.ensureConsumer(names.streams.render, RENDER_CONSUMER, { ackWaitMs: RENDER_LEASE_MS, maxAckPending: 10_000 });
  const stopPulling = new AbortController();
  const inFlight = new Set<JobContext<RenderJob>>();
  const consuming = queue.nats.consumeJobs<RenderJob>({
    stream: names.streams.render,
    consumer: RENDER_CONSUMER,
    concurrency: config.render.concurrency,
    signal: stopPulling.signal,
    stopTimeoutMs: config.shutdownGraceMs,
    handler: async (job) => {
      inFlight.add(job);
      try {
        await pipeline.process(job.data, job);
      } finally {
        inFlight.delete(job);
      }
    },
    onError: (err) => logger.warn('render job loop error', { err: String(err) }),
  });

  const sweeper = new OutboxSweeper({
    generations: repositories.generations,
    publishJob: (generationId, msgId) => queue.publishRenderJob(generationId, msgId),
    publishEvent: (doc) => pipeline.publishEvent(doc),
    intervalMs: 2000,
    publishGraceMs: 5000,
    republishAfterMs: 5 * 60_000,
    onError: (err) => logger.warn('outbox sweep failed', { err: String(err) }),
  });
  sweeper.start();

  const unregister = [
    metrics.registerGaugeCollector('docgen_render_queue_depth', async () => (await queue.nats.jsm.streams.info(names.streams.render)).state.messages),
    metrics.registerGaugeCollector('docgen_render_consumer_pending', async () => {
      const info = await queue.nats.jsm.consumers.info(names.streams.render, RENDER_CONSUMER);
      return info.num_pending + info.num_ack_pending;
    }),
  ];
  ctx.ops.addReadinessCheck('browser-pool', () => engine.isReady());

  let stopped = false;
  return {
    engine,
    pipeline,
    async stopAccepting() {
      if (stopped) return;
      stopped = true;
      stopPulling.abort();
      await sweeper.stop();
    },
    async drain(signal) {
      const handBack = () => {
        // Past the grace period: whatever still renders goes back to the queue now.
        for (const job of inFlight) job.nak(0);
      };
      signal.addEventListener('abort', handBack, { once: true });
      await consuming;
      signal.removeEventListener('abort', handBack);
    },
    async close() {
      for (const u of unregister) u();
      await engine.close();
    },
  };
}
