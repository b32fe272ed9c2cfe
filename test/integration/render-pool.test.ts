// The Chromium pool's life cycle with real Chromium: a browser killed mid-render fails that job
// with a transient error and the next job gets a fresh browser; a crashed page is replaced;
// browsers are recycled after N renders and above the memory limit; nothing is left running.

import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import { BrowserPool } from '../../src/render/chromium/browser-pool.ts';
import type { BrowserPoolOptions } from '../../src/render/chromium/browser-pool.ts';
import { RenderError } from '../../src/render/render-error.ts';
import { chromiumPath, uniqueRunDir } from '../harness/dependencies.ts';
import { eventually, leftovers, pdfText, processes } from './render-support.ts';

const SMALL = '<!DOCTYPE html><html><body><p>small document</p></body></html>';
/** Long enough to print that a test can act while it is in flight. */
const BIG = `<!DOCTYPE html><html><body><table>${'<tr><td>row</td><td>cell cell cell</td><td>more</td></tr>'.repeat(25_000)}</table></body></html>`;

const pools: Array<{ pool: BrowserPool; dir: string }> = [];

async function startPool(options: Partial<BrowserPoolOptions> = {}): Promise<{ pool: BrowserPool; dir: string }> {
  const dir = uniqueRunDir('chromium-pool');
  const pool = new BrowserPool({
    executablePath: chromiumPath(),
    noSandbox: true,
    concurrency: 1,
    recycleAfterRenders: 1000,
    maxMemoryMb: 4096,
    tmpDir: dir,
    ...options,
  });
  const entry = { pool, dir };
  pools.push(entry);
  await pool.start();
  return entry;
}

afterEach(async () => {
  for (const { pool, dir } of pools.splice(0)) {
    await pool.stop();
    expect(leftovers({ dir })).toEqual([]);
  }
});

const print = (pool: BrowserPool, html = SMALL, timeoutMs = 15_000) =>
  pool.printPdf(html, DEFAULT_PDF_OPTIONS, { timeoutMs });

