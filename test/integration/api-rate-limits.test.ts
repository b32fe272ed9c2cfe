// The shared rate limiter (src/store/rate-limits-repository.ts) on a real database (CongoDB
// or DOCGEN_TEST_MONGODB_URL): exact under concurrency, shared by separate connections
// (as replicas are), and refilling at the configured rate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoClient, ObjectId, type Db } from 'mongodb';
import { decisionAt, gcra, RateLimitsRepository, unmeteredDecision } from '../../src/store/rate-limits-repository.ts';
import { ensureIndexes } from '../../src/store/documents.ts';
import { startMongo, type TestMongo } from '../harness/dependencies.ts';

let mongo: TestMongo;
const clients: MongoClient[] = [];
let dbs: Db[];

beforeAll(async () => {
  mongo = await startMongo();
  const url = mongo.url;
  // Two clients stand for two API replicas.
  for (let i = 0; i < 2; i++) clients.push(await new MongoClient(url).connect());
  dbs = clients.map((c) => c.db(mongo.database));
  await ensureIndexes(dbs[0]!);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await mongo?.stop();
});

describe('GCRA arithmetic', () => {
  it('admits exactly the burst from a full bucket, then one per interval', () => {
    const policy = { perSecond: 3, burst: 7 };
    let tat: number | undefined;
    const now = 1_000_000;
    const remaining: number[] = [];
    for (let i = 0; i < 7; i++) {
      const step = gcra(tat, now, policy);
      expect(step.decision.allowed).toBe(true);
      remaining.push(step.decision.remaining);
      tat = step.newTat;
    }
    expect(remaining).toEqual([6, 5, 4, 3, 2, 1, 0]);
    const refused = gcra(tat, now, policy);
    expect(refused.decision).toMatchObject({ allowed: false, remaining: 0, limit: 7, retryAfterSeconds: 1 });
    expect(gcra(tat, now + 334, policy).decision.allowed).toBe(true);
    expect(unmeteredDecision(policy, undefined, now)).toMatchObject({ allowed: true, remaining: 7, resetSeconds: 0 });
    expect(decisionAt(now + 5000, now, { perSecond: 0.5, burst: 2 }, false).retryAfterSeconds).toBe(3);
  });
});

describe('RateLimitsRepository', () => {
  it('100 concurrent takes over two connections admit exactly the burst', async () => {
    const key = new ObjectId();
    const repos = dbs.map((db) => new RateLimitsRepository(db));
    const policy = { perSecond: 0.01, burst: 10 };
    const decisions = await Promise.all(Array.from({ length: 100 }, (_, i) => repos[i % 2]!.take(key, policy)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    for (const d of decisions.filter((x) => !x.allowed)) {
      expect(d.remaining).toBe(0);
      expect(d.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    }
    // Remaining is each request's view at its own clock reading: within the budget, down to 0.
    const remaining = decisions.filter((d) => d.allowed).map((d) => d.remaining);
    expect(Math.min(...remaining)).toBe(0);
    expect(Math.max(...remaining)).toBeLessThanOrEqual(9);
  });

  it('refills at the rate and peek spends nothing', async () => {
    const key = new ObjectId();
    const repo = new RateLimitsRepository(dbs[0]!);
    const policy = { perSecond: 20, burst: 2 };
    expect((await repo.take(key, policy)).allowed).toBe(true);
    expect((await repo.take(key, policy)).allowed).toBe(true);
    expect((await repo.take(key, policy)).allowed).toBe(false);
    expect((await repo.peek(key, policy)).remaining).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect((await repo.peek(key, policy)).remaining).toBeGreaterThanOrEqual(1);
    expect((await repo.take(key, policy)).allowed).toBe(true);
    // Keys do not share budgets.
    expect((await repo.take(new ObjectId(), policy)).remaining).toBe(1);
  });
});
