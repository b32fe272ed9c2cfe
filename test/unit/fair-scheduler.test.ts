// The fair scheduler's choices (src/queue/fair-scheduler.ts): equal shares by default, shares by
// weight, single generations before batch items, a newcomer served within one round, lanes
// found empty backed off until a publish or a later listing, unless a publish came while the look
// was on its way.
import { describe, expect, it } from 'vitest';
import { FairScheduler } from '../../src/queue/fair-scheduler.ts';

type Lane = 'single' | 'batch';

function scheduler(weights: Record<string, number> = {}) {
  return new FairScheduler<Lane>({ lanes: ['single', 'batch'], weightOf: (t) => weights[t] ?? 1 });
}

function picks(s: FairScheduler<Lane>, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = s.next();
    out.push(key ? `${key.tenant}.${key.lane}` : '-');
  }
  return out;
}

describe('FairScheduler', () => {
  it('alternates between two workspaces with work, whatever their backlogs', () => {
    const s = scheduler();
    s.markReady({ tenant: 'A', lane: 'batch' });
    s.markReady({ tenant: 'B', lane: 'single' });
    const counts = picks(s, 100).reduce<Record<string, number>>((acc, p) => ({ ...acc, [p]: (acc[p] ?? 0) + 1 }), {});
    expect(counts).toEqual({ 'A.batch': 50, 'B.single': 50 });
  });

  it('shares by weight: weight 3 gets three jobs for every one of weight 1', () => {
    const s = scheduler({ A: 3 });
    s.markReady({ tenant: 'A', lane: 'single' });
    s.markReady({ tenant: 'B', lane: 'single' });
    const got = picks(s, 40);
    expect(got.filter((p) => p === 'A.single')).toHaveLength(30);
    expect(got.filter((p) => p === 'B.single')).toHaveLength(10);
  });

  it("serves a workspace's single generations before its batch items", () => {
    const s = scheduler();
    s.markReady({ tenant: 'A', lane: 'batch' });
    s.markReady({ tenant: 'A', lane: 'single' });
    expect(picks(s, 3)).toEqual(['A.single', 'A.single', 'A.single']);
    s.markEmpty({ tenant: 'A', lane: 'single' }, 0);
    expect(picks(s, 2)).toEqual(['A.batch', 'A.batch']);
  });

  it('serves a workspace that gets work within one round, however many jobs the others have', () => {
    const s = scheduler();
    for (const t of ['A', 'C', 'D']) s.markReady({ tenant: t, lane: 'batch' });
    picks(s, 7);
    s.markReady({ tenant: 'B', lane: 'single' });
    const next = picks(s, 4);
    expect(next).toContain('B.single');
  });

  it('passes over a workspace whose ready lanes may not be pulled now, keeping its credit and its place', () => {
    const s = scheduler();
    s.markReady({ tenant: 'A', lane: 'batch' });
    s.markReady({ tenant: 'B', lane: 'single' });
    s.markReady({ tenant: 'B', lane: 'batch' });
    let bPullable = false;
    const pullable = (key: { tenant: string; lane: string }) => key.tenant !== 'B' || bPullable;
    const got: string[] = [];
    for (let i = 0; i < 4; i++) {
      const key = s.next(pullable);
      got.push(key ? `${key.tenant}.${key.lane}` : '-');
    }
    // B's pulls are all on their way: A alone is served meanwhile...
    expect(got).toEqual(['A.batch', 'A.batch', 'A.batch', 'A.batch']);
    // ...and nothing at all when A's lane may not be pulled either.
    expect(s.next(() => false)).toBeUndefined();
    expect(s.readyTenants().sort()).toEqual(['A', 'B']);
    // Then B takes its turns again, single generations first.
    bPullable = true;
    const next = [s.next(pullable), s.next(pullable)].map((k) => `${k!.tenant}.${k!.lane}`);
    expect(next).toContain('B.single');
    expect(next).toContain('A.batch');
  });

  it('gives the reserve a workspace it accepts, in turn order, without charging or moving the round', () => {
    const s = scheduler();
    s.markReady({ tenant: 'A', lane: 'batch' });
    s.markReady({ tenant: 'B', lane: 'single' });
    expect(s.nextAmong((t) => t === 'B')).toMatchObject({ tenant: 'B', lane: 'single' });
    expect(s.nextAmong((t) => t === 'C')).toBeUndefined();
    expect(
      s.nextAmong(
        () => true,
        (k) => k.tenant !== 'A',
      ),
    ).toMatchObject({ tenant: 'B' });
    // The round goes on as if the reserve had not looked: equal turns.
    expect(picks(s, 4).sort()).toEqual(['A.batch', 'A.batch', 'B.single', 'B.single']);
  });

  it('refunds a pull that found nothing and drops the lane until a publish', () => {
    const s = scheduler();
    s.markReady({ tenant: 'A', lane: 'single' });
    const key = s.next()!;
    s.refund(key.tenant);
    s.markEmpty(key, 1_000);
    expect(s.next()).toBeUndefined();
    s.markReady({ tenant: 'A', lane: 'single' });
    expect(s.next()).toMatchObject({ tenant: 'A', lane: 'single' });
  });

  it('looks again at a listed lane found empty only after its back-off (1, 2, 4 s)', () => {
    const s = scheduler();
    const key = { tenant: 'A', lane: 'single' as const };
    s.markListed(key, 0);
    expect(s.next()).toMatchObject(key);
    s.markEmpty(key, 0);
    s.markListed(key, 999);
    expect(s.next()).toBeUndefined();
    s.markListed(key, 1_000);
    expect(s.next()).toMatchObject(key);
    s.markEmpty(key, 1_000);
    s.markListed(key, 2_999);
    expect(s.next()).toBeUndefined();
    s.markListed(key, 3_000);
    expect(s.next()).toMatchObject(key);
  });

  it('rests a lane a pull left without undelivered jobs, and forgets lanes no longer listed', () => {
    const s = scheduler();
    const key = { tenant: 'A', lane: 'single' as const };
    s.markReady(key);
    s.markDelivered(s.next()!, false, 0);
    expect(s.next()).toBeUndefined();
    expect(s.knownLanes).toBe(1);
    s.forgetExcept(new Set(), (k) => `${k.tenant}.${k.lane}`);
    expect(s.knownLanes).toBe(0);
  });
  it('keeps a lane ready when a publish is seen while a look at it is on its way', () => {
    const s = scheduler();
    const key = { tenant: 'A', lane: 'single' as const };
    // A look answers "none", but the publish of a new job was seen before the answer: the
    // answer may predate the job, so the lane is looked at again at once.
    s.markReady(key);
    const look = s.next()!;
    s.markReady(key);
    s.refund(look.tenant);
    s.markEmpty(look, 0);
    const again = s.next()!;
    expect(again).toMatchObject(key);
    // Without a publish in between, "none" rests the lane.
    s.refund(again.tenant);
    s.markEmpty(again, 0);
    expect(s.next()).toBeUndefined();
    // A delivery that left "none behind" does not rest the lane if a publish came meanwhile.
    s.markReady(key);
    const delivered = s.next()!;
    s.markReady(key);
    s.markDelivered(delivered, false, 0);
    expect(s.next()).toMatchObject(key);
  });
});
