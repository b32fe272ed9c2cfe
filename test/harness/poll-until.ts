// Waits for an eventually-true condition (a row reaching a state, a request arriving) without
// fixed sleeps. On time-out the error says what was awaited, the last value seen and the last
// error the probe threw.
import { inspect } from 'node:util';

export interface PollOptions {
  /** Default 10 s. */
  timeoutMs?: number;
  /** Pause between probes. Default 50 ms. */
  intervalMs?: number;
  /** What is being awaited, for the error message. */
  description?: string;
}

/**
 * Calls `probe` until `accept(value)` is true and returns that value. A probe that throws
 * counts as "not yet". Without `accept`, any truthy value is accepted.
 */
export async function pollUntil<T>(
  probe: () => T | Promise<T>,
  accept: (value: T) => boolean = (value) => Boolean(value),
  options: PollOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 50;
  const started = Date.now();
  let attempts = 0;
  let lastValue: { value: T } | undefined;
  let lastError: unknown;
  for (;;) {
    attempts++;
    try {
      const value = await probe();
      lastValue = { value };
      lastError = undefined;
      if (accept(value)) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() - started >= timeoutMs) break;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  const what = options.description ?? probe.toString().slice(0, 120);
  const seen =
    lastValue === undefined
      ? 'no value'
      : `last value: ${inspect(lastValue.value, { depth: 4, breakLength: 120 }).slice(0, 2_000)}`;
  const failure =
    lastError === undefined
      ? ''
      : `; last error: ${lastError instanceof Error ? (lastError.stack ?? lastError.message) : String(lastError)}`;
  throw new Error(
    `pollUntil timed out after ${timeoutMs} ms (${attempts} attempts) waiting for: ${what}; ${seen}${failure}`,
    {
      cause: lastError,
    },
  );
}
