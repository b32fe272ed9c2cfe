// Retention values (`30d`, minimum one minute) and the sweeper's passes over in-memory
// workspaces and generations: what it erases, in what batches, and that a failing erasure
// neither stops the pass nor makes it spin. The end-to-end check on real parts is
// test/e2e/generation-retention.test.ts.
import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { formatRetention, parseRetention, retentionProblem } from '../../src/domain/retention.ts';
import { RetentionSweeper } from '../../src/generations/retention-sweeper.ts';
import type { GenerationDoc, WorkspaceDoc } from '../../src/store/documents.ts';

describe('retention values', () => {
  it('parses minutes, hours and days into seconds and formats them back', () => {
    expect(parseRetention('1m')).toBe(60);
    expect(parseRetention('12h')).toBe(43_200);
    expect(parseRetention(' 30d ')).toBe(2_592_000);
    expect(formatRetention(2_592_000)).toBe('30d');
    expect(formatRetention(5400)).toBe('90m');
    expect(formatRetention(7200)).toBe('2h');
    expect(formatRetention(61)).toBe('61s');
  });

  it('refuses what is not a retention, saying what is accepted', () => {
    expect(() => parseRetention('30')).toThrow(/m \(minutes\), h \(hours\) or d \(days\)/);
    expect(() => parseRetention('1y')).toThrow(/not valid/);
    expect(() => parseRetention('-1d')).toThrow(/not valid/);
    expect(() => parseRetention('0m')).toThrow(/at least 1m/);
    expect(() => parseRetention('3651d')).toThrow(/at most 3650d/);
    expect(retentionProblem(59)).toMatch(/at least 1m/);
    expect(retentionProblem(60.5)).toMatch(/whole seconds/);
    expect(retentionProblem(60)).toBeUndefined();
  });
});

function generation(
  workspaceId: ObjectId,
  ageMs: number,
  status: GenerationDoc['status'],
  now: number,
  test = false,
): GenerationDoc {
  return { _id: new ObjectId(), workspaceId, status, createdAt: new Date(now - ageMs), test } as GenerationDoc;
}

const finished = (g: GenerationDoc) => g.status === 'COMPLETED' || g.status === 'FAILED';

function fakeStore(now: number) {
  const workspaces: WorkspaceDoc[] = [];
  const generations: GenerationDoc[] = [];
  return {
    workspaces,
    generations,
    deps: {
      workspaces: {
        async withRetention(limit: number, after?: ObjectId) {
          return workspaces
            .filter((w) => (w.retentionSeconds ?? 0) > 0 && (!after || w._id.toHexString() > after.toHexString()))
            .sort((a, b) => a._id.toHexString().localeCompare(b._id.toHexString()))
            .slice(0, limit);
        },
      },
      generations: {
        async findExpired(workspaceId: ObjectId, createdBefore: Date, limit: number) {
          return generations
            .filter((g) => g.workspaceId.equals(workspaceId) && finished(g) && g.createdAt < createdBefore)
            .slice(0, limit);
        },
        async findExpiredTests(createdBefore: Date, limit: number) {
          return generations.filter((g) => g.test && finished(g) && g.createdAt < createdBefore).slice(0, limit);
        },
      },
      testRetentionMs: 86_400_000,
      now: () => now,
    },
  };
}

