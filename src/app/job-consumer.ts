// One job consumer: makes sure the durable consumer exists with the role's settings, then
// pulls and handles its jobs until stop(). Every role that works off a JetStream stream
// (render jobs, final events, delivery jobs) sets its consumers up through here.
import type { ConsumeJobsResult, JobContext, NatsQueue } from '../queue/jetstream.ts';

export interface JobConsumerOptions<T> {
  stream: string;
  /** Durable name, shared by every process of the role. */
  consumer: string;
  /** The server redelivers a job whose holder has not acked nor called working() for this long. */
  ackWaitMs: number;
  /** Unacked jobs the server lets the consumer have at once; -1 for no cap. */
  maxAckPending: number;
  description?: string;
  /** Jobs handled at once in this process. */
  concurrency: number;
  /**
   * When set, working() is sent this often while a handler runs, so ack_wait can be short
   * (a job held by a dead process comes back after ack_wait) whatever a job takes.
   */
  heartbeatMs?: number;
  /** After stop(), how long in-flight handlers may run before they count as abandoned. */
  stopTimeoutMs: number;
  handler: (job: JobContext<T>) => Promise<void>;
  onError?: (err: unknown) => void;
}

export interface JobConsumer {
  readonly stream: string;
  readonly consumer: string;
  /** Stops pulling; in-flight handlers go on until `done` resolves. */
  stop(): void;
  /** Resolves when the loop has ended (handlers finished or abandoned at the stop time-out). */
  readonly done: Promise<ConsumeJobsResult>;
  /** Jobs not yet delivered plus jobs delivered and not yet acked (the consumer's backlog). */
  backlog(): Promise<number>;
  /** Deliveries beyond the first (redeliveries: expired ack waits, naks). */
  redelivered(): Promise<number>;
}

export async function startJobConsumer<T>(nats: NatsQueue, options: JobConsumerOptions<T>): Promise<JobConsumer> {
  await nats.ensureConsumer(options.stream, options.consumer, {
    ackWaitMs: options.ackWaitMs,
    maxAckPending: options.maxAckPending,
    ...(options.description === undefined ? {} : { description: options.description }),
  });
  const controller = new AbortController();
  const done = nats.consumeJobs<T>({
    stream: options.stream,
    consumer: options.consumer,
    concurrency: options.concurrency,
    signal: controller.signal,
    stopTimeoutMs: options.stopTimeoutMs,
    handler:
      options.heartbeatMs === undefined
        ? options.handler
        : async (job) => {
            const heartbeat = setInterval(() => job.working(), options.heartbeatMs);
            try {
              await options.handler(job);
            } finally {
              clearInterval(heartbeat);
            }
          },
    ...(options.onError ? { onError: options.onError } : {}),
  });
  const info = () => nats.jsm.consumers.info(options.stream, options.consumer);
  return {
    stream: options.stream,
    consumer: options.consumer,
    stop: () => controller.abort(),
    done,
    backlog: async () => {
      const i = await info();
      return i.num_pending + i.num_ack_pending;
    },
    redelivered: async () => (await info()).num_redelivered,
  };
}
