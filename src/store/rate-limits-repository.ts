// A GCRA rate limiter whose state lives in MongoDB, so every API replica shares one budget
// per key. Each decision is a compare-and-set on one document (no transactions needed).
import { randomUUID } from 'node:crypto';
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

/** Pure GCRA step: what the new theoretical arrival time and the answer are. */
export function gcra(tat: number | undefined, now: number, policy: RateLimitPolicy): { decision: RateLimitDecision; newTat: number } {
  const interval = 1000 / policy.perSecond;
  const tolerance = interval * policy.burst;
  const base = Math.max(tat ?? now, now);
  const newTat = base + interval;
  const allowed = newTat - now <= tolerance;
  const effectiveTat = allowed ? newTat : base;
  const remaining = Math.max(0, Math.floor((tolerance - (effectiveTat - now)) / interval));
  const resetSeconds = Math.max(0, Math.ceil((effectiveTat - now) / 1000));
  const retryAfterSeconds = allowed ? 0 : Math.max(1, Math.ceil((newTat - now - tolerance) / 1000));
  return { decision: { allowed, limit: policy.burst, remaining, resetSeconds, retryAfterSeconds }, newTat: effectiveTat };
}

export class RateLimitsRepository {
  private readonly collection;
  constructor(db: Db) {
    this.collection = db.collection<RateLimitDoc>(COLLECTIONS.rateLimits);
  }

  async take(apiKeyId: ObjectId, policy: RateLimitPolicy): Promise<RateLimitDecision> {
    const _id = deterministicObjectId('rate', apiKeyId.toHexString());
    for (let tries = 0; tries < 50; tries++) {
      const now = Date.now();
      const doc = await this.collection.findOne({ _id });
      const { decision, newTat } = gcra(doc?.tat, now, policy);
      if (!decision.allowed) return decision;
      const expiresAt = new Date(newTat + 60_000);
      if (!doc) {
        try {
          await this.collection.insertOne({ _id, tat: newTat, rev: randomUUID(), expiresAt });
          return decision;
        } catch (err) {
          if (isDuplicateKey(err)) continue;
          throw err;
        }
      }
      // Compare-and-set on a random revision string: exact on every server, unlike a float.
      const result = await this.collection.updateOne({ _id, rev: doc.rev }, { $set: { tat: newTat, rev: randomUUID(), expiresAt } });
      if (result.modifiedCount === 1) return decision;
      // Another replica moved the bucket between our read and write: decide again.
    }
    throw new Error('rate limiter contention did not settle');
  }

  /** The key's current state without spending from it (for answers that do not count). */
  async peek(apiKeyId: ObjectId, policy: RateLimitPolicy): Promise<RateLimitDecision> {
    const doc = await this.collection.findOne({ _id: deterministicObjectId('rate', apiKeyId.toHexString()) });
    return unmeteredDecision(policy, doc?.tat, Date.now());
  }
}

/** What a request that is not counted sees: the policy and the budget left, nothing spent. */
export function unmeteredDecision(policy: RateLimitPolicy, tat?: number, now = Date.now()): RateLimitDecision {
  const interval = 1000 / policy.perSecond;
  const used = Math.max(0, (tat ?? now) - now);
  return {
    allowed: true,
    limit: policy.burst,
    remaining: Math.max(0, Math.min(policy.burst, Math.floor((interval * policy.burst - used) / interval))),
    resetSeconds: Math.ceil(used / 1000),
    retryAfterSeconds: 0,
  };
}
