// docgen's Prometheus metrics. One Registry per process (never prom-client's global one, so
// that tests and `docgen dev`, which runs every role in one process, get exactly one set).
// Modules receive the Metrics object and increment it; gauges that mirror outside state
// (queue depth, consumer lag) are read at scrape time through registered collectors.

import type { RenderStage } from '../render/render-stages.ts';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type HttpLabels = 'route' | 'method' | 'code';
export type GrpcLabels = 'service' | 'method' | 'code';

/** Outcome of one render attempt. */
export type RenderOutcome = 'completed' | 'failed' | 'retried' | 'handed_back';
/**
 * Template previews on a render process: rendered, failed (the content's or values' fault, or
 * transient), busy (refused), expired (the requester had given up).
 */
export type PreviewOutcome = 'rendered' | 'failed' | 'busy' | 'expired';
/** Outcome of one webhook attempt. */
export type WebhookOutcome = 'success' | 'http_error' | 'timeout' | 'network_error' | 'redirect' | 'refused';
/** Why Chromium was restarted. */
export type BrowserRestartReason = 'crash' | 'recycle' | 'memory' | 'unresponsive';

/** Gauges whose value comes from a collector registered by the module that knows it. */
export type CollectedGaugeName =
  | 'docgen_render_queue_depth'
  | 'docgen_render_consumer_pending'
  | 'docgen_render_consumer_redelivered'
  | 'docgen_webhook_queue_depth'
  | 'docgen_webhook_consumer_pending'
  | 'docgen_browser_pages'
  | 'docgen_jetstream_consumer_pending'
  | 'docgen_jetstream_consumer_ack_pending'
  | 'docgen_render_workspace_pending_jobs'
  | 'docgen_render_workspace_oldest_wait_seconds'
  | 'docgen_batches_in_progress'
  | 'docgen_batch_items_pending';

/** A collector returns a bare number, or values per label set for labelled gauges. */
export type GaugeSample = number | { labels: Record<string, string>; value: number }[];
export type GaugeCollector = () => GaugeSample | Promise<GaugeSample>;

export interface Metrics {
  readonly registry: Registry;
  /** Content-Type of `metricsText()`. */
  readonly contentType: string;
  readonly httpRequests: Counter<HttpLabels>;
  readonly httpRequestDuration: Histogram<HttpLabels>;
  readonly grpcRequests: Counter<GrpcLabels>;
  readonly grpcRequestDuration: Histogram<GrpcLabels>;
  readonly generationsCreated: Counter<string>;
  readonly generationsExpired: Counter<string>;
  readonly renders: Counter<'outcome'>;
  readonly renderDuration: Histogram<'outcome'>;
  readonly renderStageDuration: Histogram<'stage'>;
  readonly renderQueueWait: Histogram<'lane'>;
  readonly previews: Counter<'outcome'>;
  readonly previewDuration: Histogram<'outcome'>;
  readonly renderQueueDepth: Gauge<string>;
  readonly renderConsumerPending: Gauge<string>;
  readonly renderConsumerRedelivered: Gauge<string>;
  readonly browserPages: Gauge<'state'>;
  readonly browserRestarts: Counter<'reason'>;
  readonly webhookAttempts: Counter<'outcome'>;
  readonly webhookDeliveryDuration: Histogram<'outcome'>;
  readonly webhookQueueDepth: Gauge<string>;
  readonly webhookConsumerPending: Gauge<string>;
  readonly jetstreamConsumerPending: Gauge<'stream' | 'consumer'>;
  readonly jetstreamConsumerAckPending: Gauge<'stream' | 'consumer'>;
  readonly collectorErrors: Counter<'gauge'>;
  readonly batchCompletionDuration: Histogram<'merge'>;
  readonly batchesExpired: Counter<string>;
  readonly batchCreationsFinished: Counter<'outcome'>;

