// The composition root: builds a docgen process from its configuration. The ops listener
// opens first (probes answer while dependencies are awaited), then the infrastructure
// (MongoDB, NATS, S3) is connected once and shared, then each configured role starts: api
// (public + admin listeners), render (browser pool, render workers), webhooks (dispatcher,
// senders). Every role has the same shape (role.ts); the app registers their readiness
// checks and gauges and stops them in order: stop accepting, drain in-flight work, close.
import { ALL_ROLES, type Config } from '../config/config.ts';
import { describeError } from '../domain/errors.ts';
import { createLogger, type Logger } from '../ops/logger.ts';
import { createMetrics, type Metrics } from '../ops/metrics.ts';
import { createOpsServer, type OpsServer } from '../ops/ops-server.ts';
import { startApiRole, type ApiRole } from './api-role.ts';
import { registerConsumerLagMetrics } from '../queue/consumer-lag-metrics.ts';
import { connectInfrastructure, type Infrastructure } from './infrastructure.ts';
import { startRenderRole } from './render-role.ts';
import type { Role, RoleContext } from './role.ts';
import { startWebhooksRole } from './webhooks-role.ts';

export { describeError };

export interface App {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  infrastructure: Infrastructure;
  /** The started roles, in start order. */
  roles: readonly Role[];
  /** Bound ports (useful with port 0 in tests). */
  publicPort?: number;
  adminPort?: number;
  opsPort: number;
  ops: OpsServer;
  /** Stops taking work (listeners, consumers); in-flight work finishes or is handed back. */
  stopAccepting(): Promise<void>;
  /** Waits for in-flight work until the signal aborts, then hands the rest back. */
  drain(signal: AbortSignal): Promise<void>;
  /** Closes everything (calls stopAccepting and drain first if needed). */
  close(): Promise<void>;
}

export interface BuildAppOptions {
  logger?: Logger;
  /** Runs between the generation insert and the job publish (the crash tests kill the process
   * here: test/harness/serve-with-faults.ts). */
  afterGenerationInsert?: (generationId: string) => void;
  /** Runs between a batch row's insert and its items' (test/harness/serve-with-faults.ts). */
  afterBatchInsert?: (batchId: string) => void;
  /** Aborts start-up (e.g. SIGTERM while waiting for NATS or MongoDB). */
  signal?: AbortSignal;
}

export async function buildApp(config: Config, options: BuildAppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger({ level: config.logLevel, role: config.roles.join(',') });
  const metrics = createMetrics({ defaultLabels: { role: config.roles.join(',') } });
  const ops = createOpsServer({ address: config.opsAddress, metrics, logger, connections: config.http });
  // Probes answer from the start: /healthz 200, /readyz 503 naming what is awaited, then
  // 503 `starting` until every role has started (consumers set up, listeners bound).
  ops.setStarting();
  await ops.listen();
  let infrastructure: Infrastructure;
  try {
    infrastructure = await connectInfrastructure(config, { logger, metrics, ops, signal: options.signal });
  } catch (err) {
    await ops.close().catch(() => {});
    throw err;
  }

  const ctx: RoleContext = { config, infrastructure, logger, metrics, ops };
  const roles: Role[] = [];

  const unregister: Array<() => void> = [];
  try {
    for (const name of ALL_ROLES.filter((r) => config.roles.includes(r))) {
      const role =
        name === 'api'
          ? await startApiRole(ctx, {
              afterGenerationInsert: options.afterGenerationInsert,
              afterBatchInsert: options.afterBatchInsert,
            })
          : name === 'render'
            ? await startRenderRole(ctx)
            : await startWebhooksRole(ctx);
      roles.push(role);
      for (const [check, run] of Object.entries(role.readiness)) ops.addReadinessCheck(check, run);
      for (const [gauge, collect] of role.gauges) unregister.push(metrics.registerGaugeCollector(gauge, collect));
    }
    unregister.push(
      registerConsumerLagMetrics(
        metrics,
        infrastructure.queue.nats,
        roles.flatMap((r) => r.consumers),
      ),
    );
  } catch (err) {
    for (const role of roles.reverse()) await role.close().catch(() => {});
    for (const u of unregister) u();
    await ops.close().catch(() => {});
    await infrastructure.close().catch(() => {});
    throw err;
  }

  ops.setStarted();
  const api = roles.find((r): r is ApiRole => r.name === 'api');
  let accepting = true;
  let drained = false;
  let closed: Promise<void> | undefined;
  const app: App = {
    config,
    logger,
    metrics,
    infrastructure,
    roles,
    publicPort: api?.publicPort,
    adminPort: api?.adminPort,
    opsPort: ops.port,
    ops,
    async stopAccepting() {
      if (!accepting) return;
      accepting = false;
      ops.setShuttingDown();
      await Promise.all(roles.map((r) => r.stopAccepting()));
    },
    async drain(signal) {
      await app.stopAccepting();
      if (drained) return;
      drained = true;
      await Promise.all(roles.map((r) => r.drain(signal)));
    },
    close() {
      closed ??= (async () => {
        await app.drain(AbortSignal.timeout(config.shutdownGraceMs));
        for (const u of unregister) u();
        for (const role of [...roles].reverse()) {
          await role
            .close()
            .catch((err: unknown) =>
              logger.warn('error while closing', { module: role.name, err: describeError(err) }),
            );
        }
        await ops.close().catch(() => {});
        await infrastructure.close();
      })();
      return closed;
    },
  };
  return app;
}