async function rejection(promise: Promise<unknown>): Promise<RenderError> {
  const err = await promise.then(
    () => new Error('expected the render to fail'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RenderError);
  return err as RenderError;
}

/** CPU time (clock ticks) of each renderer process of the browser `pid` leads. */
function rendererCpu(pid: number): Map<number, number> {
  return new Map(
    processes()
      .filter((p) => p.pgid === pid && p.cmdline.includes('--type=renderer'))
      .map((p) => [p.pid, p.cpuTicks]),
  );
}

describe('browser pool', () => {
  it('prints renders that come one at a time on the page used last, whose renderer is warm', async () => {
    const { pool } = await startPool({ concurrency: 3 });
    const pid = pool.stats().browserPid!;
    const medium = `<!DOCTYPE html><html><body><table>${'<tr><td>row</td><td>cell cell cell</td></tr>'.repeat(800)}</table></body></html>`;
    await print(pool, medium);
    const before = rendererCpu(pid);
    expect(before.size).toBeGreaterThanOrEqual(3); // a renderer process per page
    for (let i = 0; i < 4; i++) expect(await pdfText(await print(pool, medium))).toContain('cell cell cell');
    const used = [...rendererCpu(pid)]
      .map(([rendererPid, ticks]) => ticks - (before.get(rendererPid) ?? 0))
      .sort((a, b) => b - a);
    // Handed out in turn, the pages would share the four prints; here one page prints them all.
    expect(used[0]!).toBeGreaterThan(3 * used.slice(1).reduce((sum, t) => sum + t, 0));
  });

  it('survives a browser killed mid-render: that job fails transiently, the next gets a fresh browser', async () => {
    const { pool } = await startPool();
    const oldPid = pool.stats().browserPid!;
    const inFlight = print(pool, BIG);
    expect(await eventually(() => pool.stats().pagesBusy === 1)).toBe(true);
    await new Promise((r) => setTimeout(r, 100));
    process.kill(oldPid, 'SIGKILL');
    const err = await rejection(inFlight);
    expect(err).toMatchObject({ code: 'BROWSER_CRASHED', kind: 'transient' });

    const pdf = await print(pool);
    expect(await pdfText(pdf)).toContain('small document');
    const stats = pool.stats();
    expect(stats.crashes).toBe(1);
    expect(stats.browserPid).not.toBe(oldPid);
    // The killed browser's whole tree is gone, zombies included.
    expect(await eventually(() => leftovers({ pgids: [oldPid] }).length === 0)).toBe(true);
  });

  it('replaces a page whose renderer crashed, without restarting the browser', async () => {
    const { pool } = await startPool();
    const browserPid = pool.stats().browserPid!;
    const inFlight = rejection(print(pool, BIG, 6_000));
    expect(await eventually(() => pool.stats().pagesBusy === 1)).toBe(true);
    await new Promise((r) => setTimeout(r, 100));
    const renderers = processes().filter((p) => p.pgid === browserPid && p.cmdline.includes('--type=renderer'));
    expect(renderers.length).toBeGreaterThan(0);
    for (const p of renderers) process.kill(p.pid, 'SIGKILL');
    const err = await inFlight;
    // Chromium reports the crash (almost always at once); if it ever does not, the render's
    // time-out ends the job. Transient either way, and the page is replaced.
    expect(err.kind).toBe('transient');
    expect(['BROWSER_CRASHED', 'RENDER_TIMEOUT']).toContain(err.code);
    expect(await pdfText(await print(pool))).toContain('small document');
    expect(pool.stats()).toMatchObject({ browserPid, crashes: 0, pagesOpened: 2 });
  });

  it('times out a render that takes too long and keeps serving', async () => {
    // A document slow to print is a big one: above the service's HTML limit, allowed here.
    const { pool } = await startPool({ concurrency: 2, maxHtmlBytes: 16 * 1024 * 1024 });
    const started = Date.now();
    const [slow, fast] = await Promise.all([rejection(print(pool, BIG + BIG, 500)), print(pool)]);
    expect(slow).toMatchObject({ code: 'RENDER_TIMEOUT', kind: 'transient' });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await pdfText(fast)).toContain('small document');
    expect(await pdfText(await print(pool))).toContain('small document');
    expect(pool.stats().timeouts).toBe(1);
  });

  it('recycles the browser after N renders and closes the old one', async () => {
    const { pool } = await startPool({ recycleAfterRenders: 3, concurrency: 2 });
    const pids = new Set<number>();
    for (let i = 0; i < 8; i++) {
      pids.add(pool.stats().browserPid!);
      await print(pool);
    }
    const stats = pool.stats();
    expect(stats.recycledForRenders).toBeGreaterThanOrEqual(2);
    expect(stats.launches).toBeGreaterThanOrEqual(3);
    expect(stats.renders).toBe(8);
    const current = stats.browserPid!;
    const old = [...pids].filter((pid) => pid !== current);
    expect(old.length).toBeGreaterThanOrEqual(1);
    expect(await eventually(() => leftovers({ pgids: old }).length === 0)).toBe(true);
  });

  it('launches the replacement a tenth of the renders ahead of a recycle, so that no render waits for a launch', async () => {
    const { pool } = await startPool({ recycleAfterRenders: 20 });
    const first = pool.stats().browserPid!;
    for (let i = 0; i < 18; i++) await print(pool);
    // At 18 of 20 renders the replacement is on its way, and the first browser still renders.
    expect(await eventually(() => pool.stats().launches === 2)).toBe(true);
    expect(pool.stats()).toMatchObject({ browserPid: first, recycledForRenders: 0 });
    for (let i = 0; i < 2; i++) await print(pool);
    expect(pool.stats().recycledForRenders).toBe(1);
    // The next render runs on the replacement launched ahead: no third launch.
    expect(await pdfText(await print(pool))).toContain('small document');
    const stats = pool.stats();
    expect(stats.browserPid).not.toBe(first);
    expect(stats.launches).toBe(2);
    expect(await eventually(() => leftovers({ pgids: [first] }).length === 0)).toBe(true);
  });

  it('recycles the browser when its processes use more memory than allowed', async () => {
    // Any Chromium uses more than 64 MB: the limit is hit at the first measurement after a render
    // (a browser that has not rendered yet is never recycled for memory: that would only thrash).
    const { pool } = await startPool({ maxMemoryMb: 64, memoryCheckIntervalMs: 100 });
    const first = pool.stats().browserPid!;
    expect(await pdfText(await print(pool))).toContain('small document');
    expect(await eventually(() => pool.stats().recycledForMemory >= 1)).toBe(true);
    expect(await pdfText(await print(pool))).toContain('small document');
    const stats = pool.stats();
    expect(stats.browserPid).not.toBe(first);
    expect(stats.peakPssBytes).toBeGreaterThan(64 * 1024 * 1024);
    expect(stats.peakRssBytes).toBeGreaterThanOrEqual(stats.peakPssBytes);
  });

  it('fails to start with a clear error when Chromium cannot be launched', async () => {
    const dir = uniqueRunDir('chromium-missing');
    const pool = new BrowserPool({
      executablePath: '/nonexistent/chromium',
      concurrency: 1,
      recycleAfterRenders: 10,
      maxMemoryMb: 512,
      tmpDir: dir,
    });
    await expect(pool.start()).rejects.toThrow(/nonexistent\/chromium/);
    expect(await rejection(print(pool))).toMatchObject({ code: 'BROWSER_UNAVAILABLE' });
    expect(pool.isHealthy()).toBe(false);
    await pool.stop();
    expect(leftovers({ dir })).toEqual([]);
  });

  it('stop() rejects waiting jobs and leaves no Chromium process behind', async () => {
    const { pool, dir } = await startPool();
    const pid = pool.stats().browserPid!;
    // The browser and its helpers (which Chromium's headless shell starts without the profile
    // directory on their command lines, hence also by process group).
    expect(leftovers({ dir, pgids: [pid] }).length).toBeGreaterThan(1);
    const running = rejection(print(pool, BIG));
    const waiting = rejection(print(pool));
    await eventually(() => pool.stats().pagesBusy === 1);
    await pool.stop(0);
    expect((await running).kind).toBe('transient');
    expect(await waiting).toMatchObject({ code: 'BROWSER_UNAVAILABLE', kind: 'transient' });
    expect(await rejection(print(pool))).toMatchObject({ code: 'BROWSER_UNAVAILABLE' });
    expect(leftovers({ dir })).toEqual([]);
    // Chromium's helper processes outlive the browser by a moment as zombies of PID 1 (tini in
    // the image), which reaps them; the browser itself is reaped by Node at once.
    expect(processes().filter((p) => p.ppid === process.pid && p.state === 'Z')).toEqual([]);
    expect(await eventually(() => leftovers({ pgids: [pid] }).length === 0, 10_000)).toBe(true);
  });
});
