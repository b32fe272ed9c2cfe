// The Chromium pool: HTML in, PDF out. puppeteer-cluster queues and dispatches the jobs; the
// reused-page concurrency model (reused-page-concurrency.ts) keeps pages open between jobs and
// gives a job the free page used last; the one door to puppeteer-cluster's internals is
// puppeteer-cluster-adapter.ts;
// BrowserHost (browser-host.ts) owns the Chromium processes.
//
// Error classification for the pipeline: a crash, a time-out of the whole step or no browser is
// transient; what the document itself causes every time (too large, never finishes loading, a
// header/footer Chromium cannot print) is permanent (see printPdf).

import { tmpdir } from 'node:os';
import puppeteer from 'puppeteer';
import type { Page } from 'puppeteer';
import { Cluster } from 'puppeteer-cluster';
import { DEFAULT_MAX_HTML_BYTES } from '../../config/limits.ts';
import type { PdfOptions } from '../../domain/document-settings.ts';
import { toPrintParams, validatePdfOptions } from '../pdf-options.ts';
import { RenderError } from '../render-error.ts';
import { loadTimeoutMessage } from '../liquid/resource-references.ts';
import { BrowserHost } from './browser-host.ts';
import type { BrowserPoolEvent } from './browser-host.ts';
import type { RenderAssets } from '../asset-loader.ts';
import { checkHeaderFooter } from './header-footer-check.ts';
import { printChannel, printToPdf, setDocument } from './devtools-print.ts';
import { timeStage, type StageObserver } from '../render-stages.ts';
import { guardPage, setPageAssets } from './page-guard.ts';
import { removeStaleProfileDirs } from './profile-dirs.ts';
import { liftDispatchThrottle } from './puppeteer-cluster-adapter.ts';
import { reusedPageConcurrency, slotOf, unavailableReason } from './reused-page-concurrency.ts';

export type { BrowserPoolEvent } from './browser-host.ts';

export interface BrowserPoolOptions {
  /** Chromium binary (config render.chromiumPath). */
  executablePath: string;
  /** Chromium without its sandbox (config render.noSandbox, DOCGEN_CHROMIUM_NO_SANDBOX). Default false:
   * sandboxed, and a machine that cannot sandbox fails start() with a message naming the setting. */
  noSandbox?: boolean;
  /** Fontconfig file Chromium reads (config render.fontconfigFile); null or absent: the system's. */
  fontconfigFile?: string | null;
  /** Pages rendering at once (config render.concurrency). */
  concurrency: number;
  /** Replace the browser after this many renders (config render.browserRecycleAfterRenders). */
  recycleAfterRenders: number;
  /** Replace the browser when its process tree uses more than this (PSS, MB). */
  maxMemoryMb: number;
  /** Parent of the per-launch profile directories (default: the OS temp dir). */
  tmpDir?: string;
  /** Default 30 s. */
  launchTimeoutMs?: number;
  /** How often the browser's memory is measured. Default 2 s. */
  memoryCheckIntervalMs?: number;
  /**
   * Bound of the wait for the document's load event (and of the header/footer check). Only
   * data: URLs load, so a document still loading past it waits for something that never comes
   * (an SVG <use> of an external URL): permanent PAGE_LOAD_TIMEOUT. Default 5 s.
   */
  loadTimeoutMs?: number;
  /** Largest HTML document printed; bigger ones fail at once (DOCUMENT_TOO_LARGE). Default: the
   * service's (DEFAULT_MAX_HTML_BYTES, which DOCGEN_RENDER_MAX_HTML_BYTES overrides). */
  maxHtmlBytes?: number;
  /**
   * Tagged (accessible) PDFs, Chromium's default. Untagged saves the structure tree: about 10 %
   * more PDFs/s measured on the sample invoice.
   */
  taggedPdf?: boolean;
  /** Extra Chromium flags (tests, tuning). */
  extraArgs?: string[];
  /** Metrics/logging hook; must not throw. */
  onEvent?: (event: BrowserPoolEvent) => void;
}

export interface PrintOptions {
  /** Time the PDF step may take, queueing included. */
  timeoutMs: number;
  /** Workspace assets the page may load (asset URLs), served from memory. */
  assets?: RenderAssets | undefined;
  /** Told how long the header/footer check, set content and print took. */
  onStage?: StageObserver | undefined;
  /** Chromium writes bookmarks (/Outlines) from the document's headings (the outline setting). */
  outline?: boolean | undefined;
}

