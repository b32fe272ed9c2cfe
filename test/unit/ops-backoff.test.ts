// The one back-off rule (src/ops/backoff.ts) and the four schedules configured with it, which
// stay exactly as documented.
import { describe, expect, it } from 'vitest';
import { DEPENDENCY_WAIT_BACKOFF } from '../../src/app/wait-for-dependency.ts';
import { backoffDelayMs } from '../../src/ops/backoff.ts';
import { RENDER_RETRY_BACKOFF } from '../../src/render/render-pipeline.ts';
import { EndpointLimiter } from '../../src/webhooks/endpoint-limiter.ts';
import { WEBHOOK_RETRY_BACKOFF } from '../../src/webhooks/retry-schedule.ts';

const middle = () => 0.5;
const delays = (policy: Parameters<typeof backoffDelayMs>[0], count: number) =>
  Array.from({ length: count }, (_, i) => backoffDelayMs(policy, i + 1, { random: middle }));

describe('back-off', () => {
  it('follows explicit delays, then repeats the last, or stops after the last retry', () => {
    expect(delays({ delaysMs: [10, 20, 30] }, 5)).toEqual([10, 20, 30, 30, 30]);
    expect(delays({ delaysMs: [10, 20, 30], retries: 3 }, 5)).toEqual([10, 20, 30, undefined, undefined]);
  });

  it('grows by a factor from a first delay up to a cap, and never below a floor given now', () => {
    expect(delays({ firstMs: 100, maxMs: 1000 }, 6)).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(delays({ firstMs: 100, factor: 3 }, 4)).toEqual([100, 300, 900, 2700]);
    expect(backoffDelayMs({ firstMs: 100, maxMs: 1000 }, 2_000)).toBe(1000); // no overflow
    expect(backoffDelayMs({ firstMs: 100, maxMs: 1000 }, 1, { atLeastMs: 700 })).toBe(700);
    expect(backoffDelayMs({ firstMs: 100, maxMs: 1000 }, 1, { atLeastMs: 5000 })).toBe(1000);
  });

  it('moves a delay by at most its jitter, even with a bad random source', () => {
    const policy = { delaysMs: [1000], jitter: 0.1 };
    expect(backoffDelayMs(policy, 1, { random: () => 0 })).toBe(900);
    expect(backoffDelayMs(policy, 1, { random: () => 1 })).toBe(1100);
    expect(backoffDelayMs(policy, 1, { random: () => 7 })).toBe(1100);
    expect(backoffDelayMs(policy, 1, { random: () => Number.NaN })).toBe(900);
    for (let i = 0; i < 200; i++) {
      const d = backoffDelayMs(policy, 1)!;
      expect(d).toBeGreaterThanOrEqual(900);
      expect(d).toBeLessThanOrEqual(1100);
    }
  });

  it('refuses a retry number that is not 1 or more', () => {
    for (const bad of [0, -1, 1.5, Number.NaN])
      expect(() => backoffDelayMs({ delaysMs: [1] }, bad)).toThrow(RangeError);
  });
});

describe('the schedules configured with it', () => {
  it('webhook deliveries: 1, 2, 4, 8, 16 s ±10 %, then dropped', () => {
    expect(delays(WEBHOOK_RETRY_BACKOFF, 6)).toEqual([1000, 2000, 4000, 8000, 16000, undefined]);
    expect(WEBHOOK_RETRY_BACKOFF.jitter).toBe(0.1);
  });

  it('render retries: 1, 4, 10 s, then 10 s', () => {
    expect(delays(RENDER_RETRY_BACKOFF, 5)).toEqual([1000, 4000, 10000, 10000, 10000]);
  });

  it('waiting for a dependency: 250 ms doubling to 1 s', () => {
    expect(delays(DEPENDENCY_WAIT_BACKOFF, 5)).toEqual([250, 500, 1000, 1000, 1000]);
  });

  it('a saturated webhook endpoint: 250 ms doubling to 5 s, ±50 %', () => {
    const limiter = new EndpointLimiter({ limit: 1, random: middle });
    expect([0, 1, 2, 3, 4, 5, 6].map((waited) => limiter.retryDelayMs('whe_x', waited))).toEqual([
      250, 500, 1000, 2000, 4000, 5000, 5000,
    ]);
    expect(new EndpointLimiter({ limit: 1, random: () => 0 }).retryDelayMs('whe_x', 2)).toBe(500);
    expect(new EndpointLimiter({ limit: 1, random: () => 1 }).retryDelayMs('whe_x', 2)).toBe(1500);
  });
});
