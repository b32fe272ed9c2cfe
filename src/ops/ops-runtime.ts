// The operations kit every `docgen serve` process starts first: the logger, the metrics
// registry, the ops listener and the shutdown coordinator, wired together. Role modules
// then add their readiness checks, gauge collectors and stoppers.

import type { Config, ListenAddress } from '../config/config.ts';
import type { LogStream, Logger } from './logger.ts';
import { createLogger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import { createMetrics } from './metrics.ts';
import type { OpsServer } from './ops-server.ts';
import { createOpsServer } from './ops-server.ts';
import type { ShutdownCoordinator, ShutdownProcess } from './shutdown.ts';
import { createShutdownCoordinator } from './shutdown.ts';

export interface OpsRuntime {
  logger: Logger;
  metrics: Metrics;
  server: OpsServer;
  shutdown: ShutdownCoordinator;
  /** Where the ops listener is bound (port 0 in the config picks a free one). */
  address: ListenAddress;
}

export interface OpsRuntimeOptions {
  /** Default process.stdout. */
  logStream?: LogStream;
  /** Default the real process; tests pass a fake. */
  process?: ShutdownProcess & { on(event: 'uncaughtException' | 'unhandledRejection', listener: (err: unknown) => void): unknown };
  /** docgen version for docgen_build_info. */
  version?: string;
  /** Install SIGTERM/SIGINT and fatal-error handlers. Default true. */
  installHandlers?: boolean;
}

export type OpsConfig = Pick<Config, 'roles' | 'logLevel' | 'opsAddress' | 'shutdownGraceMs'>;

export async function startOps(config: OpsConfig, options: OpsRuntimeOptions = {}): Promise<OpsRuntime> {
  const logger = createLogger({ level: config.logLevel, role: config.roles.join(','), stream: options.logStream });
  const metrics = createMetrics({ version: options.version });
  const server = createOpsServer({ address: config.opsAddress, metrics, logger });
  const proc = options.process ?? (process as unknown as NonNullable<OpsRuntimeOptions['process']>);
  const shutdown = createShutdownCoordinator({ graceMs: config.shutdownGraceMs, logger, process: proc });

  // Registered before anything else, so readiness turns 503 first and the ops listener
  // (probes, /metrics) closes last.
  shutdown.register('readiness', () => server.setShuttingDown(), 'stop-accepting');
  shutdown.register('ops-server', () => server.close(), 'final');

  const address = await server.listen();
  if (options.installHandlers !== false) {
    shutdown.install();
    // A crash still drains: hand work back rather than leave it PROCESSING until redelivery.
    proc.on('uncaughtException', (err) => {
      logger.error('uncaught exception: shutting down', { err });
      void shutdown.shutdown('uncaughtException');
    });
    proc.on('unhandledRejection', (err) => {
      logger.error('unhandled promise rejection: shutting down', { err });
      void shutdown.shutdown('unhandledRejection');
    });
  }
  return { logger, metrics, server, shutdown, address };
}
