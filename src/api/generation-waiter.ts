// Waiting for a generation's final state for `Prefer: wait` (src/api/prefer-wait.ts) without
// polling the database or holding a worker. One subscription per API process to the final
// events (`<p>.events.generation.completed|failed`, src/queue/messages.ts) fans out to the
// requests waiting in this process through a map from generation id to its waiters, so a
// waiter costs a map entry, a timer and its open request, and an event costs one map lookup.
// Each wait re-reads the row just after registering (the generation may have become final
// before anyone listened) and once more when woken (by its event, its deadline, the caller
// going away, or the process stopping), so the answer is the stored state, with a fresh
// outputUrl, whatever happened to the event: core NATS delivers at most once, and an event
// missed while reconnecting only means the answer comes at the deadline.
import type { NatsConnection } from '@nats-io/transport-node';
import { FINAL_EVENTS, finalEventSubject, parseFinalEvent } from '../queue/messages.ts';

/** Tells about every final event from now on; resolves once the broker has the subscription. */
export interface FinalEventSource {
  subscribe(onFinal: (generationId: string) => void): Promise<{ close(): void }>;
}

/** The final events of an install, as a core NATS subscription to each final event's subject. */
export function natsFinalEventSource(connection: NatsConnection, prefix: string): FinalEventSource {
  return {
    async subscribe(onFinal) {
      const subscriptions = FINAL_EVENTS.map((event) =>
        connection.subscribe(finalEventSubject(prefix, event), {
          callback: (err, msg) => {
            if (err) return;
            let data: unknown;
            try {
              data = msg.json();
            } catch {
              return; // not JSON: the webhook dispatcher reports such messages
            }
            const parsed = parseFinalEvent(data);
            if (typeof parsed !== 'string') onFinal(parsed.generationId);
          },
        }),
      );
      // After the flush the server has the subscriptions: no event published later is missed.
      await connection.flush();
      return {
        close() {
          for (const subscription of subscriptions) subscription.unsubscribe();
        },
      };
    },
  };
}

export interface Waitable {
  id: string;
  status: string;
}

const isFinal = (status: string) => status === 'COMPLETED' || status === 'FAILED';

/** Pause before reading again after a failed read: doubling from this, up to the max. */
const READ_RETRY_MS = 250;
const READ_RETRY_MAX_MS = 4_000;

/** Resolves after `ms`, or earlier when the sleeper is woken (deadline, abort, close, event). */
function pause(ms: number, sleeper: Sleeper): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), sleeper.sleep()]).finally(
    () => {
      clearTimeout(timer);
      sleeper.cancel();
    },
  );
}

/** Wakes one waiting request; a wake that comes while it is not asleep is kept for its next sleep. */
class Sleeper {
  private woken = false;
  private resolve: (() => void) | undefined;
  readonly wake = (): void => {
    this.woken = true;
    const resolve = this.resolve;
    this.resolve = undefined;
    resolve?.();
  };
  /** Forgets a pending sleep (its promise is dropped), so that a later wake is kept for the next one. */
  cancel(): void {
    this.resolve = undefined;
  }
  sleep(): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.resolve = () => {
        this.woken = false;
        resolve();
      };
    });
  }
}

export class GenerationWaiter {
  private readonly waiting = new Map<string, Set<Sleeper>>();
  private subscription: { close(): void } | undefined;
  private closed = false;

  /** Subscribes to the final events; resolves once no later event can be missed. */
  static async start(source: FinalEventSource): Promise<GenerationWaiter> {
    const waiter = new GenerationWaiter();
    waiter.subscription = await source.subscribe((id) => waiter.onFinal(id));
    return waiter;
  }

  /** Requests waiting right now. */
  get size(): number {
    let n = 0;
    for (const sleepers of this.waiting.values()) n += sleepers.size;
    return n;
  }

  /**
   * Waits up to `timeoutMs` for `current` to reach COMPLETED or FAILED and returns the
   * generation as stored at the end (`reread`), or undefined when no wait is made because the
   * process is stopping. An aborted `signal` (the caller went away) ends the wait without a read.
   * A failing re-read does not fail the call: it is tried again after a pause while time is
   * left, and at the end the last state read is returned.
   */
  async waitForFinal<T extends Waitable>(
    current: T,
    timeoutMs: number,
    reread: () => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T | undefined> {
    if (this.closed) return undefined;
    if (isFinal(current.status)) return current;
    const deadline = performance.now() + timeoutMs;
    const sleeper = new Sleeper();
    let sleepers = this.waiting.get(current.id);
    if (!sleepers) this.waiting.set(current.id, (sleepers = new Set()));
    sleepers.add(sleeper);
    const timer = setTimeout(sleeper.wake, timeoutMs);
    signal?.addEventListener('abort', sleeper.wake, { once: true });
    let readFailed = false;
    const read = (last: T) =>
      reread().then(
        (doc) => ((readFailed = false), doc),
        () => ((readFailed = true), last),
      );
    const ongoing = () => !this.closed && !signal?.aborted && performance.now() < deadline;
    try {
      // Registered first, read second: a final state reached before we listened shows here.
      let latest = await read(current);
      for (let retry = 0; !isFinal(latest.status) && ongoing();) {
        // A failed read (database trouble) is tried again after a pause, not left until the deadline.
        if (readFailed) await pause(Math.min(READ_RETRY_MAX_MS, READ_RETRY_MS * 2 ** retry++), sleeper);
        else await sleeper.sleep();
        if (signal?.aborted) break;
        latest = await read(latest);
      }
      return latest;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', sleeper.wake);
      sleepers.delete(sleeper);
      if (sleepers.size === 0 && this.waiting.get(current.id) === sleepers) this.waiting.delete(current.id);
    }
  }

  /** Wakes every waiter (each answers with the state it re-reads), refuses new waits, unsubscribes. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const sleepers of this.waiting.values()) for (const sleeper of sleepers) sleeper.wake();
    this.subscription?.close();
  }

  private onFinal(generationId: string): void {
    const sleepers = this.waiting.get(generationId);
    if (sleepers) for (const sleeper of sleepers) sleeper.wake();
  }
}