  /**
   * Records one HTTP request. `route` is the route template (`/v1/generations/{id}`), never
   * the raw path: ids in labels would create a time series per generation.
   */
  observeHttpRequest(route: string, method: string, code: number | string, seconds: number): void;
  /** Records one Connect/gRPC call; `code` is the Connect code name (`ok`, `not_found`, …). */
  observeGrpcRequest(service: string, method: string, code: string, seconds: number): void;
  observeRender(outcome: RenderOutcome, seconds: number): void;
  observeRenderStage(stage: RenderStage, seconds: number): void;
  /** A render job left its lane (`single`, `batch`): the time since it was queued. */
  observeRenderQueueWait(lane: string, seconds: number): void;
  observePreview(outcome: PreviewOutcome, seconds: number): void;
  observeWebhookAttempt(outcome: WebhookOutcome, seconds: number): void;
  /** A batch became COMPLETED: the time from its create, by whether it was merged. */
  observeBatchCompleted(merge: boolean, seconds: number): void;
  /**
   * Registers the source of a gauge's value, read at every scrape (e.g. the queue module
   * asks JetStream for the consumer's pending count). Several collectors of one gauge are
   * summed per label set. Returns a function that unregisters it.
   */
  registerGaugeCollector(name: CollectedGaugeName, collector: GaugeCollector): () => void;
  /** Prometheus text exposition of every metric. */
  metricsText(): Promise<string>;
}

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event loop lag, GC). Default true. */
  defaultMetrics?: boolean;
  /** Labels added to every series, e.g. `{ role: 'render' }`. */
  defaultLabels?: Record<string, string>;
  /** Longest a collector may take before its gauge is skipped for that scrape. Default 2000 ms. */
  collectorTimeoutMs?: number;
  /** Written into docgen_build_info. */
  version?: string;
}

const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
// Seconds. API calls are mostly sub-100 ms; renders take 0.2 to 10 s (the render time-out).
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const RENDER_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 15, 30, 60];
// A render's stages take from well under a millisecond (a cached version) to seconds (print).
const STAGE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// A job's wait in its lane: none on an idle fleet, up to minutes behind a month-end backlog.
const QUEUE_WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600];
const WEBHOOK_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// A batch: seconds for a few items on an idle fleet, hours for a month-end run behind others.
const BATCH_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14_400, 43_200];