describe('RetentionSweeper', () => {
  const now = Date.parse('2026-11-23T12:00:00Z');

  it('erases finished generations past their workspace retention only, in batches until none is left', async () => {
    const store = fakeStore(now);
    const hour = { _id: new ObjectId(), name: 'hour', createdAt: new Date(0), retentionSeconds: 3600 };
    const forever = { _id: new ObjectId(), name: 'forever', createdAt: new Date(0) };
    store.workspaces.push(hour, forever);
    const old = Array.from({ length: 7 }, () => generation(hour._id, 2 * 3600_000, 'COMPLETED', now));
    const oldFailed = generation(hour._id, 2 * 3600_000, 'FAILED', now);
    const young = generation(hour._id, 10 * 60_000, 'COMPLETED', now);
    const stillRendering = generation(hour._id, 2 * 3600_000, 'PROCESSING', now);
    const unbounded = generation(forever._id, 365 * 86_400_000, 'COMPLETED', now);
    store.generations.push(...old, oldFailed, young, stillRendering, unbounded);

    const erased: GenerationDoc[] = [];
    const sweeper = new RetentionSweeper({
      ...store.deps,
      intervalMs: 60_000,
      batchSize: 3,
      erase: async (doc) => {
        erased.push(doc);
        store.generations.splice(store.generations.indexOf(doc), 1);
      },
    });
    expect(await sweeper.sweepOnce()).toEqual({ workspaces: 1, erased: 8, failed: 0, batchesErased: 0 });
    expect(new Set(erased.map((g) => g._id.toHexString()))).toEqual(
      new Set([...old, oldFailed].map((g) => g._id.toHexString())),
    );
    expect(store.generations).toEqual([young, stillRendering, unbounded]);
    // Nothing left to do: a second replica sweeping now erases nothing.
    expect(await sweeper.sweepOnce()).toEqual({ workspaces: 1, erased: 0, failed: 0, batchesErased: 0 });
  });

  it('erases test generations after the test retention in every workspace, and no live one with them', async () => {
    const store = fakeStore(now);
    const forever = { _id: new ObjectId(), name: 'forever', createdAt: new Date(0) };
    const week = { _id: new ObjectId(), name: 'week', createdAt: new Date(0), retentionSeconds: 7 * 86_400 };
    store.workspaces.push(forever, week);
    const day = 86_400_000;
    const oldTests = [
      generation(forever._id, day + 60_000, 'COMPLETED', now, true),
      generation(forever._id, 3 * day, 'FAILED', now, true),
      generation(week._id, day + 1, 'COMPLETED', now, true),
    ];
    const youngTest = generation(forever._id, day - 60_000, 'COMPLETED', now, true);
    const renderingTest = generation(forever._id, 2 * day, 'PROCESSING', now, true);
    const oldLive = generation(forever._id, 30 * day, 'COMPLETED', now);
    const liveInWeek = generation(week._id, 2 * day, 'COMPLETED', now);
    store.generations.push(...oldTests, youngTest, renderingTest, oldLive, liveInWeek);
    const erased: GenerationDoc[] = [];
    const sweeper = new RetentionSweeper({
      ...store.deps,
      intervalMs: 60_000,
      batchSize: 2,
      erase: async (doc) => {
        erased.push(doc);
        store.generations.splice(store.generations.indexOf(doc), 1);
      },
    });
    expect(await sweeper.sweepOnce()).toEqual({ workspaces: 1, erased: 3, failed: 0, batchesErased: 0 });
    expect(new Set(erased)).toEqual(new Set(oldTests));
    expect(store.generations).toEqual([youngTest, renderingTest, oldLive, liveInWeek]);
  });

  it('goes on past a failing erasure and leaves it to the next sweep instead of spinning', async () => {
    const store = fakeStore(now);
    const a = {
      _id: new ObjectId('000000000000000000000001'),
      name: 'a',
      createdAt: new Date(0),
      retentionSeconds: 60,
    };
    const b = {
      _id: new ObjectId('000000000000000000000002'),
      name: 'b',
      createdAt: new Date(0),
      retentionSeconds: 60,
    };
    store.workspaces.push(a, b);
    const stuck = generation(a._id, 120_000, 'COMPLETED', now);
    const fine = generation(b._id, 120_000, 'COMPLETED', now);
    store.generations.push(stuck, fine);
    const errors: unknown[] = [];
    let calls = 0;
    const sweeper = new RetentionSweeper({
      ...store.deps,
      intervalMs: 60_000,
      batchSize: 1,
      erase: async (doc) => {
        calls++;
        if (doc === stuck) throw new Error('object storage unavailable');
        store.generations.splice(store.generations.indexOf(doc), 1);
      },
      onError: (err, at) => errors.push([String(err), at.generationId?.toHexString()]),
    });
    expect(await sweeper.sweepOnce()).toEqual({ workspaces: 2, erased: 1, failed: 1, batchesErased: 0 });
    expect(calls).toBe(2);
    expect(errors).toEqual([['Error: object storage unavailable', stuck._id.toHexString()]]);
    expect(store.generations).toEqual([stuck]);
  });
});