export interface BrowserPoolStats {
  pagesTotal: number;
  pagesBusy: number;
  pagesFree: number;
  /** Jobs waiting for a page. */
  queued: number;
  renders: number;
  failures: number;
  timeouts: number;
  /** Browsers that died unexpectedly. */
  crashes: number;
  launches: number;
  /** Browser replacements of any cause (recycle, memory, error, crash). */
  restarts: number;
  recycledForRenders: number;
  recycledForMemory: number;
  /** Pages opened since start (pages are reused: this grows only with replacements). */
  pagesOpened: number;
  /** Requests refused by page interception. */
  blockedRequests: number;
  /** Connections that reached the tripwire proxy: 0 unless something got past the resolver rules. */
  blockedConnections: number;
  browserPid: number | null;
  /** Renders done by the current browser. */
  browserRenders: number;
  /** Last measurement over all browser processes. PSS is measured only when the RSS sum is
   * over the memory limit (it costs tens of ms; PSS is never more than RSS): 0 until then. */
  rssBytes: number;
  pssBytes: number;
  peakRssBytes: number;
  peakPssBytes: number;
}

interface Job {
  html: string;
  assets: RenderAssets | undefined;
  onStage: StageObserver | undefined;
  pdfOptions: PdfOptions;
  outline: boolean;
  deadline: number;
  timeoutMs: number;
  /** A page is working on it. */
  started: boolean;
  settled: boolean;
  reject: (err: RenderError) => void;
}

const CLUSTER_BACKSTOP_TIMEOUT_MS = 10 * 60_000;

function isDisconnectError(err: unknown): boolean {
  const message = String((err as Error)?.message ?? err);
  return /target closed|session closed|connection closed|browser has disconnected|page crashed|detached|protocol error.*(closed|crash)/i.test(
    message,
  );
}

export class BrowserPool {
  private readonly options: Required<Omit<BrowserPoolOptions, 'onEvent'>> & Pick<BrowserPoolOptions, 'onEvent'>;
  private host: BrowserHost | null = null;
  private cluster: Cluster | null = null;
  private stopping = false;
  private readonly jobs = new Set<Job>();
  private busy = 0;
  private readonly counters = { renders: 0, failures: 0, timeouts: 0, blockedRequests: 0 };

  constructor(options: BrowserPoolOptions) {
    this.options = {
      tmpDir: tmpdir(),
      launchTimeoutMs: 30_000,
      memoryCheckIntervalMs: 2_000,
      loadTimeoutMs: 5_000,
      maxHtmlBytes: DEFAULT_MAX_HTML_BYTES,
      taggedPdf: true,
      extraArgs: [],
      ...options,
      fontconfigFile: options.fontconfigFile ?? null,
      noSandbox: options.noSandbox ?? false,
    };
    if (!(options.concurrency >= 1)) throw new Error('BrowserPool: concurrency must be >= 1');
  }

  /** Launches Chromium and opens all pages, so the first renders do not pay for it. */
  async start(): Promise<void> {
    if (this.cluster) return;
    this.stopping = false;
    const onEvent = (event: BrowserPoolEvent) => this.emit(event);
    // Profiles of processes that died without cleaning up (SIGKILL, OOM kill): only dead
    // owners' directories go, never a live process's (profile-dirs.ts).
    const stale = await removeStaleProfileDirs(this.options.tmpDir);
    if (stale.length > 0) onEvent({ type: 'stale-profiles-removed', names: stale });
    const host = new BrowserHost({
      executablePath: this.options.executablePath,
      noSandbox: this.options.noSandbox,
      fontconfigFile: this.options.fontconfigFile,
      recycleAfterRenders: this.options.recycleAfterRenders,
      maxMemoryBytes: this.options.maxMemoryMb * 1024 * 1024,
      tmpDir: this.options.tmpDir,
      launchTimeoutMs: this.options.launchTimeoutMs,
      memoryCheckIntervalMs: this.options.memoryCheckIntervalMs,
      extraArgs: this.options.extraArgs,
      onEvent,
    });
    const prepare = async (page: Page) => {
      await guardPage(page, {
        onBlocked: (target) => {
          this.counters.blockedRequests += 1;
          onEvent({ type: 'request-blocked', target });
        },
      });
      await printChannel(page); // opened now, so the first render does not wait for it
    };
    this.host = host;
    try {
      this.cluster = await Cluster.launch({
        concurrency: reusedPageConcurrency(host, prepare),
        maxConcurrency: this.options.concurrency,
        puppeteer,
        timeout: CLUSTER_BACKSTOP_TIMEOUT_MS, // ours are per job (runJob); this is a backstop
        retryLimit: 0,
        monitor: false,
      });
    } catch (err) {
      await host.stop().catch(() => {});
      this.host = null;
      throw err;
    }
    // No 10 ms between dispatches (puppeteer-cluster-adapter.ts says why); the free page used
    // last comes from the concurrency model itself.
    liftDispatchThrottle(this.cluster);
    // One empty job per page: puppeteer-cluster opens its workers (our pages) lazily.
    await Promise.all(
      Array.from({ length: this.options.concurrency }, () =>
        this.cluster!.execute(null, async () => undefined).catch(() => {}),
      ),
    );
  }

