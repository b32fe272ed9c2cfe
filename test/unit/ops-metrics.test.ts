import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { register as globalRegistry } from 'prom-client';
import { METRIC_NAMES, createMetrics } from '../../src/ops/metrics.ts';

// Finds one series by name and label set (label order in the exposition is not fixed).
function sample(text: string, series: string): number | undefined {
  const parse = (s: string) => {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?$/.exec(s);
    if (!m) throw new Error(`bad series ${s}`);
    const labels = [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => `${l[1]}=${l[2]}`).sort();
    return `${m[1]}|${labels.join(',')}`;
  };
  const want = parse(series);
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const at = line.lastIndexOf(' ');
    if (parse(line.slice(0, at)) === want) return Number(line.slice(at + 1));
  }
  return undefined;
}

describe('metrics', () => {
  it('exposes every docgen metric with HELP and TYPE, plus process metrics', async () => {
    const metrics = createMetrics({ version: '0.1.0' });
    const text = await metrics.metricsText();
    for (const name of METRIC_NAMES) {
      expect(text, name).toContain(`# HELP ${name} `);
      expect(text, name).toContain(`# TYPE ${name} `);
    }
    expect(text).toContain('# TYPE docgen_http_request_duration_seconds histogram');
    expect(text).toContain('# TYPE docgen_render_queue_depth gauge');
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
    expect(metrics.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('uses its own registry, not the global one, so two instances do not collide', async () => {
    const a = createMetrics({ defaultMetrics: false });
    const b = createMetrics({ defaultMetrics: false });
    a.generationsCreated.inc();
    expect(sample(await a.metricsText(), 'docgen_generations_created_total')).toBe(1);
    expect(sample(await b.metricsText(), 'docgen_generations_created_total')).toBe(0);
    expect(globalRegistry.getSingleMetric('docgen_generations_created_total')).toBeUndefined();
  });

  it('counters move with the helpers, labelled by route template, method and code', async () => {
    const m = createMetrics({ defaultMetrics: false, defaultLabels: { role: 'api' } });
    m.observeHttpRequest('/v1/generations/{id}', 'get', 200, 0.012);
    m.observeHttpRequest('/v1/generations/{id}', 'GET', 200, 0.02);
    m.observeHttpRequest('/v1/generations', 'BREW', 405, 0.001);
    m.observeGrpcRequest('docgen.v1.GenerationService', 'CreateGeneration', 'ok', 0.03);
    m.observeRender('completed', 1.2);
    m.observeRender('retried', 10);
    m.observeWebhookAttempt('success', 0.2);
    m.observeWebhookAttempt('timeout', 10);
    m.browserRestarts.inc({ reason: 'recycle' });
    m.browserPages.set({ state: 'busy' }, 3);
    m.browserPages.set({ state: 'free' }, 1);
    m.generationsCreated.inc();
    const text = await m.metricsText();
    expect(
      sample(text, 'docgen_http_requests_total{route="/v1/generations/{id}",method="GET",code="200",role="api"}'),
    ).toBe(2);
    expect(
      sample(text, 'docgen_http_requests_total{route="/v1/generations",method="OTHER",code="405",role="api"}'),
    ).toBe(1);
    expect(
      sample(
        text,
        'docgen_http_request_duration_seconds_count{route="/v1/generations/{id}",method="GET",code="200",role="api"}',
      ),
    ).toBe(2);
    expect(
      sample(
        text,
        'docgen_grpc_requests_total{service="docgen.v1.GenerationService",method="CreateGeneration",code="ok",role="api"}',
      ),
    ).toBe(1);
    expect(sample(text, 'docgen_renders_total{outcome="completed",role="api"}')).toBe(1);
    expect(sample(text, 'docgen_render_duration_seconds_bucket{le="2",outcome="completed",role="api"}')).toBe(1);
    expect(sample(text, 'docgen_webhook_attempts_total{outcome="timeout",role="api"}')).toBe(1);
    expect(sample(text, 'docgen_webhook_delivery_duration_seconds_count{outcome="success",role="api"}')).toBe(1);
    expect(sample(text, 'docgen_browser_restarts_total{reason="recycle",role="api"}')).toBe(1);
    expect(sample(text, 'docgen_browser_pages{state="busy",role="api"}')).toBe(3);
    expect(sample(text, 'docgen_generations_created_total{role="api"}')).toBe(1);
  });

  it('gauge collectors are read at scrape time, summed, and can be unregistered', async () => {
    const m = createMetrics({ defaultMetrics: false });
    let depth = 5;
    const off = m.registerGaugeCollector('docgen_render_queue_depth', () => depth);
    m.registerGaugeCollector('docgen_render_queue_depth', async () => 2);
    m.registerGaugeCollector('docgen_browser_pages', () => [
      { labels: { state: 'busy' }, value: 4 },
      { labels: { state: 'free' }, value: 0 },
    ]);
    expect(sample(await m.metricsText(), 'docgen_render_queue_depth')).toBe(7);
    depth = 11;
    const text = await m.metricsText();
    expect(sample(text, 'docgen_render_queue_depth')).toBe(13);
    expect(sample(text, 'docgen_browser_pages{state="busy"}')).toBe(4);
    off();
    expect(sample(await m.metricsText(), 'docgen_render_queue_depth')).toBe(2);
  });

  it('a failing or hanging collector keeps the last value and counts an error, without failing the scrape', async () => {
    const m = createMetrics({ defaultMetrics: false, collectorTimeoutMs: 50 });
    let mode: 'ok' | 'throw' | 'hang' = 'ok';
    m.registerGaugeCollector('docgen_render_consumer_pending', () => {
      if (mode === 'throw') throw new Error('nats down');
      if (mode === 'hang') return new Promise<number>(() => {});
      return 9;
    });
    expect(sample(await m.metricsText(), 'docgen_render_consumer_pending')).toBe(9);
    mode = 'throw';
    let text = await m.metricsText();
    expect(sample(text, 'docgen_render_consumer_pending')).toBe(9);
    expect(sample(text, 'docgen_metrics_collector_errors_total{gauge="docgen_render_consumer_pending"}')).toBe(1);
    mode = 'hang';
    text = await m.metricsText();
    expect(sample(text, 'docgen_metrics_collector_errors_total{gauge="docgen_render_consumer_pending"}')).toBe(2);
  });
});

describe('docs/deploy.md', () => {
  it('documents every docgen metric', () => {
    const doc = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');
    for (const name of METRIC_NAMES) expect(doc, name).toContain(`\`${name}\``);
  });
});
