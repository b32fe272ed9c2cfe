// The render role: owns the Chromium pool and the Liquid workers, pulls render jobs from
// JetStream (never more than it has room for: backpressure; see render-slots.ts for why that
// is a few more than its pages), runs the outbox sweeper, and
// on shutdown stops pulling, lets in-flight renders finish within the grace period and hands
// back the rest (nak) so another pod takes them.
import type { JobContext } from '../queue/jetstream.ts';
import { createAssetLoader } from '../render/asset-loader.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import { parseRenderLaneSubject, renderJobMsgId, type RenderJob, type RenderRoute } from '../queue/messages.ts';
import { createCertificateSource } from '../render/finishing/certificate-store.ts';
import { createRenderEngine, type RenderEngine } from '../render/render-engine.ts';
import { OutboxSweeper } from '../render/outbox-sweeper.ts';
import { BatchProgress } from '../batches/batch-progress.ts';
import { BatchCreationSweeper } from '../batches/batch-creation-sweeper.ts';
import { eraseBatch } from '../batches/batch-erasure.ts';
import { RenderPipeline, type DocumentRendererLike } from '../render/render-pipeline.ts';
import { RenderSlots, renderJobsInFlight } from '../render/render-slots.ts';
import { formatId, parseId } from '../domain/ids.ts';
import { eraseGeneration } from '../generations/generation-erasure.ts';
import { RetentionSweeper } from '../generations/retention-sweeper.ts';
import { previewSubject } from '../queue/preview-channel.ts';
import { startPreviewService } from '../render/preview-service.ts';
import { SpanKind, contextFromHeaders, withSpan } from '../ops/tracing.ts';
import { startFairPuller } from '../queue/fair-puller.ts';
import { renderQueueGauges } from '../queue/render-queue-metrics.ts';
import { batchProgressGauges } from '../batches/batch-metrics.ts';
import { abortedPromise, type Role, type RoleContext } from './role.ts';

export interface RenderRole extends Role {
  engine: RenderEngine;
  pipeline: RenderPipeline;
}

export const RENDER_CONSUMER = 'render-workers';
/**
 * A claimed generation's lease, and the render consumer's ack_wait: both are renewed every
 * third of it while rendering (the pipeline's heartbeat), so a render held by a process that
 * died is taken over by another within this time, however long renders take.
 */
export const RENDER_LEASE_MS = 6_000;

