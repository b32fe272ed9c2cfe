// The pull loop behind NatsQueue.consumeJobs: one loop per concurrency slot, each holding at
// most one pull or one job (strict backpressure), explicit settlement (ack, nak, term),
// and a stop that hands back what a pending pull brings instead of sitting on it.
import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import type { DeliveredMessage } from './pulled-message.ts';

/** One job as the handler sees it. Settle it once: ack, nak or term. */
export interface JobContext<T = unknown> {
  readonly data: T;
  readonly subject: string;
  /** 1 on the first delivery, 2 on the first redelivery, … */
  readonly deliveryCount: number;
  /** The publisher's msgID (Nats-Msg-Id), when it set one. */
  readonly msgId: string | undefined;
  readonly streamSequence: number;
  /** The message's headers (e.g. the W3C trace context of the publisher), Nats-* ones included. */
  readonly headers: Readonly<Record<string, string>>;
  /** Aborted when the loop is asked to stop: a long job may hand itself back with nak(). */
  readonly signal: AbortSignal;
  /** Tells the server the job is still being worked on: restarts its ack_wait. */
  working(): void;
  /** Done: the job is removed (work queue) or marked handled. */
  ack(): void;
  /** Not done: redeliver after delayMs (immediately when absent or 0). */
  nak(delayMs?: number): void;
  /**
   * Never redeliver (poison message). Takes no reason: nats-server 2.9 ignores a `+TERM`
   * that carries one, which would leave the job pending until ack_wait. Log the reason instead.
   */
  term(): void;
}

export interface ConsumeJobsOptions<T = unknown> {
  stream: string;
  consumer: string;
  /** Jobs handled at once; never more are pulled than there are free slots. */
  concurrency: number;
  /**
   * Handles one job. Returning without settling acks it; throwing naks it after
   * `errorNakDelayMs`. Call working() in long jobs so ack_wait does not expire.
   */
  handler: (job: JobContext<T>) => Promise<void>;
  /** Abort to stop: no further pulls, in-flight handlers may finish until stopTimeoutMs. */
  signal: AbortSignal;
  /** After abort, how long to wait for in-flight handlers. Default 25 s. */
  stopTimeoutMs?: number;
  /** Lifetime of one pull request. Default 10 s (lower: quicker to notice a lost pull; higher: fewer requests). */
  pullExpiresMs?: number;
  /** Redelivery delay when the handler throws. Default 1 s. */
  errorNakDelayMs?: number;
  /** Pull and handler errors (the loop itself keeps going). */
  onError?: (error: unknown, job?: { subject: string; streamSequence: number; deliveryCount: number }) => void;
}

export interface ConsumeJobsResult {
  /** Handlers still running when the stop deadline passed (their jobs will be redelivered). */
  abandoned: number;
}

export async function consumeJobs<T>(js: JetStreamClient, opts: ConsumeJobsOptions<T>): Promise<ConsumeJobsResult> {
  const { signal } = opts;
  if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1)
    throw new RangeError('consumeJobs: concurrency must be a whole number >= 1');
  const pullExpiresMs = Math.max(1_000, opts.pullExpiresMs ?? 10_000);
  const stopTimeoutMs = opts.stopTimeoutMs ?? 25_000;
  const reportError = jobErrorReporter(opts.onError);
  const { handle, running } = jobMessageHandler(opts, signal, reportError);

  // A pull that is still waiting when we stop is abandoned; whatever it brings is handed
  // straight back so another worker gets it without waiting for ack_wait.
  const handBack = (msg: JsMsg | null) => {
    try {
      msg?.nak();
    } catch {
      // connection gone: the server redelivers after ack_wait
    }
  };
  const nextOrAbort = (pull: Promise<JsMsg | null>): Promise<JsMsg | null> => {
    if (signal.aborted) {
      pull.then(handBack, () => {});
      return Promise.resolve(null);
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        pull.then(handBack, () => {});
        resolve(null);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      pull.then(
        (m) => {
          signal.removeEventListener('abort', onAbort);
          if (signal.aborted) {
            handBack(m);
            resolve(null);
          } else resolve(m);
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      );
    });
  };

  // One loop per slot, each holding at most one pull or one job: strict backpressure.
  const slot = async (): Promise<void> => {
    let consumer: Awaited<ReturnType<JetStreamClient['consumers']['get']>> | undefined;
    let failures = 0;
    while (!signal.aborted) {
      let msg: JsMsg | null;
      try {
        consumer ??= await js.consumers.get(opts.stream, opts.consumer);
        msg = await nextOrAbort(consumer.next({ expires: pullExpiresMs }));
        failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        failures++;
        // After repeated failures look the consumer up again (it may have been recreated).
        if (failures % 5 === 0) consumer = undefined;
        reportError(err);
        await sleep(Math.min(5_000, 100 * 2 ** Math.min(failures, 6)), signal);
        continue;
      }
      if (msg !== null) await handle(msg);
    }
  };

  const slots = Promise.all(Array.from({ length: opts.concurrency }, () => slot()));
  return stopWhenAborted(signal, slots, stopTimeoutMs, running);
}

