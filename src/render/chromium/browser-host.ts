// Owns the Chromium processes: launches them, hands out the current one, retires it after N
// renders or above a memory limit (a replacement starts at once; the old one finishes its
// in-flight renders and is then closed; for the N renders the replacement is launched a little
// ahead, so that no render waits for a launch), replaces a crashed one, and makes sure that nothing
// of a closed or crashed browser survives (process group SIGKILL, profile directory removed).

import { rm } from 'node:fs/promises';
import puppeteer from 'puppeteer';
import type { Browser, BrowserContext } from 'puppeteer';
import {
  chromiumFlags,
  devShmIsRoomy,
  ignoredDefaultArgs,
  isExecutable,
  resolveChromiumExecutable,
} from './launch-options.ts';
import { chromiumEnvironment } from './chromium-environment.ts';
import { killTree, listProcesses, treeRss, waitForGroupExit } from './process-tree.ts';
import { createProfileDir } from './profile-dirs.ts';
import { TripwireProxy } from './tripwire-proxy.ts';

export type RetireReason = 'renders' | 'memory' | 'error' | 'stop';

export type BrowserPoolEvent =
  | { type: 'browser-launched'; pid: number; durationMs: number }
  | { type: 'browser-launch-failed'; error: string }
  | { type: 'browser-retired'; pid: number; reason: RetireReason; renders: number }
  | { type: 'browser-crashed'; pid: number }
  | { type: 'stale-profiles-removed'; names: string[] }
  | { type: 'request-blocked'; target: string }
  | { type: 'render'; ok: boolean; durationMs: number; code?: string };

export interface BrowserHostOptions {
  executablePath: string;
  /**
   * Chromium without its sandbox: only when the operator says so (DOCGEN_CHROMIUM_NO_SANDBOX=true).
   * Otherwise a machine that cannot sandbox makes start() fail with a message naming the setting.
   */
  noSandbox: boolean;
  /** FONTCONFIG_FILE for Chromium; null: the system's configuration. */
  fontconfigFile: string | null;
  recycleAfterRenders: number;
  maxMemoryBytes: number;
  /** Parent directory of the per-launch profile directories. */
  tmpDir: string;
  launchTimeoutMs: number;
  memoryCheckIntervalMs: number;
  extraArgs: string[];
  onEvent: (event: BrowserPoolEvent) => void;
}

/** One Chromium process tree and its bookkeeping. */
export class ManagedBrowser {
  readonly browser: Browser;
  /** Pages live in one non-default context: in-memory storage, downloads denied. */
  readonly context: BrowserContext;
  readonly pid: number;
  readonly userDataDir: string;
  renders = 0;
  openPages = 0;
  retiring = false;
  dead = false;
  closeRequested = false;
  closed: Promise<void> | undefined;
  /** Last measurement; PSS only when the RSS sum was over the limit (null otherwise). */
  memory: { rssBytes: number; pssBytes: number | null } = { rssBytes: 0, pssBytes: null };

  constructor(browser: Browser, context: BrowserContext, pid: number, userDataDir: string) {
    this.browser = browser;
    this.context = context;
    this.pid = pid;
    this.userDataDir = userDataDir;
  }

  get usable(): boolean {
    return !this.retiring && !this.dead;
  }
}

/** What BrowserHost needs from the page slots (reused-page-concurrency.ts). */
export interface HostedSlot {
  readonly busy: boolean;
  readonly owner: ManagedBrowser | null;
  dropPage(): Promise<void>;
}

