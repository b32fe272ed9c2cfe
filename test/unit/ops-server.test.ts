import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/ops/logger.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { createOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';

const servers: OpsServer[] = [];
const logLines: string[] = [];

async function start(checkTimeoutMs = 200) {
  const metrics = createMetrics({ defaultMetrics: false });
  const logger = createLogger({ level: 'debug', role: 'render', stream: { write: (l: string) => logLines.push(l) } });
  const ops = createOpsServer({ address: { host: '127.0.0.1', port: 0 }, metrics, logger, checkTimeoutMs });
  servers.push(ops);
  await ops.listen();
  const base = `http://127.0.0.1:${ops.port}`;
  return { ops, metrics, base };
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  logLines.length = 0;
});

describe('ops server', () => {
  it('binds a free port and answers /healthz with 200 {"status":"ok"}', async () => {
    const { ops, base } = await start();
    expect(ops.port).toBeGreaterThan(0);
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('/readyz is 200 when every check passes and with no checks at all', async () => {
    const { ops, base } = await start();
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    ops.addReadinessCheck('mongodb', async () => {});
    ops.addReadinessCheck('nats', () => true);
    const res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; checks: Record<string, { ok: boolean }> };
    expect(body.status).toBe('ready');
    expect(body.checks.mongodb!.ok).toBe(true);
    expect(body.checks.nats!.ok).toBe(true);
  });

  it('/readyz shows the details a passing check reports', async () => {
    const { ops, base } = await start();
    ops.addReadinessCheck('browser-pool', () => ({ details: { chromiumSandbox: 'on' } }));
    const body = (await (await fetch(`${base}/readyz`)).json()) as {
      checks: Record<string, { ok: boolean; details?: Record<string, string> }>;
    };
    expect(body.checks['browser-pool']).toMatchObject({ ok: true, details: { chromiumSandbox: 'on' } });
  });

  it('/readyz is 503 naming the failing, false and timed-out checks, with secrets redacted', async () => {
    const { ops, base } = await start(100);
    let aborted = false;
    ops.addReadinessCheck('mongodb', () => true);
    ops.addReadinessCheck('s3', async () => {
      throw new Error('connect ECONNREFUSED http://minio:s3cr3tpassw0rd@minio:9000');
    });
    ops.addReadinessCheck('browser-pool', () => false);
    ops.addReadinessCheck(
      'nats',
      (signal) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve(true);
          }),
        ),
    );
    const res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(503);
    const text = await res.text();
    expect(text).not.toContain('s3cr3tpassw0rd');
    const body = JSON.parse(text) as { status: string; checks: Record<string, { ok: boolean; error?: string }> };
    expect(body.status).toBe('not_ready');
    expect(body.checks.mongodb).toMatchObject({ ok: true });
    expect(body.checks.s3).toMatchObject({ ok: false });
    expect(body.checks.s3!.error).toContain('ECONNREFUSED');
    expect(body.checks['browser-pool']).toMatchObject({ ok: false, error: 'check reported not ready' });
    expect(body.checks.nats).toMatchObject({ ok: false, error: 'timed out after 100 ms' });
    expect(aborted).toBe(true);
    // Logged once per failure, redacted too.
    expect(logLines.join('')).toContain('readiness check failed');
    expect(logLines.join('')).not.toContain('s3cr3tpassw0rd');
  });

  it('/readyz is 503 as soon as shutdown begins, without running the checks', async () => {
    const { ops, base } = await start();
    let runs = 0;
    ops.addReadinessCheck('mongodb', () => {
      runs++;
    });
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    ops.setShuttingDown();
    const res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: 'shutting_down' });
    expect(runs).toBe(1);
    // Liveness and metrics keep answering while the process drains.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
  });

  it('/metrics serves the Prometheus text with moved counters', async () => {
    const { metrics, base } = await start();
    metrics.generationsCreated.inc(3);
    metrics.observeRender('completed', 0.8);
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain('docgen_generations_created_total 3');
    expect(text).toMatch(/docgen_renders_total\{outcome="completed"\} 1/);
    expect(text).toContain('# TYPE docgen_render_queue_depth gauge');
  });

  it('unknown paths are 404, other methods 405, HEAD has no body', async () => {
    const { base } = await start();
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    const post = await fetch(`${base}/healthz`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(`${base}/healthz?probe=1`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('refuses a duplicate check name and closes cleanly (twice)', async () => {
    const { ops, base } = await start();
    ops.addReadinessCheck('x', () => true);
    expect(() => ops.addReadinessCheck('x', () => true)).toThrow(/already registered/);
    await fetch(`${base}/healthz`);
    await ops.close();
    await ops.close();
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });

  it('listen() rejects when the port is taken', async () => {
    const { ops } = await start();
    const second = createOpsServer({
      address: { host: '127.0.0.1', port: ops.port },
      metrics: createMetrics({ defaultMetrics: false }),
      logger: createLogger({ stream: { write: () => true } }),
    });
    await expect(second.listen()).rejects.toThrow(/EADDRINUSE/);
  });
});
