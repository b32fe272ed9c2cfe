// Composition of the render engine from configuration: Liquid worker processes + the Chromium
// pool + the document renderer, with logging and metrics hooked onto the pool's events.
// The render role and the admin preview each create one.

import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Config } from '../config/config.ts';
import type { Logger } from '../ops/logger.ts';
import type { Metrics } from '../ops/metrics.ts';
import { BrowserPool } from './chromium/browser-pool.ts';
import type { BrowserPoolEvent, BrowserPoolStats } from './chromium/browser-pool.ts';
import type { AssetSource } from './asset-loader.ts';
import type { CertificateSource } from './finishing/signing-identity.ts';
import { createDocumentRenderer } from './document-renderer.ts';
import type { DocumentRenderer } from './document-renderer.ts';
import { LiquidRenderer } from './liquid/liquid-renderer.ts';
import type { LiquidRendererStats } from './liquid/liquid-renderer.ts';

export interface RenderEngineConfig extends Readonly<Config['render']> {
  /** Directory under which each Chromium launch gets a fresh profile directory
   * (default: the OS temp directory, which the test harness points into its run directory). */
  userDataDir?: string;
}

export interface RenderEngineDeps {
  logger?: Logger | undefined;
  metrics?: Metrics | undefined;
  /** Workspace assets for asset_url (asset-loader.ts) and attachments. */
  assets?: AssetSource | undefined;
  /** Decrypted signing identities for versions with `sign` (finishing/signing-identity.ts). */
  certificates?: CertificateSource | undefined;
}

export interface RenderEngine {
  renderer: DocumentRenderer;
  liquid: LiquidRenderer;
  pool: BrowserPool;
  /** For readiness probes: the pool runs and Chromium starts. */
  isReady(): boolean;
  stats(): { pool: BrowserPoolStats; liquid: LiquidRendererStats };
  close(): Promise<void>;
}

const RESTART_REASONS = { renders: 'recycle', memory: 'memory', error: 'unresponsive' } as const;

function eventHandler(deps: RenderEngineDeps): (event: BrowserPoolEvent) => void {
  const { logger, metrics } = deps;
  return (event) => {
    switch (event.type) {
      case 'browser-launched':
        logger?.info('chromium started', { pid: event.pid, durationMs: event.durationMs });
        break;
      case 'browser-launch-failed':
        logger?.error('chromium failed to start', { err: event.error });
        break;
      case 'browser-retired':
        if (event.reason !== 'stop') {
          metrics?.browserRestarts.inc({ reason: RESTART_REASONS[event.reason] });
          logger?.info('chromium recycled', { pid: event.pid, reason: event.reason, renders: event.renders });
        }
        break;
      case 'browser-crashed':
        metrics?.browserRestarts.inc({ reason: 'crash' });
        logger?.warn('chromium crashed; replacing it', { pid: event.pid });
        break;
      case 'stale-profiles-removed':
        logger?.info('removed Chromium profiles left by processes that died', {
          count: event.names.length,
          dirs: event.names,
        });
        break;
      case 'request-blocked':
        logger?.info('template tried to load a URL; refused', { target: event.target });
        break;
      case 'render':
        break;
    }
  };
}

export async function createRenderEngine(
  config: RenderEngineConfig,
  deps: RenderEngineDeps = {},
): Promise<RenderEngine> {
  if (config.userDataDir) mkdirSync(config.userDataDir, { recursive: true });
  // Liquid is ~1 ms of a render: a process per core is plenty, more only costs memory (~40 MB each).
  const liquid = new LiquidRenderer({
    workers: Math.max(1, Math.min(config.concurrency, Math.max(2, availableParallelism()))),
    timeoutMs: config.liquidTimeoutMs,
    memoryMb: config.liquidMemoryMb,
  });
  const pool = new BrowserPool({
    executablePath: config.chromiumPath,
    noSandbox: config.noSandbox ?? false,
    fontconfigFile: config.fontconfigFile,
    concurrency: config.concurrency,
    recycleAfterRenders: config.browserRecycleAfterRenders,
    maxMemoryMb: config.browserMaxRssMb,
    ...(config.loadTimeoutMs ? { loadTimeoutMs: config.loadTimeoutMs } : {}),
    ...(config.maxHtmlBytes ? { maxHtmlBytes: config.maxHtmlBytes } : {}),
    ...(config.userDataDir ? { tmpDir: config.userDataDir } : {}),
    onEvent: eventHandler(deps),
  });
  try {
    await Promise.all([liquid.start(), pool.start()]);
  } catch (err) {
    await Promise.allSettled([liquid.stop(), pool.stop(0)]);
    throw err;
  }
  const unregister = deps.metrics?.registerGaugeCollector('docgen_browser_pages', () => {
    const s = pool.stats();
    return [
      { labels: { state: 'busy' }, value: s.pagesBusy },
      { labels: { state: 'free' }, value: s.pagesFree },
    ];
  });
  const renderer = createDocumentRenderer({
    liquid,
    pool,
    timeoutMs: config.timeoutMs,
    assets: deps.assets,
    certificates: deps.certificates,
    timestamp: config.timestampUrl ? { url: config.timestampUrl } : undefined,
  });
  let closed: Promise<void> | undefined;
  return {
    renderer,
    liquid,
    pool,
    isReady: () => closed === undefined && pool.isHealthy(),
    stats: () => ({ pool: pool.stats(), liquid: liquid.stats() }),
    close() {
      closed ??= (async () => {
        unregister?.();
        await Promise.allSettled([pool.stop(), liquid.stop()]);
      })();
      return closed;
    },
  };
}