/** The promise's outcome, or an error naming `what` once `ms` have passed. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const NO_SANDBOX_FIX =
  'Let the node sandbox Chromium (a non-root user with user namespaces: the seccomp profile in docs/deploy.md#security), ' +
  'or set DOCGEN_CHROMIUM_NO_SANDBOX=true to run Chromium without its sandbox.';

const SANDBOX_AS_ROOT = `Chromium cannot use its sandbox when docgen runs as root. ${NO_SANDBOX_FIX}`;

/** A launch failure that says the sandbox could not start, rephrased to name the setting. */
function sandboxError(err: unknown): unknown {
  const message = String((err as Error)?.message ?? err);
  if (!/sandbox|namespace|zygote|running as root/i.test(message)) return err;
  const cause = message.split('\n').find((line) => /sandbox|namespace|zygote|root/i.test(line)) ?? message;
  return new Error(`Chromium could not start its sandbox (${cause.trim().slice(0, 300)}). ${NO_SANDBOX_FIX}`, {
    cause: err,
  });
}

export class BrowserHost {
  readonly slots = new Set<HostedSlot>();
  readonly tripwire = new TripwireProxy();
  readonly counters = {
    launches: 0,
    launchFailures: 0,
    crashes: 0,
    recycledForRenders: 0,
    recycledForMemory: 0,
    recycledForErrors: 0,
    renders: 0,
    pagesOpened: 0,
  };
  peakRssBytes = 0;
  peakPssBytes = 0;

  private readonly options: BrowserHostOptions;
  private readonly browsers = new Set<ManagedBrowser>();
  private current: ManagedBrowser | null = null;
  private launching: Promise<ManagedBrowser> | null = null;
  /** The replacement launched ahead of a recycle for renders (renderDone), for acquire() to take. */
  private standby: Promise<ManagedBrowser> | null = null;
  private consecutiveLaunchFailures = 0;
  private stopped = false;
  private memoryTimer: NodeJS.Timeout | undefined;
  private readonly executablePath: string;
  private readonly useDevShm = devShmIsRoomy();

  constructor(options: BrowserHostOptions) {
    this.options = options;
    this.executablePath = resolveChromiumExecutable(options.executablePath);
  }

  async start(): Promise<void> {
    this.stopped = false;
    if (!isExecutable(this.executablePath)) {
      throw new Error(
        `Chromium not found at ${this.options.executablePath}: install Debian's chromium-headless-shell (the default, ` +
          `/usr/bin/chromium-headless-shell), or point DOCGEN_CHROMIUM_PATH at another Chromium, e.g. /usr/bin/chromium`,
      );
    }
    if (!this.options.noSandbox && process.getuid?.() === 0) throw new Error(SANDBOX_AS_ROOT);
    await this.tripwire.start();
    this.memoryTimer = setInterval(() => this.checkMemory(), this.options.memoryCheckIntervalMs);
    this.memoryTimer.unref();
    await this.acquire();
  }

  /** The browser new pages should open in; launches one when there is none. */
  acquire(): Promise<ManagedBrowser> {
    if (this.stopped) return Promise.reject(new Error('browser pool is stopped'));
    if (this.current?.usable) return Promise.resolve(this.current);
    if (!this.launching) {
      const next = this.standby ?? this.launch();
      this.standby = null;
      this.launching = next
        .then((managed) => {
          if (this.stopped) {
            managed.retiring = true;
            void this.close(managed);
            throw new Error('browser pool is stopped');
          }
          this.current = managed;
          return managed;
        })
        .finally(() => {
          this.launching = null;
        });
    }
    return this.launching;
  }

  /**
   * Counts a finished render; recycles the browser after the configured number. A launch takes
   * a good fraction of a second, which every render would wait for at the recycle (with the
   * jobs waiting on them: a light workspace's next generation too), so the replacement is
   * launched a tenth of the renders ahead (at most 100).
   */
  renderDone(managed: ManagedBrowser): void {
    managed.renders += 1;
    this.counters.renders += 1;
    const ahead = Math.min(100, Math.floor(this.options.recycleAfterRenders / 10));
    if (
      ahead > 0 &&
      managed === this.current &&
      managed.renders >= this.options.recycleAfterRenders - ahead &&
      !this.standby &&
      !this.launching &&
      !this.stopped
    ) {
      const standby = this.launch();
      this.standby = standby;
      // A failed launch ahead leaves the recycle to launch as before.
      standby.catch(() => {
        if (this.standby === standby) this.standby = null;
      });
    }
    if (managed.renders >= this.options.recycleAfterRenders) this.retire(managed, 'renders');
  }

