// The retry schedule of docs/interface.md#webhook-retries: after a failed attempt, wait 1, 2, 4, 8 then 16 s
// (±10 % jitter so that many deliveries failing together do not retry in lock-step);
// 6 attempts in all, then the delivery is dropped. Pure functions: the delivery worker
// stores `nextAttemptAt = now + delay` so the schedule survives a restart. The back-off rule
// itself is src/ops/backoff.ts's.
import { backoffDelayMs, type BackoffPolicy } from '../ops/backoff.ts';

/** Delay before retry n (index n-1), in milliseconds, before jitter. */
export const RETRY_DELAYS_MS: readonly number[] = [1_000, 2_000, 4_000, 8_000, 16_000];

/** Fraction each delay may move either way. */
export const RETRY_JITTER = 0.1;

export const WEBHOOK_RETRY_BACKOFF: BackoffPolicy = {
  delaysMs: RETRY_DELAYS_MS,
  retries: RETRY_DELAYS_MS.length,
  jitter: RETRY_JITTER,
};

/** The first attempt plus one per retry delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/**
 * How long to wait before the next attempt, given how many attempts were already made
 * (and failed). 0 attempts made: 0 (the first attempt is due now). 1..5: the schedule's
 * delay ±10 %. 6 or more: undefined, meaning the delivery is dropped.
 * `random` returns a number in [0, 1), like Math.random; tests pass a fixed one.
 */
export function nextAttemptDelayMs(attemptsMade: number, random: () => number = Math.random): number | undefined {
  if (!Number.isInteger(attemptsMade) || attemptsMade < 0) {
    throw new RangeError(`attemptsMade must be a whole number >= 0, got ${attemptsMade}`);
  }
  if (attemptsMade === 0) return 0;
  return backoffDelayMs(WEBHOOK_RETRY_BACKOFF, attemptsMade, { random });
}

/** True when no attempt follows this many failed ones: the delivery is dropped. */
export function isExhausted(attemptsMade: number): boolean {
  return attemptsMade >= MAX_ATTEMPTS;
}
