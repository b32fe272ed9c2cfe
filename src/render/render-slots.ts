// How many render jobs a process holds, and how many of them render at once.
//
// A job spends part of its time outside Chromium: claim, template, upload, final state, event,
// ack and the next pull (25 to 40 ms per job on the embedded stack, more where the database
// and the object store are across a network). With one job per page, the page stands idle
// that long for every job. So a render process holds a few more jobs than it has pages
// (pulled only while it has room for them: still backpressure), and RenderSlots lets as many
// render at a time as there are pages: the extra jobs wait for a page of this process's own
// (the preview pages stay free for previews), and start printing the moment one is free. Time
// spent waiting is the render stage `page_wait`. On the 2-core machine the CPU is the limit
// either way (about 9 % idle at 16 clients), so throughput there did not change measurably.
// The fair puller's reserve slot (src/queue/fair-puller.ts) may hold one job more, of a
// workspace holding no other job here.

/** Jobs a render process holds for `pages` job pages: the pages plus half as many again. */
export function renderJobsInFlight(pages: number): number {
  return pages + Math.max(1, Math.ceil(pages / 2));
}

/**
 * At most `size` steps run at once; the others wait, lowest `priority` first and in arrival
 * order within one priority. The render role gives a job of a workspace with fewer jobs in
 * this process a lower number, so a light workspace's job that was pulled while a heavy one's
 * extra jobs wait for a page does not wait behind them (fair scheduling, beyond the pull).
 */
export class RenderSlots {
  private readonly size: number;
  private busy = 0;
  private readonly waiting: Array<{ priority: number; resume: () => void }> = [];

  constructor(size: number) {
    if (!(size >= 1)) throw new RangeError('RenderSlots: size must be >= 1');
    this.size = size;
  }

  async run<T>(step: () => Promise<T>, priority = 0): Promise<T> {
    if (this.busy < this.size) this.busy += 1;
    else
      await new Promise<void>((resume) => {
        // The slot is handed over; insert after every waiter of the same or a lower number.
        const at = this.waiting.findIndex((w) => w.priority > priority);
        this.waiting.splice(at === -1 ? this.waiting.length : at, 0, { priority, resume });
      });
    try {
      return await step();
    } finally {
      const next = this.waiting.shift();
      if (next) next.resume();
      else this.busy -= 1;
    }
  }
}
