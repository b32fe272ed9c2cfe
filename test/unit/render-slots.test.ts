// RenderSlots: a render process holds more jobs than pages; no more render at once than there
// are pages, the rest wait in arrival order, and a failed render frees its page.
import { describe, expect, it } from 'vitest';
import { RenderSlots, renderJobsInFlight } from '../../src/render/render-slots.ts';

function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('RenderSlots', () => {
  it('runs at most size steps at once, starts the waiting ones in arrival order, and frees a slot when a step fails', async () => {
    const slots = new RenderSlots(2);
    const gates = [deferred(), deferred(), deferred(), deferred()];
    const started: number[] = [];
    const runs = gates.map((gate, i) =>
      slots.run(async () => {
        started.push(i);
        await gate.promise;
        return i;
      }),
    );
    await tick();
    expect(started).toEqual([0, 1]);
    gates[1]!.reject(new Error('print failed'));
    await expect(runs[1]).rejects.toThrow('print failed');
    await tick();
    expect(started).toEqual([0, 1, 2]);
    gates[0]!.resolve();
    await tick();
    expect(started).toEqual([0, 1, 2, 3]);
    gates[2]!.resolve();
    gates[3]!.resolve();
    expect(await Promise.all([runs[0], runs[2], runs[3]])).toEqual([0, 2, 3]);
    // All free again: two more start at once.
    const both = [deferred(), deferred()];
    const again: number[] = [];
    const more = both.map((gate, i) =>
      slots.run(async () => {
        again.push(i);
        await gate.promise;
      }),
    );
    await tick();
    expect(again).toEqual([0, 1]);
    for (const gate of both) gate.resolve();
    await Promise.all(more);
  });

  it('hands a freed slot to the waiter with the lowest priority number, in arrival order within one', async () => {
    const slots = new RenderSlots(1);
    const order: string[] = [];
    const first = deferred();
    const busy = slots.run(async () => {
      order.push('busy');
      await first.promise;
    });
    const waiters = [
      ['heavy-1', 4],
      ['heavy-2', 4],
      ['light', 2],
      ['light-batch', 3],
    ].map(([name, priority]) => slots.run(async () => void order.push(name as string), priority as number));
    await tick();
    first.resolve();
    await Promise.all([busy, ...waiters]);
    expect(order).toEqual(['busy', 'light', 'light-batch', 'heavy-1', 'heavy-2']);
  });

  it('holds half as many jobs again as pages, at least one more', () => {
    expect(renderJobsInFlight(1)).toBe(2);
    expect(renderJobsInFlight(4)).toBe(6);
    expect(renderJobsInFlight(5)).toBe(8);
  });
});
