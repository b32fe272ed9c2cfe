// The operations listener every role opens (DOCGEN_OPS_ADDR, 9090 by default): liveness,
// readiness and Prometheus metrics for the kubelet and the scraper. It is separate from
// the public and admin listeners so that probes keep answering while those drain, and so
// that a NetworkPolicy can let only this port into render and webhooks pods.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ListenAddress } from '../config/config.ts';
import type { Logger } from './logger.ts';
import { redactString } from './logger.ts';
import type { Metrics } from './metrics.ts';
import { errorMessage } from '../domain/errors.ts';

/**
 * A readiness check passes when it returns or resolves (anything but `false`) within the
 * time-out, and fails when it throws, rejects, returns `false` or takes too long. The
 * signal aborts at the time-out so a check can cancel its own I/O. A passing check may
 * resolve to `{ details }`: facts an operator should see in /readyz (how Chromium runs).
 */
export type ReadinessCheck = (signal: AbortSignal) => unknown;

export interface CheckResult {
  ok: boolean;
  durationMs: number;
  error?: string;
  details?: Record<string, string>;
}

export interface ReadinessDetails {
  details: Record<string, string>;
}

function detailsOf(value: unknown): Record<string, string> | undefined {
  if (value === null || typeof value !== 'object' || !('details' in value)) return undefined;
  const details = (value as ReadinessDetails).details;
  return details !== null && typeof details === 'object' ? details : undefined;
}

export interface ReadinessReport {
  /** `starting`: every check passes but the process has not finished starting (its roles). */
  status: 'ready' | 'not_ready' | 'starting' | 'shutting_down';
  checks: Record<string, CheckResult>;
}

export interface OpsServerOptions {
  address: ListenAddress;
  metrics: Metrics;
  logger: Logger;
  /** Time-out of each readiness check. Default 2000 ms (below the probe's own time-out). */
  checkTimeoutMs?: number;
  /** Connection hygiene (config `http`); defaults 10 s headers, 30 s request, 1000 connections. */
  connections?: { headersTimeoutMs: number; requestTimeoutMs: number; maxConnections: number };
}

export interface OpsServer {
  addReadinessCheck(name: string, check: ReadinessCheck): void;
  /** From now on /readyz answers 503 so the Service stops routing here; the rest keeps working. */
  setShuttingDown(): void;
  /**
   * /readyz answers 503 `starting` (once its checks pass) until setStarted(): for a process that
   * listens before it has started.
   */
  setStarting(): void;
  setStarted(): void;
  /** Runs every readiness check, as /readyz does. */
  checkReadiness(): Promise<ReadinessReport>;
  listen(): Promise<ListenAddress>;
  close(): Promise<void>;
  /** The bound port after listen() (useful with port 0); the configured port before. */
  readonly port: number;
  readonly shuttingDown: boolean;
}

