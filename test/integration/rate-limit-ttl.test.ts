// The rate limiter under MongoDB's TTL monitor (test/harness/ttl-simulator.ts deletes what a
// real server's monitor would): a bucket that is busy must never expire, or the next request
// finds no bucket, gets a full burst again, and a client hammering a key gets an extra burst
// every monitor cycle. Three minutes of hammering run on a fast-forwarded clock shared by the
// limiter and the monitor; every request and every delete is real, on the real repository.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoClient, ObjectId, type Db } from 'mongodb';
import { COLLECTIONS, ensureIndexes } from '../../src/store/documents.ts';
import { RateLimitsRepository, type RateLimitPolicy } from '../../src/store/rate-limits-repository.ts';
import { SignInLimiter } from '../../src/identity/sign-in-limiter.ts';
import { isDomainError } from '../../src/domain/errors.ts';
import { startMongo, type TestMongo } from '../harness/dependencies.ts';
import { TtlSimulator } from '../harness/ttl-simulator.ts';

let mongo: TestMongo;
let client: MongoClient;
let db: Db;

beforeAll(async () => {
  mongo = await startMongo();
  client = new MongoClient(mongo.url);
  await client.connect();
  db = client.db(mongo.database);
  await ensureIndexes(db);
});

afterAll(async () => {
  await client?.close();
  await mongo?.stop();
});

/** A clock that only moves when told to. */
function fastForwardClock(start = Date.now()) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('rate limit buckets and the TTL monitor', () => {
  it('a key hammered for 3 minutes gets at most the rate plus one burst, with the monitor sweeping every 5 s', async () => {
    const clock = fastForwardClock();
    const limiter = new RateLimitsRepository(db, { now: clock.now });
    const monitor = new TtlSimulator({ db, now: clock.now });
    // Tolerance 20 s: an idle bucket may go 80 s after it was full; the hammering lasts 180 s,
    // so a bucket that expired while busy would be re-created with a full burst at least once.
    const policy: RateLimitPolicy = { perSecond: 1, burst: 20 };
    const key = new ObjectId();
    const durationMs = 180_000;
    const stepMs = 250;
    const sweepEveryMs = 5_000;
    let allowed = 0;
    let refused = 0;
    const deletedWhileBusy: number[] = [];
    for (let t = 0; t < durationMs; t += stepMs) {
      // Three requests at once: they contend on the bucket, the path the bug was on.
      const decisions = await Promise.all([0, 1, 2].map(() => limiter.take(key, policy)));
      for (const d of decisions) {
        if (d.allowed) allowed++;
        else refused++;
      }
      clock.advance(stepMs);
      if ((t + stepMs) % sweepEveryMs === 0) {
        const deletions = await monitor.sweepOnce();
        if (deletions.some((d) => d.collection === COLLECTIONS.rateLimits)) deletedWhileBusy.push(t + stepMs);
      }
    }
    const bound = policy.burst + (policy.perSecond * durationMs) / 1000;
    expect(deletedWhileBusy, 'the monitor deleted the busy bucket at these times (ms)').toEqual([]);
    expect(allowed).toBeLessThanOrEqual(bound + 1);
    // Hammering at 12 requests a second is refused most of the time, but the rate is granted.
    expect(allowed).toBeGreaterThanOrEqual(bound - 5);
    expect(refused).toBeGreaterThan(allowed);
    expect(monitor.sweeps).toBe(durationMs / sweepEveryMs);

    // Once the key goes quiet, the bucket is full again after its tolerance, and the monitor
    // removes it a minute later (so idle keys do not pile up).
    clock.advance(20_000 + 60_000 + sweepEveryMs);
    const deletions = await monitor.sweepOnce();
    expect(deletions).toContainEqual(expect.objectContaining({ collection: COLLECTIONS.rateLimits, deleted: 1 }));
    expect(await db.collection(COLLECTIONS.rateLimits).countDocuments()).toBe(0);
    // And a fresh bucket is a full burst, as the expired one would have been.
    const fresh = await limiter.take(key, policy);
    expect(fresh).toMatchObject({ allowed: true, remaining: policy.burst - 1 });
  }, 120_000);

  it("the sign-in limiter keeps an email's global cap (100 failures an hour) across the monitor: 35 minutes of guessing get at most 100 + 58 wrong answers", async () => {
    const clock = fastForwardClock();
    const repository = new RateLimitsRepository(db, { now: clock.now });
    const limiter = new SignInLimiter(repository);
    const monitor = new TtlSimulator({ db, now: clock.now });
    const email = `victim-${new ObjectId().toHexString()}@example.com`;
    const durationMs = 35 * 60_000;
    let answeredWrong = 0;
    for (let t = 0; t < durationMs; t += 2_000) {
      // A wrong guess every 2 s, each from a new address: only the email's global cap holds
      // them back (it turns wrong answers into RATE_LIMITED; a right password would pass).
      try {
        const attempt = await limiter.begin(email, `203.0.113.${(t / 2_000) % 250}`);
        attempt.failed();
        answeredWrong++;
      } catch (err) {
        if (!isDomainError(err) || err.code !== 'RATE_LIMITED') throw err;
      }
      clock.advance(2_000);
      // MongoDB's default monitor period.
      if (t % 60_000 === 0) await monitor.sweepOnce();
    }
    // 100 at once, then one every 36 s: 100 + 35 * 60 / 36 = 158.3.
    expect(answeredWrong).toBeLessThanOrEqual(100 + Math.floor(durationMs / 36_000));
    expect(answeredWrong).toBeGreaterThanOrEqual(100 + Math.floor(durationMs / 36_000) - 2);
  }, 120_000);
});