/** Every metric name docgen exports (besides the default process metrics); docs/deploy.md lists them. */
export const METRIC_NAMES = [
  'docgen_build_info',
  'docgen_http_requests_total',
  'docgen_http_request_duration_seconds',
  'docgen_grpc_requests_total',
  'docgen_grpc_request_duration_seconds',
  'docgen_generations_created_total',
  'docgen_generations_expired_total',
  'docgen_renders_total',
  'docgen_render_duration_seconds',
  'docgen_render_stage_duration_seconds',
  'docgen_render_queue_wait_seconds',
  'docgen_render_workspace_pending_jobs',
  'docgen_render_workspace_oldest_wait_seconds',
  'docgen_previews_total',
  'docgen_preview_duration_seconds',
  'docgen_render_queue_depth',
  'docgen_render_consumer_pending',
  'docgen_render_consumer_redelivered',
  'docgen_browser_pages',
  'docgen_browser_restarts_total',
  'docgen_webhook_attempts_total',
  'docgen_webhook_delivery_duration_seconds',
  'docgen_webhook_queue_depth',
  'docgen_webhook_consumer_pending',
  'docgen_jetstream_consumer_pending',
  'docgen_jetstream_consumer_ack_pending',
  'docgen_batches_in_progress',
  'docgen_batch_items_pending',
  'docgen_batch_completion_duration_seconds',
  'docgen_batches_expired_total',
  'docgen_batch_creations_finished_total',
  'docgen_metrics_collector_errors_total',
] as const;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`collector timed out after ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultLabels) registry.setDefaultLabels(options.defaultLabels);
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const collectorTimeoutMs = options.collectorTimeoutMs ?? 2000;
  const collectors = new Map<CollectedGaugeName, Set<GaugeCollector>>();
  const inflight = new Set<Promise<void>>();

  const collectorErrors = new Counter({
    name: 'docgen_metrics_collector_errors_total',
    help: 'Gauge collectors that failed or timed out during a scrape (the gauge keeps its last value).',
    labelNames: ['gauge'],
    // Registered last (below) and waits for the gauges' collectors, so a scrape shows the
    // errors of that same scrape (the registry collects every metric concurrently).
    registers: [],
    async collect() {
      await Promise.allSettled([...inflight]);
    },
  });

  // The collect hook runs on every scrape; it sums what the registered collectors report.
  function collectedGauge<L extends string>(name: CollectedGaugeName, help: string, labelNames: L[] = []): Gauge<L> {
    return new Gauge<L>({
      name,
      help,
      labelNames,
      registers,
      collect() {
        // prom-client calls collect with the gauge as `this`; the async body below sets it.
        // eslint-disable-next-line @typescript-eslint/no-this-alias -- see above
        const gauge = this;
        const run = (async () => {
          const fns = collectors.get(name);
          if (!fns || fns.size === 0) return;
          const results = await Promise.allSettled(
            [...fns].map((fn) => withTimeout(Promise.resolve().then(fn), collectorTimeoutMs)),
          );
          const totals = new Map<string, { labels: Record<string, string>; value: number }>();
          let failed = false;
          for (const result of results) {
            if (result.status === 'rejected') {
              failed = true;
              continue;
            }
            const samples = typeof result.value === 'number' ? [{ labels: {}, value: result.value }] : result.value;
            for (const sample of samples) {
              const key = JSON.stringify(Object.entries(sample.labels).sort());
              const prev = totals.get(key);
              totals.set(key, { labels: sample.labels, value: (prev?.value ?? 0) + sample.value });
            }
          }
          if (failed) collectorErrors.inc({ gauge: name });
          // A failed collector leaves the last value: a scrape gap is better than a false zero.
          if (failed && totals.size === 0) return;
          if (!failed) gauge.reset();
          for (const { labels, value } of totals.values()) gauge.set(labels as Partial<Record<L, string>>, value);
        })();
        inflight.add(run);
        return run.finally(() => inflight.delete(run));
      },
    });
  }

  const buildInfo = new Gauge({
    name: 'docgen_build_info',
    help: 'Always 1; labels carry the docgen and Node.js versions.',
    labelNames: ['version', 'node'],
    registers,
  });
  buildInfo.set({ version: options.version ?? 'unknown', node: process.version }, 1);

  const httpRequests = new Counter<HttpLabels>({
    name: 'docgen_http_requests_total',
    help: 'REST /v1 requests, by route template, method and status code (Connect/gRPC calls: docgen_grpc_requests_total).',
    labelNames: ['route', 'method', 'code'],
    registers,
  });
  const httpRequestDuration = new Histogram<HttpLabels>({
    name: 'docgen_http_request_duration_seconds',
    help: 'Time from request received to response finished, by route template, method and status code.',
    labelNames: ['route', 'method', 'code'],
    buckets: HTTP_BUCKETS,
    registers,
  });
  const grpcRequests = new Counter<GrpcLabels>({
    name: 'docgen_grpc_requests_total',
    help: 'Connect/gRPC calls, by service, method and Connect status code.',
    labelNames: ['service', 'method', 'code'],
    registers,
  });
  const grpcRequestDuration = new Histogram<GrpcLabels>({
    name: 'docgen_grpc_request_duration_seconds',
    help: 'Duration of Connect/gRPC calls, by service, method and Connect status code.',
    labelNames: ['service', 'method', 'code'],
    buckets: HTTP_BUCKETS,
    registers,
  });
  const generationsCreated = new Counter({
    name: 'docgen_generations_created_total',
    help: 'Generations accepted (status PENDING), over REST and gRPC.',
    registers,
  });
  const generationsExpired = new Counter({
    name: 'docgen_generations_expired_total',
    help: "Generations deleted (row, PDF and deliveries) by the retention sweeper, past their workspace's retention.",
    registers,
  });
  const renders = new Counter<'outcome'>({
    name: 'docgen_renders_total',
    help: 'Render attempts by outcome: completed, failed (final), retried (transient, will retry), handed_back (nak on shutdown).',
    labelNames: ['outcome'],
    registers,
  });
  const renderDuration = new Histogram<'outcome'>({
    name: 'docgen_render_duration_seconds',
    help: 'Duration of one render attempt (Liquid, PDF and upload), by outcome.',
    labelNames: ['outcome'],
    buckets: RENDER_BUCKETS,
    registers,
  });
  const renderStageDuration = new Histogram<'stage'>({
    name: 'docgen_render_stage_duration_seconds',
    help: 'Duration of each stage of a render job (src/render/render-stages.ts): queue_wait, claim, template, page_wait, liquid, assets, header_footer_check, set_content, print, finish_* (finishing pipeline: metadata, first_page, outline, attachments, conformance, stamp, encryption, signature, check), lease_check, upload, complete, event.',
    labelNames: ['stage'],
    buckets: STAGE_BUCKETS,
    registers,
  });
  const renderQueueWait = new Histogram<'lane'>({
    name: 'docgen_render_queue_wait_seconds',
    help: "Time a render job waited in its workspace's lane, from its publish to its pull by a render process, by lane (single, batch). Redeliveries count from the first publish.",
    labelNames: ['lane'],
    buckets: QUEUE_WAIT_BUCKETS,
    registers,
  });
  const previews = new Counter<'outcome'>({
    name: 'docgen_previews_total',
    help: 'Template previews answered by this render process, by outcome: rendered, failed, busy (refused: no room), expired (requester gone).',
    labelNames: ['outcome'],
    registers,
  });
  const previewDuration = new Histogram<'outcome'>({
    name: 'docgen_preview_duration_seconds',
    help: 'Duration of one template preview render (Liquid and PDF), by outcome (rendered, failed).',
    labelNames: ['outcome'],
    buckets: RENDER_BUCKETS,
    registers,
  });
  const renderQueueDepth = collectedGauge(
    'docgen_render_queue_depth',
    'Render jobs held in the JetStream render lanes (and the pre-lanes stream): waiting or in flight.',
  );
  // Read only through their collectors (src/queue/render-queue-metrics.ts).
  collectedGauge(
    'docgen_render_workspace_pending_jobs',
    'Render jobs held in the lanes of a workspace (waiting or in flight): the workspaces with the most, one series each; the rest summed under workspace="other". Every render process reports the same: aggregate with max.',
    ['workspace'],
  );
  collectedGauge(
    'docgen_render_workspace_oldest_wait_seconds',
    'Age of the oldest render job held in the lanes of a workspace, for the same workspaces as docgen_render_workspace_pending_jobs (workspace="other": the oldest of the rest).',
    ['workspace'],
  );
  const renderConsumerPending = collectedGauge(
    'docgen_render_consumer_pending',
    'Render jobs the render consumers (one per workspace lane, and the pre-lanes one) have not settled: not yet delivered plus delivered and unacknowledged (consumer lag).',
  );
  const renderConsumerRedelivered = collectedGauge(
    'docgen_render_consumer_redelivered',
    'Render jobs currently pending that were delivered more than once.',
  );
  const browserPages = collectedGauge(
    'docgen_browser_pages',
    'Chromium pages in the render pool, by state (busy or free).',
    ['state'],
  );
  const browserRestarts = new Counter<'reason'>({
    name: 'docgen_browser_restarts_total',
    help: 'Chromium restarts by reason: crash, recycle (render count), memory (RSS limit), unresponsive.',
    labelNames: ['reason'],
    registers,
  });
  const webhookAttempts = new Counter<'outcome'>({
    name: 'docgen_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome: success (2xx), http_error, timeout, network_error, redirect, refused.',
    labelNames: ['outcome'],
    registers,
  });
  const webhookDeliveryDuration = new Histogram<'outcome'>({
    name: 'docgen_webhook_delivery_duration_seconds',
    help: 'Duration of one webhook attempt, from connect to response, by outcome.',
    labelNames: ['outcome'],
    buckets: WEBHOOK_BUCKETS,
    registers,
  });
  const webhookQueueDepth = collectedGauge(
    'docgen_webhook_queue_depth',
    'Webhook delivery jobs held in the JetStream deliveries stream.',
  );
  const webhookConsumerPending = collectedGauge(
    'docgen_webhook_consumer_pending',
    'Webhook events and deliveries the webhooks consumers have not settled (retries waiting for their delay included).',
  );

  const jetstreamConsumerPending = collectedGauge(
    'docgen_jetstream_consumer_pending',
    "Messages a JetStream consumer has not yet delivered (its backlog, the lag KEDA's nats-jetstream scaler scales on), by stream and consumer.",
    ['stream', 'consumer'],
  );
  const jetstreamConsumerAckPending = collectedGauge(
    'docgen_jetstream_consumer_ack_pending',
    'Messages a JetStream consumer delivered and has not had acknowledged yet (in flight, or waiting for a retry), by stream and consumer.',
    ['stream', 'consumer'],
  );

  // Batches (src/batches/): gauges read from MongoDB at scrape time by the render role (the same
  // on every render pod: aggregate with max); the rest observed where a batch finishes.
  collectedGauge(
    'docgen_batches_in_progress',
    'Batches not yet COMPLETED, by status (pending: no item final yet; processing). Every render process reports the same: aggregate with max.',
    ['status'],
  );
  collectedGauge(
    'docgen_batch_items_pending',
    'Items of unfinished batches not yet final (waiting or rendering). Every render process reports the same: aggregate with max.',
  );
  const batchCompletionDuration = new Histogram<'merge'>({
    name: 'docgen_batch_completion_duration_seconds',
    help: 'Time from a batch create to COMPLETED (every item final, merged PDF stored), by merge (true, false).',
    labelNames: ['merge'],
    buckets: BATCH_BUCKETS,
    registers,
  });
  const batchesExpired = new Counter({
    name: 'docgen_batches_expired_total',
    help: "Batches deleted (row and merged PDF) by the retention sweeper, past their workspace's retention.",
    registers,
  });
  const batchCreationsFinished = new Counter<'outcome'>({
    name: 'docgen_batch_creations_finished_total',
    help: 'Batch creates cut off by a crash and finished by the creation sweeper, by outcome: resumed (from the kept request), items_failed (no request kept: missing items counted failed).',
    labelNames: ['outcome'],
    registers,
  });

  registry.registerMetric(collectorErrors);

  const metrics: Metrics = {
    registry,
    contentType: registry.contentType,
    httpRequests,
    httpRequestDuration,
    grpcRequests,
    grpcRequestDuration,
    generationsCreated,
    generationsExpired,
    renders,
    renderDuration,
    renderStageDuration,
    renderQueueWait,
    previews,
    previewDuration,
    renderQueueDepth,
    renderConsumerPending,
    renderConsumerRedelivered,
    browserPages,
    browserRestarts,
    webhookAttempts,
    webhookDeliveryDuration,
    webhookQueueDepth,
    webhookConsumerPending,
    jetstreamConsumerPending,
    jetstreamConsumerAckPending,
    collectorErrors,
    batchCompletionDuration,
    batchesExpired,
    batchCreationsFinished,

    observeHttpRequest(route, method, code, seconds) {
      const upper = method.toUpperCase();
      const labels = { route, method: HTTP_METHODS.has(upper) ? upper : 'OTHER', code: String(code) };
      httpRequests.inc(labels);
      httpRequestDuration.observe(labels, seconds);
    },
    observeGrpcRequest(service, method, code, seconds) {
      const labels = { service, method, code };
      grpcRequests.inc(labels);
      grpcRequestDuration.observe(labels, seconds);
    },
    observeRender(outcome, seconds) {
      renders.inc({ outcome });
      renderDuration.observe({ outcome }, seconds);
    },
    observeRenderQueueWait(lane, seconds) {
      renderQueueWait.observe({ lane }, seconds);
    },
    observeRenderStage(stage, seconds) {
      renderStageDuration.observe({ stage }, seconds);
    },
    observePreview(outcome, seconds) {
      previews.inc({ outcome });
      if (outcome === 'rendered' || outcome === 'failed') previewDuration.observe({ outcome }, seconds);
    },
    observeWebhookAttempt(outcome, seconds) {
      webhookAttempts.inc({ outcome });
      webhookDeliveryDuration.observe({ outcome }, seconds);
    },
    observeBatchCompleted(merge, seconds) {
      batchCompletionDuration.observe({ merge: String(merge) }, seconds);
    },
    registerGaugeCollector(name, collector) {
      let set = collectors.get(name);
      if (!set) collectors.set(name, (set = new Set()));
      set.add(collector);
      return () => {
        set.delete(collector);
      };
    },
    metricsText() {
      return registry.metrics();
    },
  };
  return metrics;
}
