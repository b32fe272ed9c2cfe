// docgen's queues on NATS JetStream.
//
// Four streams per install (names derive from DOCGEN_NATS_STREAM_PREFIX so several installs
// can share one NATS):
//   <P>_RENDER_LANES work queue  <p>.render.ws.*.*     render jobs, one subject and one consumer per
//                                                      workspace lane (src/queue/fair-puller.ts)
//   <P>_RENDER      work queue   <p>.render.jobs       render jobs of releases before the lanes:
//                                                      drained, no longer written
//   <P>_EVENTS      limits, 7 d  <p>.events.>          generation events, kept for fan-out/replay
//   <P>_DELIVERIES  work queue   <p>.deliveries.jobs   webhook delivery jobs
// All with file storage and a 2-minute duplicate window (a publish carries a msgID, so a
// retried publish of the same job is stored once). Consumers are durable pull consumers with
// explicit ack and no delivery limit: giving up is the application's decision (it knows the
// attempt count from deliveryCount), never the broker's.
import { connect, headers as natsHeaders, nanos, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
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
  type StreamConfig,
} from '@nats-io/jetstream';
import { failedPrecondition, isDomainError, unavailable } from '../domain/errors.ts';

import {
  deliveriesStreamName,
  deliveryJobsSubject,
  eventsStreamName,
  eventsWildcardSubject,
  queueNames,
  renderJobsSubject,
  renderLanesStreamName,
  renderLanesWildcardSubject,
  renderStreamName,
  type QueueNames,
} from './messages.ts';
import { consumeJobs, type ConsumeJobsOptions, type ConsumeJobsResult } from './consume-jobs.ts';

export type { ConsumeJobsOptions, ConsumeJobsResult, JobContext } from './consume-jobs.ts';

const DUPLICATE_WINDOW_MS = 2 * 60_000;
const EVENTS_MAX_AGE_MS = 7 * 24 * 3_600_000;

/** The stream configurations ensureStreams() converges to. */
function desiredStreams(prefix: string): Array<Partial<StreamConfig> & { name: string }> {
  const base = { storage: StorageType.File, duplicate_window: nanos(DUPLICATE_WINDOW_MS), num_replicas: 1 };
  return [
    {
      ...base,
      name: renderLanesStreamName(prefix),
      subjects: [renderLanesWildcardSubject(prefix)],
      retention: RetentionPolicy.Workqueue,
      max_age: 0,
    },
    {
      ...base,
      name: renderStreamName(prefix),
      subjects: [renderJobsSubject(prefix)],
      retention: RetentionPolicy.Workqueue,
      max_age: 0,
    },
    {
      ...base,
      name: eventsStreamName(prefix),
      subjects: [eventsWildcardSubject(prefix)],
      retention: RetentionPolicy.Limits,
      max_age: nanos(EVENTS_MAX_AGE_MS),
    },
    {
      ...base,
      name: deliveriesStreamName(prefix),
      subjects: [deliveryJobsSubject(prefix)],
      retention: RetentionPolicy.Workqueue,
      max_age: 0,
    },
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
  /** The server deletes the consumer after this long without pulls (a lane nobody uses any more). */
  inactiveThresholdMs?: number;
  description?: string;
}

export interface PublishResult {
  stream: string;
  seq: number;
  /** True when the msgID was seen within the duplicate window: nothing new was stored. */
  duplicate: boolean;
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
  /**
   * Publishes a JSON job/event; the same msgId within 2 minutes is stored once. `headers` travel
   * with it (trace context).
   */
  publish(subject: string, data: object, msgId: string, headers?: Record<string, string>): Promise<PublishResult>;
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
    throw unavailable(
      `Cannot reach NATS at ${options.servers.join(', ')}: ${reason}. Check DOCGEN_NATS_URL and that JetStream is enabled.`,
      err,
    );
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

  async function ensureConsumer(
    stream: string,
    durableName: string,
    consumerOptions: EnsureConsumerOptions,
  ): Promise<StreamAction> {
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
      ...(consumerOptions.inactiveThresholdMs === undefined
        ? {}
        : { inactive_threshold: nanos(consumerOptions.inactiveThresholdMs) }),
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
      throw failedPrecondition(
        `JetStream consumer ${stream}/${durableName} exists but is not an explicit-ack pull consumer; delete it (nats consumer rm ${stream} ${durableName}).`,
      );
    }
    const upToDate =
      c.ack_wait === desired.ack_wait &&
      c.max_deliver === desired.max_deliver &&
      c.max_ack_pending === desired.max_ack_pending &&
      (c.filter_subject ?? '') === (desired.filter_subject ?? '') &&
      (desired.inactive_threshold === undefined || c.inactive_threshold === desired.inactive_threshold) &&
      (desired.description === undefined || c.description === desired.description);
    if (upToDate) return 'unchanged';
    await jsm.consumers.update(stream, durableName, {
      ack_wait: desired.ack_wait,
      max_deliver: desired.max_deliver,
      max_ack_pending: desired.max_ack_pending,
      ...(desired.filter_subject === undefined ? {} : { filter_subject: desired.filter_subject }),
      ...(desired.inactive_threshold === undefined ? {} : { inactive_threshold: desired.inactive_threshold }),
      ...(desired.description === undefined ? {} : { description: desired.description }),
    });
    return 'updated';
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

    async publish(subject, data, msgId, headers) {
      try {
        let hdrs: MsgHdrs | undefined;
        if (headers && Object.keys(headers).length > 0) {
          hdrs = natsHeaders();
          for (const [name, value] of Object.entries(headers)) hdrs.set(name, value);
        }
        const ack = await js.publish(subject, JSON.stringify(data), {
          msgID: msgId,
          ...(hdrs ? { headers: hdrs } : {}),
        });
        return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        throw unavailable(`Publishing to ${subject} failed: ${reason}`, err);
      }
    },

    consumeJobs: (options) => consumeJobs(js, options),

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
