// OpenTelemetry tracing: one trace per generation, across processes. The API request's span
// is the root; its context travels in the W3C `traceparent` header of every NATS message
// (render job, final event, delivery job), so the render worker's stages (Liquid, Chromium,
// object store, final event) and each webhook attempt join the same trace.
//
// Configured by the standard OTEL_* variables. Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set: then the SDK is never loaded, and every helper
// here calls straight through (no span objects, no headers). Supported:
//   OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, _HEADERS, _TIMEOUT, _COMPRESSION (read by the exporter)
//   OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL   http/protobuf (default) or http/json
//   OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
//   OTEL_TRACES_SAMPLER (+ _ARG)            always_on, always_off, traceidratio, parentbased_*
//                                           (default parentbased_always_on)
//   OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BSP_EXPORT_TIMEOUT
//   OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none   turn it off although an endpoint is set
import type { IncomingHttpHeaders } from 'node:http';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import pkg from '../../package.json' with { type: 'json' };
import type { Logger } from './logger.ts';

export { SpanKind };

const tracer = trace.getTracer('docgen', pkg.version);
let enabled = false;

export interface Tracing {
  readonly enabled: boolean;
  /** Exports the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { enabled: false, shutdown: async () => {} };

export class TracingConfigError extends Error {}

/**
 * Starts tracing for this process when the OTEL_* environment asks for it. Call once, before
 * the app is built. Throws TracingConfigError naming the variable to fix.
 */
export async function startTracing(options: {
  serviceName: string;
  env?: NodeJS.ProcessEnv;
  logger: Logger;
}): Promise<Tracing> {
  const env = options.env ?? process.env;
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (
    !endpoint ||
    env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' ||
    env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none'
  )
    return OFF;
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ||
    env.OTEL_EXPORTER_OTLP_PROTOCOL ||
    'http/protobuf'
  ).trim();
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new TracingConfigError(
      `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported by docgen: use http/protobuf (the default) or http/json.`,
    );
  }
  const sampler = await samplerFromEnv(env);

  // Loaded only now: a process without tracing never pays for the SDK.
  const [{ TracerProvider, BatchSpanProcessor }, { AsyncLocalStorageContextManager }, core, resources, exporterModule] =
    await Promise.all([
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
      import('@opentelemetry/resources'),
      protocol === 'http/json'
        ? import('@opentelemetry/exporter-trace-otlp-http')
        : import('@opentelemetry/exporter-trace-otlp-proto'),
    ]);
  const exporter = new exporterModule.OTLPTraceExporter();
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': pkg.version }))
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the defaults.
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const number = (name: string) => core.getNumberFromEnv(name);
  const processor = new BatchSpanProcessor({
    exporter,
    ...defined('scheduledDelayMillis', number('OTEL_BSP_SCHEDULE_DELAY')),
    ...defined('maxQueueSize', number('OTEL_BSP_MAX_QUEUE_SIZE')),
    ...defined('maxExportBatchSize', number('OTEL_BSP_MAX_EXPORT_BATCH_SIZE')),
    ...defined('exportTimeoutMillis', number('OTEL_BSP_EXPORT_TIMEOUT')),
  });
  const provider = new TracerProvider({ resource, sampler, spanProcessors: [processor] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new core.CompositePropagator({
      propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()],
    }),
  );
  trace.setGlobalTracerProvider(provider);
  enabled = true;
  options.logger.info('tracing on: exporting spans over OTLP', { endpoint, protocol });
  return {
    enabled: true,
    async shutdown() {
      await provider
        .shutdown()
        .catch((err: unknown) => options.logger.warn('could not export the last spans', { err: String(err) }));
    },
  };
}

function defined<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

async function samplerFromEnv(env: NodeJS.ProcessEnv) {
  const { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler } =
    await import('@opentelemetry/sdk-trace');
  const name = (env.OTEL_TRACES_SAMPLER || 'parentbased_always_on').trim().toLowerCase();
  const ratio = () => {
    const raw = env.OTEL_TRACES_SAMPLER_ARG;
    const value = raw === undefined || raw === '' ? 1 : Number(raw);
    if (!(value >= 0 && value <= 1))
      throw new TracingConfigError(`OTEL_TRACES_SAMPLER_ARG=${raw} is not a ratio between 0 and 1.`);
    return value;
  };
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
    default:
      throw new TracingConfigError(
        `OTEL_TRACES_SAMPLER=${name} is not supported: use always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio.`,
      );
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers the code calls; each is a plain call-through while tracing is off.

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** Parent context; default the active one. */
  parent?: Context;
}

/** Runs fn inside a new span (active for everything fn awaits); records a thrown error. */
export async function withSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!enabled) return fn(undefined);
  const parent = options.parent ?? context.active();
  return tracer.startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, ...(options.attributes ? { attributes: options.attributes } : {}) },
    parent,
    async (span) => {
      try {
        return await fn(span);
      } catch (err) {
        span.recordException(err instanceof Error ? err : String(err));
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/** The active trace context as message headers (`traceparent`, …), or undefined when off. */
export function traceHeaders(): Record<string, string> | undefined {
  if (!enabled) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** The trace context a message carried (its lower-cased headers). */
export function contextFromHeaders(headers: Readonly<Record<string, string>>): Context {
  if (!enabled) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, headers);
}

/** Marks the current span failed without throwing (e.g. an attempt answered 500). */
export function markSpanError(span: Span | undefined, message: string): void {
  span?.setStatus({ code: SpanStatusCode.ERROR, message });
}

const ID_SEGMENT = /\/[a-z]{2,5}_[0-9a-f]{24}(?=\/|$)/g;

/**
 * Runs an HTTP handler inside a SERVER span that ends when the response does. A caller's
 * `traceparent` is honoured, so a client's own trace continues here.
 */
export function traceHttpRequest(
  req: { method?: string | undefined; url?: string | undefined; headers: IncomingHttpHeaders },
  res: { statusCode: number; once(event: 'finish' | 'close', listener: () => void): unknown },
  handler: () => void,
): void {
  if (!enabled) return handler();
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  const path = (req.url ?? '/').split('?')[0]!;
  const span = tracer.startSpan(
    `${req.method ?? 'GET'} ${path.replace(ID_SEGMENT, '/{id}')}`,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method ?? 'GET', 'url.path': path } },
    parent,
  );
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
  res.once('finish', end);
  res.once('close', end);
  context.with(trace.setSpan(parent, span), handler);
}