  /**
   * Prints a full HTML document to PDF. Throws RenderError: RENDER_TIMEOUT, BROWSER_CRASHED,
   * BROWSER_UNAVAILABLE or INTERNAL (all transient); permanent INVALID_TEMPLATE (invalid options,
   * a header/footer loading external stylesheets or fonts), PAGE_LOAD_TIMEOUT, DOCUMENT_TOO_LARGE.
   */
  printPdf(html: string, pdfOptions: PdfOptions, options: PrintOptions): Promise<Buffer> {
    const cluster = this.cluster;
    if (!cluster || this.stopping) {
      return Promise.reject(new RenderError('BROWSER_UNAVAILABLE', 'The browser pool is not running'));
    }
    const problems = validatePdfOptions(pdfOptions, { rendered: true });
    if (problems.length > 0)
      return Promise.reject(new RenderError('INVALID_TEMPLATE', `Invalid PDF options: ${problems.join('; ')}`));
    const htmlBytes = Buffer.byteLength(html);
    if (htmlBytes > this.options.maxHtmlBytes) {
      const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
      return Promise.reject(
        new RenderError(
          'DOCUMENT_TOO_LARGE',
          `The rendered document is ${mb(htmlBytes)} of HTML, more than the ${mb(this.options.maxHtmlBytes)} that can be printed; split it or show fewer rows`,
        ),
      );
    }

    return new Promise<Buffer>((resolve, reject) => {
      const timeoutMs = Math.max(1, options.timeoutMs);
      const job: Job = {
        html,
        assets: options.assets,
        onStage: options.onStage,
        outline: options.outline === true,
        pdfOptions,
        deadline: Date.now() + timeoutMs,
        timeoutMs,
        started: false,
        settled: false,
        reject: (err) => {
          if (job.settled) return;
          job.settled = true;
          if (err.code === 'RENDER_TIMEOUT') this.counters.timeouts += 1;
          clearTimeout(timer);
          this.jobs.delete(job);
          reject(err);
        },
      };
      this.jobs.add(job);
      // Also bounds the wait for a free page; runJob() skips a job whose deadline passed.
      // (job.reject reads `timer`; nothing calls it before this line.)
      const timer = setTimeout(() => {
        job.reject(new RenderError('RENDER_TIMEOUT', `PDF rendering did not finish within ${timeoutMs} ms`));
      }, timeoutMs);
      // Job data is only a label: puppeteer-cluster's debug logging prints job data.
      cluster
        .execute('render', ({ page }) => this.runJob(page, job))
        .then(
          (pdf: Buffer) => {
            if (job.settled) return;
            job.settled = true;
            clearTimeout(timer);
            this.jobs.delete(job);
            resolve(pdf);
          },
          (err: unknown) =>
            job.reject(
              err instanceof RenderError ? err : new RenderError('INTERNAL', 'PDF rendering failed', { cause: err }),
            ),
        );
    });
  }

  /** Rejects queued jobs, gives running ones up to `graceMs` to finish, then closes every browser. */
  async stop(graceMs = 5_000): Promise<void> {
    if (!this.cluster) return;
    this.stopping = true;
    const shuttingDown = () => new RenderError('BROWSER_UNAVAILABLE', 'The browser pool is shutting down');
    for (const job of [...this.jobs]) if (!job.started) job.reject(shuttingDown());
    const until = Date.now() + graceMs;
    while (this.busy > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
    for (const job of [...this.jobs]) job.reject(shuttingDown());
    const cluster = this.cluster;
    this.cluster = null;
    await cluster.close();
    await this.host?.stop(); // idempotent; cluster.close() already called it unless it threw
    this.host = null;
  }

  /** Running, and Chromium is not failing to start (for readiness probes). */
  isHealthy(): boolean {
    return this.cluster !== null && !this.stopping && (this.host?.healthy ?? false);
  }

  stats(): BrowserPoolStats {
    const host = this.host;
    const current = host?.currentBrowser ?? null;
    const memory = host?.memory() ?? { rssBytes: 0, pssBytes: 0 };
    const total = this.cluster ? this.options.concurrency : 0;
    const c = host?.counters;
    return {
      pagesTotal: total,
      pagesBusy: this.busy,
      pagesFree: Math.max(0, total - this.busy),
      queued: Math.max(0, this.jobs.size - this.busy),
      renders: this.counters.renders,
      failures: this.counters.failures,
      timeouts: this.counters.timeouts,
      crashes: c?.crashes ?? 0,
      launches: c?.launches ?? 0,
      restarts: Math.max(0, (c?.launches ?? 0) - 1),
      recycledForRenders: c?.recycledForRenders ?? 0,
      recycledForMemory: c?.recycledForMemory ?? 0,
      pagesOpened: c?.pagesOpened ?? 0,
      blockedRequests: this.counters.blockedRequests,
      blockedConnections: host?.tripwire.connections ?? 0,
      browserPid: current?.pid ?? null,
      browserRenders: current?.renders ?? 0,
      rssBytes: memory.rssBytes,
      pssBytes: memory.pssBytes,
      peakRssBytes: host?.peakRssBytes ?? 0,
      peakPssBytes: host?.peakPssBytes ?? 0,
    };
  }

  private emit(event: BrowserPoolEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // a metrics hook must never break rendering
    }
  }

