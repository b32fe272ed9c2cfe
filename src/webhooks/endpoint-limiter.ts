// Per-endpoint cap on attempts in flight in this process (DOCGEN_WEBHOOK_ENDPOINT_CONCURRENCY).
// A job for a saturated endpoint is not held waiting for a slot: the worker hands it back
// to JetStream with a delay (nak) and takes other work, so a slow or dead endpoint holds
// at most `limit` of the process's slots and the others keep flowing.

import { backoffDelayMs, type BackoffPolicy } from '../ops/backoff.ts';

export interface EndpointLimiterOptions {
  /** Attempts in flight per endpoint. */
  limit: number;
  /** Shortest and longest delay before a saturated endpoint's job comes back. */
  minRetryMs?: number;
  maxRetryMs?: number;
  random?: () => number;
}

interface EndpointState {
  inFlight: number;
  /** Moving average of attempt durations (ms), to pace jobs that find the endpoint full. */
  avgDurationMs: number;
}

export class EndpointLimiter {
  readonly limit: number;
  private readonly backoff: BackoffPolicy;
  private readonly random: () => number;
  private readonly endpoints = new Map<string, EndpointState>();

  constructor(options: EndpointLimiterOptions) {
    if (!Number.isInteger(options.limit) || options.limit < 1)
      throw new RangeError('EndpointLimiter: limit must be a whole number >= 1');
    this.limit = options.limit;
    this.backoff = { firstMs: options.minRetryMs ?? 250, maxMs: options.maxRetryMs ?? 5_000, jitter: 0.5 };
    this.random = options.random ?? Math.random;
  }

  isSaturated(endpointId: string): boolean {
    return (this.endpoints.get(endpointId)?.inFlight ?? 0) >= this.limit;
  }

  /** Takes a slot; false when the endpoint already has `limit` attempts in flight. */
  tryAcquire(endpointId: string): boolean {
    let state = this.endpoints.get(endpointId);
    if (!state) {
      state = { inFlight: 0, avgDurationMs: 0 };
      this.endpoints.set(endpointId, state);
    }
    if (state.inFlight >= this.limit) return false;
    state.inFlight++;
    return true;
  }

  /** Gives the slot back; `durationMs` of the attempt feeds the pacing of waiting jobs. */
  release(endpointId: string, durationMs?: number): void {
    const state = this.endpoints.get(endpointId);
    if (!state) return;
    state.inFlight = Math.max(0, state.inFlight - 1);
    if (durationMs !== undefined && Number.isFinite(durationMs)) {
      state.avgDurationMs = state.avgDurationMs === 0 ? durationMs : state.avgDurationMs * 0.8 + durationMs * 0.2;
    }
    // Idle endpoints are forgotten so the map does not grow with every endpoint ever seen.
    if (state.inFlight === 0) this.endpoints.delete(endpointId);
  }

  /**
   * How long a job that found the endpoint full should wait before coming back: about one
   * attempt's duration (a slot is likely free by then; sooner only churns the queue), and
   * longer each time the same job found it full (`timesWaited`), with jitter so the waiting
   * jobs do not all return together.
   */
  retryDelayMs(endpointId: string, timesWaited = 0): number {
    const atLeastMs = this.endpoints.get(endpointId)?.avgDurationMs ?? 0;
    return backoffDelayMs(this.backoff, Math.max(0, Math.floor(timesWaited)) + 1, { random: this.random, atLeastMs })!;
  }

  /** Attempts in flight, all endpoints together. */
  get inFlight(): number {
    let n = 0;
    for (const s of this.endpoints.values()) n += s.inFlight;
    return n;
  }
}