/** Calls onError with the job it concerns; an error reporter that throws never stops a loop. */
export function jobErrorReporter(
  onError: ConsumeJobsOptions['onError'],
): (err: unknown, msg?: DeliveredMessage) => void {
  return (err, msg) => {
    try {
      onError?.(err, msg && { subject: msg.subject, streamSequence: msg.seq, deliveryCount: msg.info.deliveryCount });
    } catch {
      // an error reporter must not stop the loop
    }
  };
}

/** Waits for the abort, then for the slots until the stop time-out: what still runs then is abandoned. */
export async function stopWhenAborted(
  signal: AbortSignal,
  slots: Promise<unknown>,
  stopTimeoutMs: number,
  running: () => number,
): Promise<ConsumeJobsResult> {
  const stopped = new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await stopped;
  let deadline: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    slots.then(() => false),
    new Promise<boolean>((resolve) => {
      deadline = setTimeout(() => resolve(true), stopTimeoutMs);
    }),
  ]);
  clearTimeout(deadline);
  return { abandoned: timedOut ? running() : 0 };
}

/**
 * Runs one delivered message through the handler and settles it once (ack on return, nak
 * after errorNakDelayMs on a throw, term when it is not JSON). Shared by the single-consumer
 * loop here and the fair render puller (fair-puller.ts).
 */
export function jobMessageHandler<T>(
  opts: Pick<ConsumeJobsOptions<T>, 'stream' | 'handler' | 'errorNakDelayMs'>,
  signal: AbortSignal,
  reportError: (err: unknown, msg?: DeliveredMessage) => void,
): { handle(msg: DeliveredMessage): Promise<void>; running(): number } {
  const { handler } = opts;
  const errorNakDelayMs = opts.errorNakDelayMs ?? 1_000;
  let running = 0;
  const handle = async (msg: DeliveredMessage): Promise<void> => {
    let settled = false;
    const settle = (action: () => void) => {
      if (settled) return;
      settled = true;
      try {
        action();
      } catch (err) {
        // Disconnected: the server redelivers after ack_wait.
        reportError(err, msg);
      }
    };
    let data: T;
    try {
      data = JSON.parse(msg.string()) as T;
    } catch (err) {
      reportError(new Error(`job ${opts.stream}#${msg.seq} is not JSON; terminated`, { cause: err }), msg);
      settle(() => msg.term());
      return;
    }
    const job: JobContext<T> = {
      data,
      subject: msg.subject,
      deliveryCount: msg.info.deliveryCount,
      msgId: msg.headers?.get('Nats-Msg-Id') || undefined,
      streamSequence: msg.seq,
      headers: headersOf(msg),
      signal,
      working: () => {
        if (!settled) msg.working();
      },
      ack: () => settle(() => msg.ack()),
      nak: (delayMs?: number) => settle(() => (delayMs ? msg.nak(delayMs) : msg.nak())),
      term: () => settle(() => msg.term()),
    };
    running++;
    try {
      await handler(job);
      job.ack();
    } catch (err) {
      reportError(err, msg);
      job.nak(errorNakDelayMs);
    } finally {
      running--;
    }
  };
  return { handle, running: () => running };
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

function headersOf(msg: DeliveredMessage): Record<string, string> {
  const out: Record<string, string> = {};
  if (!msg.headers) return out;
  for (const [name, values] of msg.headers) if (values[0] !== undefined) out[name.toLowerCase()] = values[0];
  return out;
}
