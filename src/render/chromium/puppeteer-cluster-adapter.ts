// The one place docgen reaches past puppeteer-cluster's package entry point. Everything else
// uses its public API: Cluster.launch, execute, close, and a concurrency implementation of our
// own (reused-page-concurrency.ts), the library's documented extension point, which also hands
// a render the free page used last (docs/architecture.md, print path).
//
// Two things cannot be had through the public API, so they live here, for the version pinned in
// package.json (exact, no range: SUPPORTED_VERSION below), and test/unit/render-cluster-adapter.test.ts
// fails when an upgrade changes what they rely on:
// - The base class a concurrency implementation extends. The README's way to add one is
//   "implement ConcurrencyImplementation", but the package's entry point does not export it: it
//   lives at dist/concurrency/ConcurrencyImplementation.js.
// - The dispatch throttle. puppeteer-cluster spaces its dispatch calls (`work()`) at least 10 ms
//   apart (WORK_CALL_INTERVAL_LIMIT, no option). Measured here: ~5 ms added to every render at
//   concurrency 1 (the next job waits out the throttle), up to 10 ms per job while several wait
//   for pages; a render takes ~50 ms. liftDispatchThrottle() resets the private `nextWorkCall`
//   before each `work()`, so every dispatch call schedules the dispatcher at once.

import { createRequire } from 'node:module';
import concurrencyModule from 'puppeteer-cluster/dist/concurrency/ConcurrencyImplementation.js';
import type {
  ConcurrencyImplementationClassType,
  JobInstance,
  WorkerInstance,
} from 'puppeteer-cluster/dist/concurrency/ConcurrencyImplementation.js';
import type { Cluster } from 'puppeteer-cluster';

export type { ConcurrencyImplementationClassType, JobInstance, WorkerInstance };

/** The puppeteer-cluster this adapter was written against (package.json pins it exactly). */
export const SUPPORTED_VERSION = '0.25.0';

/** The version installed. */
export function installedVersion(): string {
  return (createRequire(import.meta.url)('puppeteer-cluster/package.json') as { version: string }).version;
}

type ConcurrencyBase = typeof concurrencyModule.default;

/**
 * The base class of concurrency implementations. Node's ESM loader hands over this CommonJS
 * module's exports ({ default: class }); Vite (the test runner) hands over the class itself.
 */
export const ConcurrencyImplementation: ConcurrencyBase =
  'default' in concurrencyModule ? concurrencyModule.default : (concurrencyModule as unknown as ConcurrencyBase);

/**
 * Makes every dispatch call of `cluster` schedule its dispatcher at once instead of at least
 * 10 ms after the previous one. Returns false, changing nothing, when the cluster does not have
 * the private fields this relies on (another version): the throttle then stays.
 */
export function liftDispatchThrottle(cluster: Cluster): boolean {
  const internals = cluster as unknown as { nextWorkCall?: unknown; work?: unknown };
  if (typeof internals.nextWorkCall !== 'number' || typeof internals.work !== 'function') return false;
  const work = internals.work as (this: unknown) => Promise<void>;
  internals.work = function (this: { nextWorkCall: number }) {
    this.nextWorkCall = 0;
    return work.call(this);
  };
  return true;
}
