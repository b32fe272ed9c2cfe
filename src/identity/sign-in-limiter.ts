// Limits failed sign-ins per email and per client address (by default 10 in 15 minutes; the
// budget refills one attempt every 90 s). Buckets are GCRA buckets in MongoDB (the API-key
// rate limiter's store), so every replica shares them. An attempt spends from both buckets
// before the password is checked (concurrent guesses cannot overspend) and a successful
// sign-in gives its spend back, so only failures count. Unknown emails count like known
// ones: the answer never tells which emails exist.
import type { ObjectId } from 'mongodb';
import { DomainError } from '../domain/errors.ts';
import { deterministicObjectId } from '../domain/ids.ts';
import type { RateLimitPolicy, RateLimitsRepository } from '../store/rate-limits-repository.ts';

export interface SignInLimits {
  /** Failed attempts allowed within the window. */
  attempts: number;
  windowSeconds: number;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = { attempts: 10, windowSeconds: 15 * 60 };

export interface SignInAttempt {
  /** Call when the credentials were right: the attempt does not count. */
  succeeded(): Promise<void>;
}

export class SignInLimiter {
  private readonly rateLimits: RateLimitsRepository;
  private readonly policy: RateLimitPolicy;
  constructor(rateLimits: RateLimitsRepository, limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS) {
    this.rateLimits = rateLimits;
    this.policy = { perSecond: limits.attempts / limits.windowSeconds, burst: limits.attempts };
  }

  /** Spends one attempt for the email and the address, or throws RATE_LIMITED with Retry-After. */
  async begin(email: string, clientAddress: string): Promise<SignInAttempt> {
    const buckets: ObjectId[] = [
      deterministicObjectId('sign-in:address', clientAddress),
      deterministicObjectId('sign-in:email', email),
    ];
    const spent: ObjectId[] = [];
    for (const bucket of buckets) {
      const decision = await this.rateLimits.take(bucket, this.policy);
      if (!decision.allowed) {
        await Promise.all(spent.map((b) => this.rateLimits.refund(b, this.policy)));
        throw new DomainError(
          'RATE_LIMITED',
          `Too many failed sign-ins; try again in ${decision.retryAfterSeconds} s`,
          {
            retryAfterSeconds: decision.retryAfterSeconds,
          },
        );
      }
      spent.push(bucket);
    }
    return {
      succeeded: async () => {
        await Promise.all(spent.map((b) => this.rateLimits.refund(b, this.policy)));
      },
    };
  }
}