  /** Stops giving out this browser; it closes once its last page is released. */
  retire(managed: ManagedBrowser, reason: RetireReason): void {
    if (managed.retiring || managed.dead) return;
    managed.retiring = true;
    if (reason === 'renders') this.counters.recycledForRenders += 1;
    if (reason === 'memory') this.counters.recycledForMemory += 1;
    if (reason === 'error') this.counters.recycledForErrors += 1;
    this.options.onEvent({ type: 'browser-retired', pid: managed.pid, reason, renders: managed.renders });
    if (this.current === managed) {
      this.current = null;
      // Start the replacement now, so the next render does not wait for a launch.
      if (!this.stopped) this.acquire().catch(() => {});
    }
    for (const slot of this.slots) {
      if (!slot.busy && slot.owner === managed) void slot.dropPage();
    }
    this.closeIfIdle(managed);
  }

  /** A page of this browser was closed (or lost with it). */
  pageReleased(managed: ManagedBrowser): void {
    managed.openPages = Math.max(0, managed.openPages - 1);
    this.closeIfIdle(managed);
  }

  /** False while Chromium keeps failing to start. */
  get healthy(): boolean {
    return !this.stopped && this.consecutiveLaunchFailures < 3;
  }

  get currentBrowser(): ManagedBrowser | null {
    return this.current;
  }

