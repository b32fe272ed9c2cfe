// puppeteer-cluster concurrency model (its documented extension point) that keeps one page per
// cluster worker and reuses it for every job (puppeteer-cluster's own models open and close a
// page or context per job, which halves throughput). A page is replaced after a failed render
// (state unknown) and when its browser is retired or gone.
//
// A job gets the free page that was used last, whichever worker runs it: the pages are a stack
// shared by the workers (FreeSlots). Each page has a renderer process of its own, and
// puppeteer-cluster hands jobs to the worker that has been free longest, so with pages tied to
// workers every job below full load would land on the renderer idle longest, its caches gone
// cold while the others printed. Last in, first out keeps one renderer printing while it is
// warm; at full load every page is busy either way (docs/architecture.md, print path).
//
// Two puppeteer-cluster behaviours this has to absorb:
// - Worker.handle() adds a page 'error' listener per job and never removes it: with a reused
//   page they would pile up, so release() removes them.
// - If jobInstance() keeps throwing, Worker.handle() throws out of Cluster.doWork(), an
//   unhandled rejection that nobody awaits (the job never settles). So lease() never throws:
//   when no page can be had it hands out a placeholder that the task recognises and turns
//   into a transient BROWSER_UNAVAILABLE error.

import type { LaunchOptions, Page } from 'puppeteer';
import { withTimeout, type BrowserHost, type HostedSlot, type ManagedBrowser } from './browser-host.ts';
import {
  ConcurrencyImplementation,
  type ConcurrencyImplementationClassType,
  type JobInstance,
  type WorkerInstance,
} from './puppeteer-cluster-adapter.ts';

const PAGE_OPEN_TIMEOUT_MS = 15_000;
const PAGE_CLOSE_TIMEOUT_MS = 5_000;
const LEASE_ATTEMPTS = 3;

const placeholders = new WeakMap<object, unknown>();
const slotsByPage = new WeakMap<Page, PageSlot>();

/** The error behind a placeholder page, or undefined for a real page. */
export function unavailableReason(page: Page): unknown {
  return placeholders.get(page);
}

export function slotOf(page: Page): PageSlot | undefined {
  return slotsByPage.get(page);
}

function placeholderPage(reason: unknown): Page {
  const page = {
    on: () => page,
    once: () => page,
    off: () => page,
    removeAllListeners: () => page,
  };
  placeholders.set(page, reason);
  return page as unknown as Page;
}

export type PreparePage = (page: Page) => Promise<void>;

/** One reusable page, owned by one puppeteer-cluster worker. */
export class PageSlot implements HostedSlot {
  page: Page | null = null;
  owner: ManagedBrowser | null = null;
  busy = false;
  /** Set when the page's state is unknown (failed render): it is closed, not reused. */
  discard = false;
  private readonly host: BrowserHost;
  private readonly prepare: PreparePage;

  constructor(host: BrowserHost, prepare: PreparePage) {
    this.host = host;
    this.prepare = prepare;
    host.slots.add(this);
  }

  async lease(): Promise<JobInstance> {
    this.busy = true;
    try {
      const page = await this.ensurePage();
      return { resources: { page }, close: () => this.release() };
    } catch (err) {
      this.busy = false;
      return {
        resources: { page: placeholderPage(err) },
        close: async () => {},
      };
    }
  }

  async dropPage(): Promise<void> {
    const page = this.page;
    const owner = this.owner;
    this.page = null;
    this.owner = null;
    this.discard = false;
    if (!page || !owner) return;
    slotsByPage.delete(page);
    if (!owner.dead && !page.isClosed()) {
      try {
        await withTimeout(page.close({ runBeforeUnload: false }), PAGE_CLOSE_TIMEOUT_MS, 'closing a page');
      } catch {
        // A page that will not close means a browser in trouble: replace the browser.
        this.host.retire(owner, 'error');
      }
    }
    this.host.pageReleased(owner);
  }

  async dispose(): Promise<void> {
    this.host.slots.delete(this);
    await this.dropPage();
  }

  private async release(): Promise<void> {
    const page = this.page;
    const owner = this.owner;
    // Listeners added for this job only (puppeteer-cluster's and the task's crash listener).
    page?.removeAllListeners('error');
    if (this.discard || (owner && !owner.usable)) await this.dropPage();
    this.busy = false;
  }

  private stale(): boolean {
    return this.discard || !this.owner?.usable || (this.page?.isClosed() ?? true);
  }

  private async ensurePage(): Promise<Page> {
    let lastError: unknown;
    for (let attempt = 0; attempt < LEASE_ATTEMPTS; attempt++) {
      if (this.page && this.stale()) await this.dropPage();
      if (this.page) return this.page;
      const owner = await this.host.acquire();
      let page: Page | undefined;
      try {
        page = await withTimeout(owner.context.newPage(), PAGE_OPEN_TIMEOUT_MS, 'opening a page');
        owner.openPages += 1;
        this.host.counters.pagesOpened += 1;
        this.page = page;
        this.owner = owner;
        slotsByPage.set(page, this);
        await withTimeout(this.prepare(page), PAGE_OPEN_TIMEOUT_MS, 'preparing a page');
        return page;
      } catch (err) {
        lastError = err;
        if (page) this.discard = true;
        // A live browser that cannot open a page is not healthy.
        if (!owner.dead) this.host.retire(owner, 'error');
      }
    }
    throw lastError;
  }
}

/**
 * The free pages, last released on top. There is a slot per worker and a worker holds at most
 * one slot at a time (it gives it back before puppeteer-cluster counts it free again), so a
 * worker asking for one always finds one.
 */
class FreeSlots {
  private readonly stack: PageSlot[] = [];

  /** A new slot has no page yet: it goes to the bottom, used after the warm ones. */
  add(slot: PageSlot): void {
    this.stack.unshift(slot);
  }

  take(): PageSlot {
    const slot = this.stack.pop();
    if (!slot) throw new Error('no free page slot: a worker asked for a second page');
    return slot;
  }

  giveBack(slot: PageSlot): void {
    this.stack.push(slot);
  }
}

/** The class puppeteer-cluster instantiates (`concurrency` option), bound to a BrowserHost. */
export function reusedPageConcurrency(host: BrowserHost, prepare: PreparePage): ConcurrencyImplementationClassType {
  return class ReusedPageConcurrency extends ConcurrencyImplementation {
    private readonly free = new FreeSlots();

    constructor(options: LaunchOptions, puppeteer: unknown) {
      super(options, puppeteer);
    }

    async init(): Promise<void> {
      await host.start();
    }

    async close(): Promise<void> {
      await host.stop();
    }

    async workerInstance(): Promise<WorkerInstance> {
      const free = this.free;
      const own = new PageSlot(host, prepare);
      free.add(own);
      // The slot this worker's current (or last) job has.
      let leased: PageSlot | undefined;
      return {
        jobInstance: async (): Promise<JobInstance> => {
          const slot = free.take();
          leased = slot;
          const job = await slot.lease();
          return {
            resources: job.resources,
            close: async () => {
              try {
                await job.close();
              } finally {
                free.giveBack(slot);
              }
            },
          };
        },
        // The worker's own slot: the cluster closes every worker when it closes.
        close: () => own.dispose(),
        repair: async () => {
          if (leased) leased.discard = true;
        },
      };
    }
  };
}
