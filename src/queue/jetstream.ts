// docgen's queues on NATS JetStream.
//
// Three streams per install (names derive from DOCGEN_NATS_STREAM_PREFIX so several installs
// can share one NATS):
//   <P>_RENDER      work queue   <p>.render.jobs       render jobs, one consumer: the render workers
//   <P>_EVENTS      limits, 7 d  <p>.events.>          generation events, kept for fan-out/replay
//   <P>_DELIVERIES  work queue   <p>.deliveries.jobs   webhook delivery jobs
// All with file storage and a 2-minute duplicate window (a publish carries a msgID, so a
// retried publish of the same job is stored once). Consumers are durable pull consumers with
// explicit ack and no delivery limit: giving up is the application's decision (it knows the
// attempt count from deliveryCount), never the broker's.
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  ReplayPolicy,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
  type ConsumerConfig,
  type ConsumerInfo,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StreamConfig,
} from '@nats-io/jetstream';
import { failedPrecondition, isDomainError, unavailable } from '../domain/errors.ts';

// ---------------------------------------------------------------------------------------------
// Names

export const renderStreamName = (prefix: string) => `${prefix}_RENDER`;
export const eventsStreamName = (prefix: string) => `${prefix}_EVENTS`;
export const deliveriesStreamName = (prefix: string) => `${prefix}_DELIVERIES`;
export const renderJobsSubject = (prefix: string) => `${prefix.toLowerCase()}.render.jobs`;
/** Subject of one kind of event, e.g. eventSubject('DOCGEN', 'generation.completed'). */
export const eventSubject = (prefix: string, eventType: string) => `${prefix.toLowerCase()}.events.${eventType}`;
export const eventsWildcardSubject = (prefix: string) => `${prefix.toLowerCase()}.events.>`;
export const deliveryJobsSubject = (prefix: string) => `${prefix.toLowerCase()}.deliveries.jobs`;

export interface QueueNames {
  streams: { render: string; events: string; deliveries: string };
  subjects: { renderJobs: string; eventsWildcard: string; deliveryJobs: string };
}

export function queueNames(prefix: string): QueueNames {
  return {
    streams: { render: renderStreamName(prefix), events: eventsStreamName(prefix), deliveries: deliveriesStreamName(prefix) },
    subjects: {
      renderJobs: renderJobsSubject(prefix),
      eventsWildcard: eventsWildcardSubject(prefix),
      deliveryJobs: deliveryJobsSubject(prefix),
    },
  };
}

const DUPLICATE_WINDOW_MS = 2 * 60_000;
const EVENTS_MAX_AGE_MS = 7 * 24 * 3_600_000;

/** The stream configurations ensureStreams() converges to. */
export function desiredStreams(prefix: string): Array<Partial<StreamConfig> & { name: string }> {
  const base = { storage: StorageType.File, duplicate_window: nanos(DUPLICATE_WINDOW_MS), num_replicas: 1 };
  return [
    { ...base, name: renderStreamName(prefix), subjects: [renderJobsSubject(prefix)], retention: RetentionPolicy.Workqueue, max_age: 0 },
    { ...base, name: eventsStreamName(prefix), subjects: [eventsWildcardSubject(prefix)], retention: RetentionPolicy.Limits, max_age: nanos(EVENTS_MAX_AGE_MS) },
    { ...base, name: deliveriesStreamName(prefix), subjects: [deliveryJobsSubject(prefix)], retention: RetentionPolicy.Workqueue, max_age: 0 },
  ];
}

// ---------------------------------------------------------------------------------------------
// Types

export interface NatsConnectOptions {
  servers: string[];
  streamPrefix: string;
  /** Client name shown by the server (e.g. `docgen-render`). */
  name?: string;
  /** Time allowed for the first connection. Default 5 s. */
  connectTimeoutMs?: number;
  /** Time a JetStream API call or publish waits for its answer. Default 5 s. */
  requestTimeoutMs?: number;
}

export type StreamAction = 'created' | 'updated' | 'unchanged';

export interface EnsureConsumerOptions {
  /** Time the server waits for an ack before redelivering. */
  ackWaitMs: number;
  /** Only messages on this subject (needed when a work-queue stream has several consumers). */
  filterSubject?: string;
  /** Unacked messages the server lets this consumer have at once. Default 1000. */
  maxAckPending?: number;
  description?: string;
}

