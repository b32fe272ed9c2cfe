import { describe, expect, it } from 'vitest';
import { isExhausted, MAX_ATTEMPTS, nextAttemptDelayMs, RETRY_DELAYS_MS } from '../../src/webhooks/retry-schedule.ts';

describe('webhook retry schedule', () => {
  it('is 1, 2, 4, 8, 16 s after failed attempts 1..5, then dropped after the 6th', () => {
    const mid = () => 0.5; // no jitter
    expect([1, 2, 3, 4, 5].map((n) => nextAttemptDelayMs(n, mid))).toEqual([1000, 2000, 4000, 8000, 16000]);
    expect(nextAttemptDelayMs(6, mid)).toBeUndefined();
    expect(nextAttemptDelayMs(7, mid)).toBeUndefined();
    expect(MAX_ATTEMPTS).toBe(6);
    expect(RETRY_DELAYS_MS).toEqual([1000, 2000, 4000, 8000, 16000]);
  });

  it('schedules the first attempt immediately', () => {
    expect(nextAttemptDelayMs(0)).toBe(0);
  });

  it('keeps jitter within ±10 %', () => {
    expect(nextAttemptDelayMs(1, () => 0)).toBe(900);
    expect(nextAttemptDelayMs(1, () => 0.999999)).toBe(1100);
    expect(nextAttemptDelayMs(5, () => 0)).toBe(14400);
    expect(nextAttemptDelayMs(5, () => 1)).toBe(17600);
    // A broken random source cannot push a delay outside the bounds.
    expect(nextAttemptDelayMs(2, () => 42)).toBe(2200);
    expect(nextAttemptDelayMs(2, () => Number.NaN)).toBe(1800);
    for (let i = 0; i < 1000; i++) {
      const d = nextAttemptDelayMs(3)!;
      expect(d).toBeGreaterThanOrEqual(3600);
      expect(d).toBeLessThanOrEqual(4400);
    }
  });

  it('rejects nonsense attempt counts', () => {
    expect(() => nextAttemptDelayMs(-1)).toThrow(RangeError);
    expect(() => nextAttemptDelayMs(1.5)).toThrow(RangeError);
  });

  it('says when a delivery is exhausted', () => {
    expect(isExhausted(5)).toBe(false);
    expect(isExhausted(6)).toBe(true);
  });
});