export async function startRenderRole(ctx: RoleContext): Promise<RenderRole> {
  const { config, infrastructure, metrics } = ctx;
  const logger = ctx.logger.child({ module: 'render' });
  const { repositories, queue, objects } = infrastructure;
  const assets = createAssetLoader({ assets: repositories.assets, objects });
  if (config.render.fontconfigFile)
    logger.info('chromium prints with the CJK everyday subsets', { fontconfig: config.render.fontconfigFile });
  else
    logger.info(
      'chromium prints with the system fonts; CJK text prints faster after `docgen fonts build` (docs/templates.md#fonts)',
    );
  // The operator's explicit choice (DOCGEN_CHROMIUM_NO_SANDBOX), said at start and in /readyz.
  const chromiumSandbox = config.render.noSandbox ? 'off (DOCGEN_CHROMIUM_NO_SANDBOX=true)' : 'on';
  if (config.render.noSandbox)
    logger.warn(
      'chromium runs WITHOUT its sandbox (DOCGEN_CHROMIUM_NO_SANDBOX=true): a template that escaped the renderer would reach this process; docs/deploy.md#security shows how to keep the sandbox',
    );
  // Previews get pages (and Liquid workers) of their own on top of production's.
  const engine = await createRenderEngine(
    { ...config.render, concurrency: config.render.concurrency + config.previews.concurrency },
    {
      logger,
      metrics,
      assets,
      // Signing keys are unsealed here, on the render role, only while a version signs.
      certificates: createCertificateSource({ certificates: repositories.certificates, secretKey: config.secretKey }),
    },
  );
  const previews = startPreviewService(queue.nats.connection, {
    subject: previewSubject(config.nats.streamPrefix),
    concurrency: config.previews.concurrency,
    renderer: engine.renderer,
    logger: logger.child({ module: 'preview' }),
    metrics,
  });

  // Jobs handed back on shutdown, by generation id: their renders may still end (or fail when
  // the pool stops), and that must neither settle the message again nor count as an outcome.
  const handedBack = new Set<string>();
  // Jobs render on at most render.concurrency pages at once; the extra jobs in flight wait here.
  const slots = new RenderSlots(config.render.concurrency);
  // Which workspace (and lane) the job being rendered belongs to, and how many jobs of each
  // workspace this process holds: a job waiting for a page goes ahead of the jobs of
  // workspaces that hold more here.
  const jobRoute = new AsyncLocalStorage<RenderRoute | undefined>();
  const heldByWorkspace = new Map<string, number>();
  const renderer: DocumentRendererLike = {
    render: (content, variables, options) => {
      const queued = performance.now();
      const route = jobRoute.getStore();
      const priority = route ? 2 * (heldByWorkspace.get(route.workspaceId) ?? 0) + (route.lane === 'batch' ? 1 : 0) : 0;
      return slots.run(() => {
        options?.onStage?.('page_wait', performance.now() - queued);
        return engine.renderer.render(content, variables, options);
      }, priority);
    },
  };
  const batches = new BatchProgress({
    batches: repositories.batches,
    generations: repositories.generations,
    store: objects,
    events: queue,
    onCompleted: (info) => logger.info('batch completed', info),
    onFinished: (info) => metrics.observeBatchCompleted(info.merge, info.seconds),
    onSkippedEncrypted: (info) =>
      logger.info('batch item left out of the merged PDF: its PDF is encrypted (password or permissions)', info),
  });
  const pipeline = new RenderPipeline({
    batches,
    generations: repositories.generations,
    templates: repositories.templates,
    renderer,
    store: objects,
    events: queue,
    stats: repositories.stats,
    maxAttempts: config.render.maxAttempts,
    leaseMs: RENDER_LEASE_MS,
    onOutcome: (outcome, info) => {
      if (handedBack.has(info.generationId) && outcome !== 'completed') return;
      if (outcome !== 'skipped') metrics.observeRender(outcome, info.durationMs / 1000);
      // Each stage's milliseconds: which part of this render took the time.
      const fields = {
        generationId: info.generationId,
        durationMs: Math.round(info.durationMs),
        error: info.error,
        stagesMs: info.stagesMs,
      };
      if (outcome === 'failed' || outcome === 'retried') logger.warn(`render ${outcome}`, fields);
      else if (outcome === 'skipped')
        logger.debug('render skipped: final already or claimed by another worker', fields);
      else logger.info(`render ${outcome}`, fields);
    },
    onStage: (stage, ms) => metrics.observeRenderStage(stage, ms / 1000),
    onStart: (info) => logger.debug('render started', info),
    onError: (err, generationId) => {
      if (!handedBack.has(generationId)) logger.warn('render attempt failed', { generationId, err: String(err) });
    },
  });

  const inFlight = new Map<JobContext<RenderJob>, { generationId: string; started: number }>();
  // Jobs of releases before the per-workspace lanes wait on the old stream under the old
  // consumer: drained as one more lane (fair-puller.ts), so an upgrade loses none.
  await queue.nats.ensureConsumer(queue.nats.names.streams.render, RENDER_CONSUMER, {
    ackWaitMs: RENDER_LEASE_MS,
    maxAckPending: 10_000,
  });
  const stopPulling = new AbortController();
  const puller = startFairPuller<RenderJob>({
    nats: queue.nats,
    lanesStream: queue.nats.names.streams.renderLanes,
    lanesSubject: queue.nats.names.subjects.renderLanes,
    legacy: { stream: queue.nats.names.streams.render, consumer: RENDER_CONSUMER },
    ackWaitMs: RENDER_LEASE_MS,
    maxAckPending: 10_000,
    concurrency: renderJobsInFlight(config.render.concurrency),
    signal: stopPulling.signal,
    stopTimeoutMs: config.shutdownGraceMs,
    weights: (ids) => repositories.workspaces.renderWeights(ids),
    onDelivered: (lane, msg) =>
      metrics.observeRenderQueueWait(lane, Math.max(0, Date.now() - msg.info.timestampNanos / 1e6) / 1000),
    handler: async (job) => {
      const generationId = String(job.data?.generationId ?? '');
      inFlight.set(job, { generationId, started: performance.now() });
      const route = parseRenderLaneSubject(queue.nats.prefix, job.subject);
      if (route) heldByWorkspace.set(route.workspaceId, (heldByWorkspace.get(route.workspaceId) ?? 0) + 1);
      // Once handed back, the message is settled by handBack alone.
      const control = {
        working: () => job.working(),
        ack: () => (handedBack.has(generationId) ? undefined : job.ack()),
        nak: (delayMs: number) => (handedBack.has(generationId) ? undefined : job.nak(delayMs)),
        term: () => (handedBack.has(generationId) ? undefined : job.term()),
      };
      try {
        await withSpan(
          'render generation',
          {
            kind: SpanKind.CONSUMER,
            parent: contextFromHeaders(job.headers),
            attributes: { 'docgen.generation.id': generationId, 'messaging.message.delivery_count': job.deliveryCount },
          },
          () => jobRoute.run(route, () => pipeline.process(job.data, control)),
        );
      } finally {
        inFlight.delete(job);
        if (route) {
          const held = (heldByWorkspace.get(route.workspaceId) ?? 1) - 1;
          if (held > 0) heldByWorkspace.set(route.workspaceId, held);
          else heldByWorkspace.delete(route.workspaceId);
        }
      }
    },
    onError: (err) => logger.warn('render job loop error', { err: String(err) }),
  });
  const jobs = { stop: () => stopPulling.abort(), done: puller.done };

  /**
   * Hands every in-flight render back: releases its lease (so another worker claims it at
   * once instead of after RENDER_LEASE_MS) and naks the message for immediate redelivery.
   * Returns how many were released. A render that reached its final state first (it completed
   * or failed here while the grace period ended) is not handed back, and not said to be: the
   * release finds the row final, and only a released one is logged and counted as handed back.
   */
  async function handBackInFlight(): Promise<number> {
    const jobs = [...inFlight].filter(([, info]) => !handedBack.has(info.generationId));
    for (const [, info] of jobs) handedBack.add(info.generationId);
    const released = await Promise.all(
      jobs.map(async ([job, info]) => {
        const id = parseId('generation', info.generationId);
        let wasReleased = false;
        let failed = false;
        if (id) {
          wasReleased = await repositories.generations.handBack(id, pipeline.workerId).catch((err: unknown) => {
            failed = true;
            logger.warn('could not release a handed-back generation; it is retried when its lease expires', {
              generationId: info.generationId,
              err: String(err),
            });
            return false;
          });
        }
        // Also when the release found the row final or released already: a redelivery of a
        // final generation is acknowledged as skipped, so nak-ing is always safe.
        job.nak(0);
        const seconds = (performance.now() - info.started) / 1000;
        const fields = { generationId: info.generationId, durationMs: Math.round(seconds * 1000) };
        if (wasReleased) {
          metrics.observeRender('handed_back', seconds);
          logger.info('render handed back', fields);
        } else if (!failed) {
          logger.debug('render not handed back: it reached its final state here first', fields);
        }
        return wasReleased;
      }),
    );
    // The naks must reach the server before the connection closes.
    if (jobs.length > 0) await queue.nats.connection.flush().catch(() => {});
    return released.filter(Boolean).length;
  }

  const sweeper = new OutboxSweeper({
    generations: repositories.generations,
    stats: repositories.stats,
    publishJob: (generationId, msgId, route) => queue.publishRenderJob(generationId, msgId, route),
    publishEvent: (doc) => pipeline.publishEvent(doc),
    intervalMs: 2000,
    publishGraceMs: 5000,
    republishAfterMs: 5 * 60_000,
    onError: (err) => logger.warn('outbox sweep failed', { err: String(err) }),
  });
  sweeper.start();

  // Batch creates cut off by a crash of their API process: finished from the kept request.
  const batchCreations = new BatchCreationSweeper({
    batches: repositories.batches,
    generations: repositories.generations,
    jobs: { publishRenderJob: (id, route) => queue.publishRenderJob(id, renderJobMsgId(id), route) },
    progress: batches,
    intervalMs: 10_000,
    graceMs: config.api.batchCreationGraceMs,
    onFinished: (info) => {
      metrics.batchCreationsFinished.inc({ outcome: info.outcome });
      logger.warn('batch create cut off by a crash finished by the sweeper', info);
    },
    onError: (err, batchId) =>
      logger.warn('batch creation sweep failed; the next sweep retries', { batchId, err: String(err) }),
  });
  batchCreations.start();

  // Retention lives here: this role writes the PDFs (see retention-sweeper.ts for why).
  const retention = new RetentionSweeper({
    workspaces: repositories.workspaces,
    generations: repositories.generations,
    batches: repositories.batches,
    eraseBatch: (doc) => eraseBatch({ batches: repositories.batches, objects }, doc),
    onBatchErased: (doc) => {
      metrics.batchesExpired.inc();
      logger.debug('batch past its retention deleted', { batchId: formatId('batch', doc._id) });
    },
    erase: (doc) =>
      eraseGeneration({ generations: repositories.generations, deliveries: repositories.deliveries, objects }, doc),
    intervalMs: config.retention.sweepIntervalMs,
    testRetentionMs: config.retention.testGenerationSeconds * 1000,
    onErased: (doc) => {
      metrics.generationsExpired.inc();
      logger.debug('generation past its retention deleted', { generationId: formatId('generation', doc._id) });
    },
    onError: (err, at) =>
      logger.warn('retention sweep failed; the next sweep retries', {
        generationId: at.generationId && formatId('generation', at.generationId),
        batchId: at.batchId && formatId('batch', at.batchId),
        err: String(err),
      }),
  });
  retention.start();

  let stopped = false;
  let handedBackAny = false;
  const names = queue.nats.names;
  return {
    name: 'render',
    engine,
    pipeline,
    readiness: { 'browser-pool': () => engine.isReady() && { details: { chromiumSandbox } } },
    consumers: [{ stream: names.streams.render, consumer: RENDER_CONSUMER }],
    gauges: [...renderQueueGauges(queue.nats, RENDER_CONSUMER), ...batchProgressGauges(repositories.batches)],
    async stopAccepting() {
      if (stopped) return;
      stopped = true;
      jobs.stop();
      await Promise.all([sweeper.stop(), retention.stop(), batchCreations.stop(), previews.stop()]);
    },
    async drain(signal) {
      // In-flight renders finish unless the grace period ends first; whatever still runs
      // then (or when the consumer loop gave up waiting) goes back to the queue.
      await Promise.race([jobs.done, abortedPromise(signal)]);
      const count = await handBackInFlight();
      if (count > 0) logger.warn('shutdown grace period over: in-flight renders handed back to the queue', { count });
      handedBackAny = handedBack.size > 0;
    },
    async close() {
      // Handed-back renders are redone elsewhere: do not wait for their pages.
      if (handedBackAny || inFlight.size > 0) await engine.pool.stop(0).catch(() => {});
      await engine.close();
    },
  };
}
