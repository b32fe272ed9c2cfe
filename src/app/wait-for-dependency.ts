// Start-up without the broker or the database: a role keeps trying to connect, with a capped
// exponential back-off (src/ops/backoff.ts), instead of exiting; it logs what it waits for (when it starts waiting,
// when the reason changes, and every 30 s), and its /readyz answers 503 naming the dependency
// and the last error until the connection is made.
import { describeError } from '../domain/errors.ts';
import { backoffDelayMs, type BackoffPolicy } from '../ops/backoff.ts';
import type { Logger } from '../ops/logger.ts';

export interface DependencyWait {
  /** E.g. `NATS` or `MongoDB`. */
  readonly name: string;
  /** Where it is awaited (credentials removed), e.g. `nats://nats:4222`. */
  readonly target: string;
  /** Why it is not connected yet: the last error, or undefined before the first attempt. */
  readonly lastError: string | undefined;
  readonly connected: boolean;
  /** The readiness text while waiting. */
  describe(): string;
}

export interface WaitOptions {
  logger: Logger;
  signal?: AbortSignal | undefined;
  /** First delay between attempts. Default: DEPENDENCY_WAIT_BACKOFF (250 ms). */
  initialDelayMs?: number;
  /** Longest delay between attempts. Default: DEPENDENCY_WAIT_BACKOFF (1 s). */
  maxDelayMs?: number;
  /** Errors that waiting cannot fix (a misconfiguration): thrown at once. */
  isPermanent?: (err: unknown) => boolean;
}

const REPEAT_LOG_MS = 30_000;

/** 250 ms, doubling to 1 s: a dependency that comes back is noticed within about a second. */
export const DEPENDENCY_WAIT_BACKOFF = { firstMs: 250, maxMs: 1_000 } as const satisfies BackoffPolicy;

export class DependencyWaiter<T> implements DependencyWait {
  readonly name: string;
  readonly target: string;
  lastError: string | undefined;
  connected = false;
  private readonly attempt: () => Promise<T>;

  constructor(name: string, target: string, attempt: () => Promise<T>) {
    this.name = name;
    this.target = target;
    this.attempt = attempt;
  }

  describe(): string {
    if (this.connected) return `connected to ${this.name}`;
    return `waiting for ${this.name} at ${this.target}${this.lastError ? `: ${this.lastError}` : ''}`;
  }

  /** Tries until it connects; rejects only when the signal aborts. */
  async connect(options: WaitOptions): Promise<T> {
    const backoff: BackoffPolicy = {
      firstMs: options.initialDelayMs ?? DEPENDENCY_WAIT_BACKOFF.firstMs,
      maxMs: options.maxDelayMs ?? DEPENDENCY_WAIT_BACKOFF.maxMs,
    };
    let attempts = 0;
    let loggedAt = 0;
    let loggedError: string | undefined;
    const started = Date.now();
    for (;;) {
      options.signal?.throwIfAborted();
      attempts++;
      try {
        const value = await this.attempt();
        this.connected = true;
        this.lastError = undefined;
        if (attempts > 1)
          options.logger.info(`connected to ${this.name}`, {
            dependency: this.name,
            target: this.target,
            attempts,
            waitedMs: Date.now() - started,
          });
        return value;
      } catch (err) {
        if (options.isPermanent?.(err)) throw err;
        this.lastError = describeError(err);
        const now = Date.now();
        if (this.lastError !== loggedError || now - loggedAt >= REPEAT_LOG_MS) {
          options.logger.warn(`waiting for ${this.name}`, {
            dependency: this.name,
            target: this.target,
            attempts,
            error: this.lastError,
          });
          loggedAt = now;
          loggedError = this.lastError;
        }
      }
      await sleep(backoffDelayMs(backoff, attempts)!, options.signal);
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