  /** Summed last measurements; pssBytes counts only the browsers whose PSS was measured. */
  memory(): { rssBytes: number; pssBytes: number } {
    let rssBytes = 0;
    let pssBytes = 0;
    for (const b of this.browsers) {
      rssBytes += b.memory.rssBytes;
      pssBytes += b.memory.pssBytes ?? 0;
    }
    return { rssBytes, pssBytes };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.memoryTimer);
    await this.launching?.catch(() => {});
    // A replacement launched ahead is one of `browsers` once launched: closed below.
    await this.standby?.catch(() => {});
    this.standby = null;
    await Promise.all(
      [...this.browsers].map((b) => {
        b.retiring = true;
        return this.close(b);
      }),
    );
    this.current = null;
    await this.tripwire.stop();
  }

  private closeIfIdle(managed: ManagedBrowser): void {
    if (managed.retiring && managed.openPages === 0 && !managed.closeRequested) void this.close(managed);
  }

  private close(managed: ManagedBrowser): Promise<void> {
    if (managed.closed) return managed.closed;
    managed.closeRequested = true;
    managed.closed = (async () => {
      if (!managed.dead) {
        await withTimeout(managed.browser.close(), 5_000, 'closing Chromium').catch(() => {});
      }
      this.cleanUp(managed);
      // SIGKILL is delivered asynchronously: when this resolves, nothing of the tree still runs.
      await waitForGroupExit(managed.pid, 2_000);
      await rm(managed.userDataDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
    })();
    return managed.closed;
  }

  /** Whatever is left of the tree goes, whether it closed cleanly or not. */
  private cleanUp(managed: ManagedBrowser): void {
    killTree(managed.pid);
    managed.dead = true;
    this.browsers.delete(managed);
    if (this.current === managed) this.current = null;
  }

  private onDisconnected(managed: ManagedBrowser): void {
    if (managed.dead) return;
    const expected = managed.closeRequested;
    this.cleanUp(managed);
    if (!expected) {
      this.counters.crashes += 1;
      this.options.onEvent({ type: 'browser-crashed', pid: managed.pid });
      // Its pages are gone with it: forget them (nothing to close) and start a replacement.
      for (const slot of this.slots) {
        if (!slot.busy && slot.owner === managed) void slot.dropPage();
      }
      void rm(managed.userDataDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
      if (!this.stopped) this.acquire().catch(() => {});
    }
  }

  private checkMemory(): void {
    const processes = listProcesses();
    for (const managed of this.browsers) {
      if (managed.dead) continue;
      managed.memory = treeRss(managed.pid, this.options.maxMemoryBytes, processes);
      // PSS, not the plain RSS sum: Chromium's processes share most of their pages (forked from
      // one zygote), and summing RSS would count those once per process. A browser that has not
      // rendered yet is as small as it gets: replacing it would only thrash (limit set too low).
      const pss = managed.memory.pssBytes;
      if (managed.usable && managed.renders > 0 && pss !== null && pss > this.options.maxMemoryBytes) {
        this.retire(managed, 'memory');
      }
    }
    const { rssBytes, pssBytes } = this.memory();
    this.peakRssBytes = Math.max(this.peakRssBytes, rssBytes);
    this.peakPssBytes = Math.max(this.peakPssBytes, pssBytes);
  }

  private async launch(): Promise<ManagedBrowser> {
    if (this.consecutiveLaunchFailures > 0) {
      // Chromium that failed to start will most likely fail again right away: back off.
      const delay = Math.min(10_000, 250 * 2 ** (this.consecutiveLaunchFailures - 1));
      await new Promise((resolve) => setTimeout(resolve, delay));
      if (this.stopped) throw new Error('browser pool is stopped');
    }
    const started = Date.now();
    try {
      const managed = await this.launchOnce().catch((err: unknown) => {
        // Never a silent fallback to --no-sandbox: that is the operator's decision.
        throw this.options.noSandbox ? err : sandboxError(err);
      });
      this.consecutiveLaunchFailures = 0;
      this.counters.launches += 1;
      this.options.onEvent({ type: 'browser-launched', pid: managed.pid, durationMs: Date.now() - started });
      return managed;
    } catch (err) {
      this.consecutiveLaunchFailures += 1;
      this.counters.launchFailures += 1;
      this.options.onEvent({ type: 'browser-launch-failed', error: String((err as Error)?.message ?? err) });
      throw err;
    }
  }

  private async launchOnce(): Promise<ManagedBrowser> {
    const userDataDir = await createProfileDir(this.options.tmpDir);
    let browser: Browser | undefined;
    try {
      browser = await puppeteer.launch({
        executablePath: this.executablePath,
        // A few named variables, never the service's secrets (chromium-environment.ts).
        env: chromiumEnvironment({ fontconfigFile: this.options.fontconfigFile }),
        headless: true,
        // DevTools over a pipe: no debugging port for anything else on the machine to reach.
        pipe: true,
        userDataDir,
        args: [
          ...chromiumFlags({
            proxyPort: this.tripwire.port,
            useDevShm: this.useDevShm,
            noSandbox: this.options.noSandbox,
          }),
          ...this.options.extraArgs,
        ],
        ignoreDefaultArgs: ignoredDefaultArgs(this.useDevShm),
        defaultViewport: null,
        timeout: this.options.launchTimeoutMs,
        // Shutdown belongs to the service (BrowserPool.stop), not to puppeteer's signal handlers.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
        downloadBehavior: { policy: 'deny' },
      });
      const pid = browser.process()?.pid;
      if (pid === undefined) throw new Error('Chromium started without a process id');
      const context = await browser.createBrowserContext({ downloadBehavior: { policy: 'deny' } });
      const managed = new ManagedBrowser(browser, context, pid, userDataDir);
      this.browsers.add(managed);
      browser.on('disconnected', () => this.onDisconnected(managed));
      if (!browser.connected) this.onDisconnected(managed);
      return managed;
    } catch (err) {
      const pid = browser?.process()?.pid;
      if (pid !== undefined) killTree(pid);
      await browser?.close().catch(() => {});
      await rm(userDataDir, { recursive: true, force: true }).catch(() => {});
      throw err;
    }
  }
}