export interface PublishResult {
  stream: string;
  seq: number;
  /** True when the msgID was seen within the duplicate window: nothing new was stored. */
  duplicate: boolean;
}

/** One job as the handler sees it. Settle it once: ack, nak or term. */
export interface JobContext<T = unknown> {
  readonly data: T;
  readonly subject: string;
  /** 1 on the first delivery, 2 on the first redelivery, … */
  readonly deliveryCount: number;
  /** The publisher's msgID (Nats-Msg-Id), when it set one. */
  readonly msgId: string | undefined;
  readonly streamSequence: number;
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

export interface NatsQueue {
  readonly connection: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly prefix: string;
  readonly names: QueueNames;
  /** Creates the three streams or brings their configuration up to date. Safe to run concurrently. */
  ensureStreams(): Promise<Record<string, StreamAction>>;
  /** Creates a durable pull consumer or updates its changeable settings. */
  ensureConsumer(stream: string, durableName: string, options: EnsureConsumerOptions): Promise<StreamAction>;
  /** Publishes a JSON job/event; the same msgId within 2 minutes is stored once. */
  publish(subject: string, data: object, msgId: string): Promise<PublishResult>;
  consumeJobs<T = unknown>(options: ConsumeJobsOptions<T>): Promise<ConsumeJobsResult>;
  /** False while disconnected (the client keeps reconnecting) or after close(). */
  isConnected(): boolean;
  /** Flushes pending publishes and acks, then closes. */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Implementation

const JS_STREAM_NOT_FOUND = 10059;
const JS_CONSUMER_NOT_FOUND = 10014;
const JS_STREAM_NAME_IN_USE = 10058;

function apiErrorCode(err: unknown): number | undefined {
  return err instanceof JetStreamApiError ? err.code : undefined;
}

function sameSet(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const left = new Set(a ?? []);
  const right = new Set(b ?? []);
  return left.size === right.size && [...left].every((x) => right.has(x));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
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

export async function connectNats(options: NatsConnectOptions): Promise<NatsQueue> {
  const requestTimeoutMs = options.requestTimeoutMs ?? 5_000;
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: options.servers,
      name: options.name ?? 'docgen',
      timeout: options.connectTimeoutMs ?? 5_000,
      // Never give up: a broker restart must not need a docgen restart.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      // Notice a dead server within ~20 s even when no traffic flows.
      pingInterval: 10_000,
      maxPingOut: 2,
    });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw unavailable(`Cannot reach NATS at ${options.servers.join(', ')}: ${reason}. Check DOCGEN_NATS_URL and that JetStream is enabled.`, err);
  }

