// The one shape every role has (api, render, webhooks). A role is started by its module's
// start function with a RoleContext; the composition root registers what it declares
// (readiness checks, gauges) and runs its lifecycle in order on shutdown:
//   stopAccepting -> drain(signal) -> close.
import type { Config, Role as RoleName } from '../config/config.ts';
import type { Logger } from '../ops/logger.ts';
import type { CollectedGaugeName, GaugeCollector, Metrics } from '../ops/metrics.ts';
import type { OpsServer, ReadinessCheck } from '../ops/ops-server.ts';
import type { WatchedConsumer } from '../queue/consumer-lag-metrics.ts';
import type { Infrastructure } from './infrastructure.ts';

export interface RoleContext {
  config: Config;
  infrastructure: Infrastructure;
  logger: Logger;
  metrics: Metrics;
  ops: OpsServer;
}

export interface Role {
  readonly name: RoleName;
  /** Checks /readyz runs while the role is up (besides the shared dependencies'). */
  readonly readiness: Readonly<Record<string, ReadinessCheck>>;
  /** The JetStream consumers it works off (their lag is exported per consumer). */
  readonly consumers: ReadonlyArray<WatchedConsumer>;
  /** Gauges computed at scrape time (queue depths, consumer backlogs). */
  readonly gauges: ReadonlyArray<readonly [CollectedGaugeName, GaugeCollector]>;
  /** Stops taking new work: listeners close, consumers stop pulling, sweeps stop. */
  stopAccepting(): Promise<void>;
  /** Lets in-flight work finish; once the signal aborts, hands the rest back. */
  drain(signal: AbortSignal): Promise<void>;
  /** Releases what the role holds (browser pool, preview engine). */
  close(): Promise<void>;
}

/** Resolves when the signal aborts (at once when it already has). */
export function abortedPromise(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