export function createOpsServer(options: OpsServerOptions): OpsServer {
  const { metrics } = options;
  const logger = options.logger.child({ component: 'ops-server' });
  const checkTimeoutMs = options.checkTimeoutMs ?? 2000;
  const checks = new Map<string, ReadinessCheck>();
  let shuttingDown = false;
  let starting = false;
  let boundPort: number | undefined;
  // Log a failing check when it starts failing, not on every probe.
  const lastFailure = new Map<string, string>();

  async function runCheck(name: string, check: ReadinessCheck): Promise<CheckResult> {
    const started = performance.now();
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort(new Error(`timed out after ${checkTimeoutMs} ms`));
        reject(new Error(`timed out after ${checkTimeoutMs} ms`));
      }, checkTimeoutMs);
    });
    try {
      const value = await Promise.race([Promise.resolve().then(() => check(controller.signal)), timeout]);
      if (value === false) throw new Error('check reported not ready');
      if (lastFailure.delete(name)) logger.info('readiness check recovered', { check: name });
      const details = detailsOf(value);
      return { ok: true, durationMs: Math.round(performance.now() - started), ...(details ? { details } : {}) };
    } catch (err) {
      // Error texts can quote connection strings: redact before they leave the process.
      const error = redactString(errorMessage(err));
      if (lastFailure.get(name) !== error) logger.warn('readiness check failed', { check: name, error });
      lastFailure.set(name, error);
      return { ok: false, durationMs: Math.round(performance.now() - started), error };
    } finally {
      clearTimeout(timer);
    }
  }

  async function checkReadiness(): Promise<ReadinessReport> {
    if (shuttingDown) return { status: 'shutting_down', checks: {} };
    const entries = await Promise.all(
      [...checks].map(async ([name, check]) => [name, await runCheck(name, check)] as const),
    );
    const results = Object.fromEntries(entries);
    // Shutdown may have begun while the checks ran.
    if (shuttingDown) return { status: 'shutting_down', checks: results };
    const ready = entries.every(([, r]) => r.ok);
    return { status: !ready ? 'not_ready' : starting ? 'starting' : 'ready', checks: results };
  }

  function send(res: http.ServerResponse, status: number, contentType: string, body: string, head: boolean): void {
    res.writeHead(status, {
      'Content-Type': contentType,
      'Content-Length': Buffer.byteLength(body),
      'Cache-Control': 'no-store',
    });
    res.end(head ? undefined : body);
  }

  function sendJson(res: http.ServerResponse, status: number, value: unknown, head: boolean): void {
    send(res, status, 'application/json; charset=utf-8', JSON.stringify(value), head);
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    const head = req.method === 'HEAD';
    const known = path === '/healthz' || path === '/readyz' || path === '/metrics';
    if (!known) return sendJson(res, 404, { error: { code: 'NOT_FOUND', message: `No route ${path}` } }, head);
    if (req.method !== 'GET' && !head) {
      res.setHeader('Allow', 'GET, HEAD');
      return sendJson(res, 405, { error: { code: 'METHOD_NOT_ALLOWED', message: 'Use GET.' } }, head);
    }
    if (path === '/healthz') {
      // Liveness: the event loop answers. Dependencies are readiness' business; failing
      // liveness on a database outage would only restart healthy pods.
      return sendJson(res, 200, { status: 'ok' }, head);
    }
    if (path === '/readyz') {
      const report = await checkReadiness();
      return sendJson(res, report.status === 'ready' ? 200 : 503, report, head);
    }
    const text = await metrics.metricsText();
    return send(res, 200, metrics.contentType, text, head);
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error('ops request failed', { path: req.url, err });
      if (!res.headersSent) sendJson(res, 500, { error: { code: 'INTERNAL', message: 'internal error' } }, false);
      else res.destroy();
    });
  });
  // Probes and scrapes are short; do not let idle keep-alive sockets delay close().
  server.keepAliveTimeout = 5000;
  server.headersTimeout = options.connections?.headersTimeoutMs ?? 10_000;
  server.requestTimeout = options.connections?.requestTimeoutMs ?? 30_000;
  server.maxConnections = options.connections?.maxConnections ?? 1000;

  return {
    addReadinessCheck(name, check) {
      if (checks.has(name)) throw new Error(`readiness check ${JSON.stringify(name)} is already registered`);
      checks.set(name, check);
    },
    setShuttingDown() {
      if (!shuttingDown) logger.info('readiness now reports shutting_down');
      shuttingDown = true;
    },
    setStarting() {
      starting = true;
    },
    setStarted() {
      starting = false;
    },
    checkReadiness,
    listen() {
      return new Promise<ListenAddress>((resolve, reject) => {
        const onError = (err: Error) => reject(err);
        server.once('error', onError);
        server.listen(options.address.port, options.address.host, () => {
          server.off('error', onError);
          const addr = server.address() as AddressInfo;
          boundPort = addr.port;
          logger.info('ops listener ready', { address: `${addr.address}:${addr.port}` });
          resolve({ host: addr.address, port: addr.port });
        });
      });
    },
    close() {
      return new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeIdleConnections();
        // Anything still open after a moment is a stuck scrape; cut it.
        setTimeout(() => server.closeAllConnections(), 1000).unref();
      });
    },
    get port() {
      return boundPort ?? options.address.port;
    },
    get shuttingDown() {
      return shuttingDown;
    },
  };
}
