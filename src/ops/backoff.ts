// The one back-off rule of docgen: the delay before a retry, from a schedule (explicit delays,
// or growth by a factor from a first delay), capped, with optional jitter so that many things
// failing together do not come back in lock-step. Each use configures its own policy, next to
// the code that retries:
// - webhook deliveries (src/webhooks/retry-schedule.ts): 1, 2, 4, 8, 16 s ±10 %, then dropped;
// - render retries (src/render/render-pipeline.ts): 1, 4, 10 s, then 10 s each;
// - waiting for a dependency at start-up (src/app/wait-for-dependency.ts): 250 ms doubling to 1 s;
// - a job whose webhook endpoint has no free slot (src/webhooks/endpoint-limiter.ts): 250 ms
//   doubling to 5 s, but no sooner than an attempt at that endpoint usually takes, ±50 %.

export interface BackoffPolicy {
  /** Explicit delays: retry n waits delaysMs[n - 1]; later retries wait the last one. */
  readonly delaysMs?: readonly number[];
  /** Without delaysMs: retry n waits firstMs × factor^(n - 1). */
  readonly firstMs?: number;
  /** Default 2. */
  readonly factor?: number;
  /** No delay is longer than this (before jitter). Default: no cap. */
  readonly maxMs?: number;
  /** How many retries there are; past the last one there is no delay (give up). Default: no end. */
  readonly retries?: number;
  /** Fraction a delay may move either way: 0.1 is ±10 %. Default 0. */
  readonly jitter?: number;
}

export interface BackoffDraw {
  /** Returns a number in [0, 1], like Math.random (the default); tests pass a fixed one. */
  random?: () => number;
  /** A floor known only now (e.g. how long an attempt usually takes); the cap still applies. */
  atLeastMs?: number;
}

/**
 * The delay in milliseconds before retry `retry` (1 is the first retry), or undefined when the
 * policy has no more retries.
 */
export function backoffDelayMs(policy: BackoffPolicy, retry: number, draw: BackoffDraw = {}): number | undefined {
  if (!Number.isInteger(retry) || retry < 1) throw new RangeError(`retry must be a whole number >= 1, got ${retry}`);
  if (policy.retries !== undefined && retry > policy.retries) return undefined;
  const scheduled = policy.delaysMs
    ? policy.delaysMs[Math.min(retry, policy.delaysMs.length) - 1]!
    : (policy.firstMs ?? 0) * (policy.factor ?? 2) ** (retry - 1);
  const base = Math.min(policy.maxMs ?? Infinity, Math.max(draw.atLeastMs ?? 0, scheduled));
  const jitter = policy.jitter ?? 0;
  if (jitter === 0) return base;
  const random = clampUnit((draw.random ?? Math.random)());
  return Math.round(base * (1 + jitter * (2 * random - 1)));
}

// A bad random source must not stretch a delay past its jitter's bounds.
function clampUnit(x: number): number {
  if (!Number.isFinite(x) || x < 0) return 0;
  return x >= 1 ? 1 : x;
}