  private async runJob(page: Page, job: Job): Promise<Buffer> {
    const reason = unavailableReason(page);
    if (reason !== undefined) {
      throw new RenderError('BROWSER_UNAVAILABLE', 'No browser page is available', { cause: reason });
    }
    const remaining = job.deadline - Date.now();
    if (job.settled || remaining <= 0) {
      throw new RenderError('RENDER_TIMEOUT', `PDF rendering did not finish within ${job.timeoutMs} ms`);
    }
    const slot = slotOf(page);
    const owner = slot?.owner ?? null;
    const started = Date.now();
    job.started = true;
    this.busy += 1;
    let timer: NodeJS.Timeout | undefined;
    let pageCrashed = false;
    const crashed = new Promise<never>((_, reject) => {
      // Emitted when the page's renderer process dies (killed, out of memory).
      page.once('error', (err) => {
        pageCrashed = true;
        reject(new RenderError('BROWSER_CRASHED', 'The browser page crashed while rendering', { cause: err }));
      });
    });
    try {
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new RenderError('RENDER_TIMEOUT', `PDF rendering did not finish within ${job.timeoutMs} ms`)),
          remaining,
        );
      });
      const work = this.print(page, job);
      for (const p of [work, crashed, timedOut]) p.catch(() => {}); // losers of the race
      const pdf = await Promise.race([work, crashed, timedOut]);
      this.counters.renders += 1;
      this.emit({ type: 'render', ok: true, durationMs: Date.now() - started });
      return pdf;
    } catch (err) {
      // The page's state is unknown (half-loaded, hung, crashed): never reuse it.
      if (slot) slot.discard = true;
      if (!(err instanceof RenderError) && !pageCrashed) {
        // A print cut short by a dying renderer fails ("Printing failed") just before the crash
        // event arrives: give it a moment, so the failure is reported as what it is.
        await Promise.race([crashed.catch(() => {}), new Promise((r) => setTimeout(r, 100))]);
      }
      let error: RenderError;
      if (err instanceof RenderError) error = err;
      else if (pageCrashed || owner?.dead || isDisconnectError(err)) {
        error = new RenderError('BROWSER_CRASHED', 'The browser crashed while rendering', { cause: err });
      } else error = new RenderError('INTERNAL', 'PDF rendering failed', { cause: err });
      if (error.code !== 'RENDER_TIMEOUT') this.counters.failures += 1;
      this.emit({ type: 'render', ok: false, durationMs: Date.now() - started, code: error.code });
      throw error;
    } finally {
      clearTimeout(timer);
      this.busy -= 1;
      if (owner && this.host) this.host.renderDone(owner);
    }
  }

  private async print(page: Page, job: Job): Promise<Buffer> {
    setPageAssets(page, job.assets);
    const loadTimeoutMs = this.options.loadTimeoutMs;
    try {
      const refused = await timeStage(job.onStage, 'header_footer_check', () =>
        checkHeaderFooter(page, job.pdfOptions, loadTimeoutMs),
      );
      if (refused) throw refused;
      // Straight through the DevTools protocol (devtools-print.ts): no navigation, so no request
      // to intercept for the document itself.
      if (!(await timeStage(job.onStage, 'set_content', () => setDocument(page, job.html, loadTimeoutMs)))) {
        throw new RenderError('PAGE_LOAD_TIMEOUT', loadTimeoutMessage('The document', loadTimeoutMs, job.html));
      }
      const params = toPrintParams(job.pdfOptions, { tagged: this.options.taggedPdf, outline: job.outline });
      return await timeStage(job.onStage, 'print', () => printToPdf(page, params));
    } catch (err) {
      // The same ranges fail the same way every time: the version's fault, not the browser's.
      if (/page range/i.test(String((err as Error)?.message))) {
        throw new RenderError(
          'INVALID_TEMPLATE',
          `pdfOptions.pageRanges "${job.pdfOptions.pageRanges}" asks for pages the document does not have`,
        );
      }
      throw err;
    } finally {
      setPageAssets(page, undefined);
    }
  }
}
