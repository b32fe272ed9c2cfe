// A GCRA rate limiter whose state lives in MongoDB, so every API replica shares one budget
// per key. A decision is one or two single-document atomic updates, with no read-modify-write loop:
// many requests of one key at once (one client with 50 connections) never contend into
// retries, and no replica can spend what another already spent.
import type { Db, ObjectId } from 'mongodb';
import { deterministicObjectId } from '../domain/ids.ts';
import { COLLECTIONS, type RateLimitDoc } from './documents.ts';
import { isDuplicateKeyError as isDuplicateKey } from './mongo.ts';

export interface RateLimitPolicy {
  perSecond: number;
  burst: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds to wait before a retry can succeed (when refused), at least 1. */
  retryAfterSeconds: number;
}

/** How long after a bucket is full again its row may go (the TTL monitor runs every 60 s anyway). */
const IDLE_GRACE_MS = 60_000;

/** Floating-point slack (ms) so that exactly `burst` requests fit in a full bucket. */
const EPSILON_MS = 0.001;

/** The answer for a bucket whose theoretical arrival time is `tat` (after this request). */
export function decisionAt(tat: number, now: number, policy: RateLimitPolicy, allowed: boolean): RateLimitDecision {
  const interval = 1000 / policy.perSecond;
  const tolerance = interval * policy.burst;
  const ahead = Math.max(0, tat - now);
  return {
    allowed,
    limit: policy.burst,
    remaining: Math.max(0, Math.min(policy.burst, Math.floor((tolerance - ahead + EPSILON_MS) / interval))),
    resetSeconds: Math.ceil(ahead / 1000),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((ahead + interval - tolerance) / 1000)),
  };
}

/** Pure GCRA step: what the new theoretical arrival time and the answer are. */
export function gcra(
  tat: number | undefined,
  now: number,
  policy: RateLimitPolicy,
): { decision: RateLimitDecision; newTat: number } {
  const interval = 1000 / policy.perSecond;
  const tolerance = interval * policy.burst;
  const base = Math.max(tat ?? now, now);
  const allowed = base + interval - now <= tolerance + EPSILON_MS;
  const newTat = allowed ? base + interval : base;
  return { decision: decisionAt(newTat, now, policy, allowed), newTat };
}

export interface RateLimitsOptions {
  /** The clock (epoch ms); tests fast-forward it. Default Date.now. */
  now?: () => number;
}

export class RateLimitsRepository {
  private readonly collection;
  private readonly now: () => number;
  constructor(db: Db, options: RateLimitsOptions = {}) {
    this.collection = db.collection<RateLimitDoc>(COLLECTIONS.rateLimits);
    this.now = options.now ?? Date.now;
  }

  async take(apiKeyId: ObjectId, policy: RateLimitPolicy): Promise<RateLimitDecision> {
    const _id = deterministicObjectId('rate', apiKeyId.toHexString());
    const interval = 1000 / policy.perSecond;
    const tolerance = interval * policy.burst;
    const now = this.now();
    // A bucket is forgotten (TTL index) a minute after it would be full again: missing and full
    // are the same answer then. Every write that moves `tat` also moves `expiresAt`, so it stays
    // at least a minute past `tat`: both paths below leave tat <= now + tolerance. A bucket still
    // in use must never expire, or the next request would find a full burst again.
    const expiresAt = new Date(now + tolerance + IDLE_GRACE_MS);
    // 1. Fast path, one update: a bucket whose clock is behind now is full, so this request is
    // allowed and the clock moves to now + interval (created by the upsert if missing). A bucket
    // that is not behind makes the upsert collide with the existing _id: go to step 2.
    try {
      const fresh = await this.collection.findOneAndUpdate(
        { _id, tat: { $lt: now } },
        { $set: { tat: now + interval, expiresAt } },
        { upsert: true, returnDocument: 'after' },
      );
      if (fresh) return decisionAt(fresh.tat, now, policy, true);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    // 2. Spend one interval if the bucket stays within its tolerance: one conditional update,
    // atomic on the document, so concurrent requests on any replica cannot overspend.
    const spent = await this.collection.findOneAndUpdate(
      { _id, tat: { $lte: now + tolerance - interval + EPSILON_MS } },
      { $inc: { tat: interval }, $set: { expiresAt } },
      { returnDocument: 'after' },
    );
    if (spent) return decisionAt(spent.tat, now, policy, true);
    const current = await this.collection.findOne({ _id });
    return decisionAt(current?.tat ?? now, now, policy, false);
  }

  /** Gives one request's worth back (e.g. a sign-in attempt that succeeded after all). */
  async refund(apiKeyId: ObjectId, policy: RateLimitPolicy): Promise<void> {
    const _id = deterministicObjectId('rate', apiKeyId.toHexString());
    await this.collection.updateOne({ _id }, { $inc: { tat: -1000 / policy.perSecond } });
  }

  /** The key's current state without spending from it (for answers that do not count). */
  async peek(apiKeyId: ObjectId, policy: RateLimitPolicy): Promise<RateLimitDecision> {
    const doc = await this.collection.findOne({ _id: deterministicObjectId('rate', apiKeyId.toHexString()) });
    return unmeteredDecision(policy, doc?.tat, this.now());
  }
}

/** What a request that is not counted sees: the policy and the budget left, nothing spent. */
export function unmeteredDecision(policy: RateLimitPolicy, tat?: number, now = Date.now()): RateLimitDecision {
  return decisionAt(tat ?? now, now, policy, true);
}