  let connected = true;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnecting') connected = false;
      else if (status.type === 'reconnect') connected = true;
    }
  })().catch(() => {});

  const js = jetstream(nc, { timeout: requestTimeoutMs });
  const jsm = await jetstreamManager(nc, { timeout: requestTimeoutMs, checkAPI: false });
  const prefix = options.streamPrefix;

  async function ensureStream(desired: Partial<StreamConfig> & { name: string }): Promise<StreamAction> {
    for (let attempt = 0; ; attempt++) {
      let current: StreamConfig | undefined;
      try {
        current = (await jsm.streams.info(desired.name)).config;
      } catch (err) {
        if (apiErrorCode(err) !== JS_STREAM_NOT_FOUND) throw err;
      }
      if (current === undefined) {
        try {
          await jsm.streams.add(desired);
          return 'created';
        } catch (err) {
          // Another process created it between our info and add: converge on the next pass.
          if (apiErrorCode(err) === JS_STREAM_NAME_IN_USE && attempt < 2) continue;
          throw err;
        }
      }
      if (current.retention !== desired.retention || current.storage !== desired.storage) {
        throw failedPrecondition(
          `JetStream stream ${desired.name} exists with retention=${current.retention}, storage=${current.storage}; ` +
            `docgen needs retention=${desired.retention}, storage=${desired.storage}. These cannot be changed in place: ` +
            `delete the stream (nats stream rm ${desired.name}) or use another DOCGEN_NATS_STREAM_PREFIX.`,
        );
      }
      const upToDate =
        sameSet(current.subjects, desired.subjects) &&
        current.max_age === desired.max_age &&
        current.duplicate_window === desired.duplicate_window;
      if (upToDate) return 'unchanged';
      await jsm.streams.update(desired.name, {
        ...current,
        subjects: desired.subjects ?? current.subjects,
        max_age: desired.max_age ?? current.max_age,
        duplicate_window: desired.duplicate_window ?? current.duplicate_window,
      });
      return 'updated';
    }
  }

  async function ensureConsumer(stream: string, durableName: string, consumerOptions: EnsureConsumerOptions): Promise<StreamAction> {
    const desired: Partial<ConsumerConfig> = {
      durable_name: durableName,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      replay_policy: ReplayPolicy.Instant,
      ack_wait: nanos(consumerOptions.ackWaitMs),
      max_deliver: -1,
      max_ack_pending: consumerOptions.maxAckPending ?? 1000,
      ...(consumerOptions.filterSubject === undefined ? {} : { filter_subject: consumerOptions.filterSubject }),
      ...(consumerOptions.description === undefined ? {} : { description: consumerOptions.description }),
    };
    let current: ConsumerInfo | undefined;
    try {
      current = await jsm.consumers.info(stream, durableName);
    } catch (err) {
      if (apiErrorCode(err) !== JS_CONSUMER_NOT_FOUND) throw err;
    }
    if (current === undefined) {
      // Creating a durable with an identical config is idempotent on the server.
      await jsm.consumers.add(stream, desired);
      return 'created';
    }
    const c = current.config;
    if (c.ack_policy !== AckPolicy.Explicit || c.deliver_subject) {
      throw failedPrecondition(`JetStream consumer ${stream}/${durableName} exists but is not an explicit-ack pull consumer; delete it (nats consumer rm ${stream} ${durableName}).`);
    }
    const upToDate =
      c.ack_wait === desired.ack_wait &&
      c.max_deliver === desired.max_deliver &&
      c.max_ack_pending === desired.max_ack_pending &&
      (c.filter_subject ?? '') === (desired.filter_subject ?? '') &&
      (desired.description === undefined || c.description === desired.description);
    if (upToDate) return 'unchanged';
    await jsm.consumers.update(stream, durableName, {
      ack_wait: desired.ack_wait,
      max_deliver: desired.max_deliver,
      max_ack_pending: desired.max_ack_pending,
      ...(desired.filter_subject === undefined ? {} : { filter_subject: desired.filter_subject }),
      ...(desired.description === undefined ? {} : { description: desired.description }),
    });
    return 'updated';
  }

  async function consumeJobs<T>(opts: ConsumeJobsOptions<T>): Promise<ConsumeJobsResult> {
    const { signal, handler } = opts;
    if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1) throw new RangeError('consumeJobs: concurrency must be a whole number >= 1');
    const pullExpiresMs = Math.max(1_000, opts.pullExpiresMs ?? 10_000);
    const errorNakDelayMs = opts.errorNakDelayMs ?? 1_000;
    const stopTimeoutMs = opts.stopTimeoutMs ?? 25_000;
    const reportError = (err: unknown, msg?: JsMsg) => {
      try {
        opts.onError?.(err, msg && { subject: msg.subject, streamSequence: msg.seq, deliveryCount: msg.info.deliveryCount });
      } catch {
        // an error reporter must not stop the loop
      }
    };
    let running = 0;

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

    const handle = async (msg: JsMsg): Promise<void> => {
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
    return { abandoned: timedOut ? running : 0 };
  }

  return {
    connection: nc,
    js,
    jsm,
    prefix,
    names: queueNames(prefix),

    async ensureStreams() {
      const result: Record<string, StreamAction> = {};
      try {
        for (const desired of desiredStreams(prefix)) result[desired.name] = await ensureStream(desired);
      } catch (err) {
        if (isDomainError(err)) throw err;
        const reason = err instanceof Error ? err.message : String(err);
        throw unavailable(`Cannot set up JetStream streams: ${reason}`, err);
      }
      return result;
    },

    ensureConsumer,

    async publish(subject, data, msgId) {
      try {
        const ack = await js.publish(subject, JSON.stringify(data), { msgID: msgId });
        return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        throw unavailable(`Publishing to ${subject} failed: ${reason}`, err);
      }
    },

    consumeJobs,

    isConnected: () => connected && !nc.isClosed(),

    async close() {
      if (nc.isClosed()) return;
      try {
        await nc.drain();
      } catch {
        await nc.close();
      }
    },
  };
}
