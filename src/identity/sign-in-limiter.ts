// Limits failed sign-ins without letting a stranger lock a person out. Three GCRA buckets in
// MongoDB (the API-key rate limiter's store), so every replica shares them:
//   - per email AND client address (10 failures in 15 min): a guesser at one address is slowed
//     down on that email, and only there;
//   - per client address (10 failures in 15 min, whatever the email): one address spraying
//     many emails;
//   - per email from anywhere (100 failures an hour): a looser global cap, which correct
//     credentials pass. Once it is spent, wrong passwords answer RATE_LIMITED instead of
//     "wrong", but the right password still signs in, so failures from other addresses
//     never block the real user.
// The two per-address buckets are spent before the password is checked (concurrent guesses
// cannot overspend); a successful sign-in gives every spend back, so only failures count.
// Unknown emails count like known ones: the answer never tells which emails exist. The
// client address is the TCP peer, or behind an ingress the `X-Forwarded-For` entry
// DOCGEN_PORTAL_TRUSTED_PROXY_HOPS from the right (docs/deploy.md#security).
import type { ObjectId } from 'mongodb';
import { DomainError } from '../domain/errors.ts';
import { deterministicObjectId } from '../domain/ids.ts';
import type { RateLimitPolicy, RateLimitsRepository } from '../store/rate-limits-repository.ts';

export interface SignInLimits {
  /** Failed attempts allowed within the window, per email and address, and per address. */
  attempts: number;
  windowSeconds: number;
  /** Failed attempts per email from all addresses together within `emailWindowSeconds`. */
  emailAttempts: number;
  emailWindowSeconds: number;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = {
  attempts: 10,
  windowSeconds: 15 * 60,
  emailAttempts: 100,
  emailWindowSeconds: 60 * 60,
};

export interface SignInAttempt {
  /** Call when the credentials were right: the attempt does not count. */
  succeeded(): Promise<void>;
  /** Call when they were wrong: throws RATE_LIMITED when the email's global cap is spent. */
  failed(): void;
}

const rateLimited = (retryAfterSeconds: number) =>
  new DomainError('RATE_LIMITED', `Too many failed sign-ins; try again in ${retryAfterSeconds} s`, {
    retryAfterSeconds,
  });

export class SignInLimiter {
  private readonly rateLimits: RateLimitsRepository;
  private readonly policy: RateLimitPolicy;
  private readonly emailPolicy: RateLimitPolicy;
  constructor(rateLimits: RateLimitsRepository, limits: Partial<SignInLimits> = {}) {
    const l = { ...DEFAULT_SIGN_IN_LIMITS, ...limits };
    this.rateLimits = rateLimits;
    this.policy = { perSecond: l.attempts / l.windowSeconds, burst: l.attempts };
    this.emailPolicy = { perSecond: l.emailAttempts / l.emailWindowSeconds, burst: l.emailAttempts };
  }

  /**
   * Spends one attempt for the address and for the email at that address, or throws
   * RATE_LIMITED with Retry-After; also spends from the email's global cap, whose exhaustion
   * only counts against a wrong password (SignInAttempt.failed).
   */
  async begin(email: string, clientAddress: string): Promise<SignInAttempt> {
    const buckets: ObjectId[] = [
      deterministicObjectId('sign-in:address', clientAddress),
      deterministicObjectId('sign-in:email-address', email, clientAddress),
    ];
    const spent: ObjectId[] = [];
    for (const bucket of buckets) {
      const decision = await this.rateLimits.take(bucket, this.policy);
      if (!decision.allowed) {
        await Promise.all(spent.map((b) => this.rateLimits.refund(b, this.policy)));
        throw rateLimited(decision.retryAfterSeconds);
      }
      spent.push(bucket);
    }
    const emailBucket = deterministicObjectId('sign-in:email', email);
    const global = await this.rateLimits.take(emailBucket, this.emailPolicy);
    return {
      succeeded: async () => {
        await Promise.all([
          ...spent.map((b) => this.rateLimits.refund(b, this.policy)),
          ...(global.allowed ? [this.rateLimits.refund(emailBucket, this.emailPolicy)] : []),
        ]);
      },
      failed: () => {
        if (!global.allowed) throw rateLimited(global.retryAfterSeconds);
      },
    };
  }
}
