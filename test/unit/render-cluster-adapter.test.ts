// The one adapter to puppeteer-cluster's internals (src/render/chromium/puppeteer-cluster-adapter.ts)
// works on the installed version, and this test fails when an upgrade changes what it relies
// on: the version it was written for, the base class of concurrency implementations, and the
// 10 ms dispatch throttle it lifts (with the adapter a job queued after another finished is
// dispatched within a millisecond; without it, after the throttle's 10 ms). No Chromium: the cluster
// runs on a concurrency implementation whose pages are stand-ins, on fake timers.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Cluster } from 'puppeteer-cluster';
import {
  ConcurrencyImplementation,
  installedVersion,
  liftDispatchThrottle,
  SUPPORTED_VERSION,
  type WorkerInstance,
} from '../../src/render/chromium/puppeteer-cluster-adapter.ts';

type StandInPage = Awaited<ReturnType<WorkerInstance['jobInstance']>>['resources']['page'];

/** Pages that are not pages: puppeteer-cluster only adds and removes listeners on them. */
class StandInPages extends ConcurrencyImplementation {
  async init(): Promise<void> {}
  async close(): Promise<void> {}
  async workerInstance(): Promise<WorkerInstance> {
    const page = { on: () => page, removeAllListeners: () => page } as unknown as StandInPage;
    return {
      jobInstance: async () => ({ resources: { page }, close: async () => {} }),
      close: async () => {},
      repair: async () => {},
    };
  }
}

afterEach(() => {
  vi.useRealTimers();
});

/** Runs job A to its end, then queues job B at once: after how many (fake) milliseconds B starts. */
async function dispatchDelayAfterAJob(lift: boolean): Promise<{ waitedMs: number }> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  const cluster = await Cluster.launch({
    concurrency: StandInPages,
    maxConcurrency: 1,
    puppeteer: {},
    timeout: 60_000,
  });
  try {
    if (lift) expect(liftDispatchThrottle(cluster)).toBe(true);
    // B is queued the moment A's result is in, as the next render of a busy worker is.
    let aDone = false;
    const a = cluster
      .execute(async () => 'a')
      .then((value) => {
        aDone = true;
        return value;
      });
    for (let ms = 0; !aDone && ms < 100; ms++) await vi.advanceTimersByTimeAsync(1);
    expect(await a).toBe('a');
    let started = false;
    const b = cluster.execute(async () => {
      started = true;
      return 'b';
    });
    await vi.advanceTimersByTimeAsync(0);
    let waitedMs = 0;
    while (!started && waitedMs < 100) {
      await vi.advanceTimersByTimeAsync(1);
      waitedMs += 1;
    }
    expect(await b).toBe('b');
    return { waitedMs };
  } finally {
    await cluster.close();
  }
}

describe('puppeteer-cluster adapter', () => {
  it('was written for the installed version (package.json pins it exactly)', async () => {
    expect(installedVersion()).toBe(SUPPORTED_VERSION);
    const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as {
      dependencies: Record<string, string>;
    };
    expect(pkg.dependencies['puppeteer-cluster']).toBe(SUPPORTED_VERSION);
  });

  it('offers the base class of concurrency implementations, which the cluster takes', () => {
    expect(typeof ConcurrencyImplementation).toBe('function');
    expect(new StandInPages({}, {})).toBeInstanceOf(ConcurrencyImplementation);
  });

  it('without it, the library waits out its 10 ms throttle before the next dispatch', async () => {
    expect((await dispatchDelayAfterAJob(false)).waitedMs).toBe(10);
  });

  it('with it, a job queued after another finished is dispatched at once', async () => {
    // A timer of 0 ms set while timers run counts as 1 ms here (and is 1 ms in Node).
    expect((await dispatchDelayAfterAJob(true)).waitedMs).toBeLessThanOrEqual(1);
  });

  it('changes nothing on a cluster without the fields it relies on', () => {
    const other = { work: async () => {} };
    expect(liftDispatchThrottle(other as unknown as Cluster)).toBe(false);
  });
});
