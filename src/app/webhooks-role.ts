// The webhooks role: the dispatcher (final-state events -> one delivery per subscribed
// endpoint), the delivery workers (one attempt per job, retries waiting in JetStream) and
// the sweeper for jobs that never reached the broker. On shutdown it stops pulling, lets
// in-flight attempts finish within the grace period, then cuts off the rest and hands
// their jobs back (nak) so another webhooks process retries them at once.
import { webhookSecretContext } from '../webhooks/secret-box.ts';
import type { Logger } from '../ops/logger.ts';
import type { Metrics } from '../ops/metrics.ts';
import type { JobContext } from '../queue/jetstream.ts';
import { isBatchEvent, parseWebhookSourceEvent, type DeliveryJob } from '../queue/messages.ts';
import { DeliveryDispatcher } from '../webhooks/delivery-dispatcher.ts';
import { DeliverySweeper } from '../webhooks/delivery-sweeper.ts';
import { DeliveryWorker, type AttemptReport } from '../webhooks/delivery-worker.ts';
import { EndpointLimiter } from '../webhooks/endpoint-limiter.ts';
import { SpanKind, contextFromHeaders, withSpan } from '../ops/tracing.ts';
import { startJobConsumer } from './job-consumer.ts';
import type { Role, RoleContext } from './role.ts';

export interface WebhooksRole extends Role {
  dispatcher: DeliveryDispatcher;
  worker: DeliveryWorker;
  sweeper: DeliverySweeper;
}

export const WEBHOOK_DISPATCHER_CONSUMER = 'webhook-dispatcher';
export const WEBHOOK_SENDER_CONSUMER = 'webhook-senders';
/** Events fanned out at once; each is a few small writes and publishes. */
const DISPATCH_CONCURRENCY = 32;
/**
 * ack_wait of both consumers: a job held by a process that died comes back after this long.
 * Handlers send working() every third of it (JOB_HEARTBEAT_MS), so a slow attempt or
 * fan-out is never redelivered while its process lives, whatever DOCGEN_WEBHOOK_TIMEOUT_MS is.
 */
const WEBHOOK_ACK_WAIT_MS = 6_000;
const JOB_HEARTBEAT_MS = WEBHOOK_ACK_WAIT_MS / 3;
/** Sweeper: how overdue a PENDING delivery must be to count as lost, and how often to look. */
export const SWEEP_GRACE_MS = 5 * 60_000;
const SWEEP_INTERVAL_MS = 30_000;

export async function startWebhooksRole(ctx: RoleContext): Promise<WebhooksRole> {
  const { config, infrastructure, metrics } = ctx;
  const logger = ctx.logger.child({ module: 'webhooks' });
  const { repositories, queue } = infrastructure;
  const nats = queue.nats;
  const names = nats.names;

  // The job carries the endpoint so a worker can pace a saturated endpoint without a read.
  const publishJob = (job: DeliveryJob, msgId: string) => queue.publishDeliveryJob(job, msgId);

  const dispatcher = new DeliveryDispatcher({
    endpoints: repositories.webhookEndpoints,
    deliveries: repositories.deliveries,
    publishJob,
  });

  // One endpoint never gets more than half of this process's slots, whatever the two
  // settings are: the other half keeps serving every other endpoint.
  const endpointLimit = Math.max(
    1,
    Math.min(config.webhooks.endpointConcurrency, Math.floor(config.webhooks.concurrency / 2)),
  );
  if (endpointLimit < config.webhooks.endpointConcurrency) {
    logger.warn('DOCGEN_WEBHOOK_ENDPOINT_CONCURRENCY is more than half of DOCGEN_WEBHOOK_CONCURRENCY; using half', {
      endpointConcurrency: config.webhooks.endpointConcurrency,
      concurrency: config.webhooks.concurrency,
      effective: endpointLimit,
    });
  }
  const limiter = new EndpointLimiter({ limit: endpointLimit });
  const worker = new DeliveryWorker({
    deliveries: repositories.deliveries,
    stats: repositories.stats,
    endpoints: repositories.webhookEndpoints,
    secretKey: config.secretKey,
    secretContext: (endpoint) => webhookSecretContext(endpoint._id),
    limiter,
    timeoutMs: config.webhooks.timeoutMs,
    allowInsecure: config.webhooks.allowInsecureUrls,
    allowedPorts: config.webhooks.allowedPorts,
    heartbeatMs: JOB_HEARTBEAT_MS,
    onAttemptStart: (info) => logger.debug('webhook attempt started', info),
    onAttempt: (report) => reportAttempt(report, logger, metrics),
  });

  const dispatching = new Set<JobContext<unknown>>();
  const events = await startJobConsumer<unknown>(nats, {
    stream: names.streams.events,
    consumer: WEBHOOK_DISPATCHER_CONSUMER,
    ackWaitMs: WEBHOOK_ACK_WAIT_MS,
    heartbeatMs: JOB_HEARTBEAT_MS,
    maxAckPending: 1000,
    description: 'docgen webhooks: fans final-state events out to deliveries',
    concurrency: DISPATCH_CONCURRENCY,
    stopTimeoutMs: config.shutdownGraceMs,
    handler: async (job) => {
      const event = parseWebhookSourceEvent(job.data);
      if (typeof event === 'string') {
        logger.error('dropping a malformed event', {
          subject: job.subject,
          streamSequence: job.streamSequence,
          problem: event,
        });
        job.term();
        return;
      }
      dispatching.add(job);
      try {
        const result = await withSpan(
          'dispatch final event',
          {
            kind: SpanKind.CONSUMER,
            parent: contextFromHeaders(job.headers),
            attributes: {
              ...(isBatchEvent(event)
                ? { 'docgen.batch.id': event.batchId }
                : { 'docgen.generation.id': event.generationId }),
              'docgen.event': event.event,
            },
          },
          () => dispatcher.dispatch(event),
        );
        logger.debug('event fanned out', {
          eventId: event.eventId,
          event: event.event,
          ...(isBatchEvent(event) ? { batchId: event.batchId } : { generationId: event.generationId }),
          ...result,
        });
      } finally {
        dispatching.delete(job);
      }
      // Returning acks the event: every delivery is written and its job published.
    },
    onError: (err) => logger.warn('webhook dispatch failed; the event will be redelivered', { err: String(err) }),
  });

  const sends = await startJobConsumer<DeliveryJob>(nats, {
    stream: names.streams.deliveries,
    consumer: WEBHOOK_SENDER_CONSUMER,
    ackWaitMs: WEBHOOK_ACK_WAIT_MS,
    heartbeatMs: JOB_HEARTBEAT_MS,
    // Jobs waiting for their retry (naked with a delay) stay "ack pending" on the server.
    // A cap would let one dead endpoint's waiting retries block every other delivery, so
    // there is none; this process still holds only `concurrency` jobs at a time.
    maxAckPending: -1,
    description: 'docgen webhooks: delivery attempts',
    concurrency: config.webhooks.concurrency,
    stopTimeoutMs: config.shutdownGraceMs,
    handler: async (job) => {
      await withSpan(
        'webhook delivery job',
        {
          kind: SpanKind.CONSUMER,
          parent: contextFromHeaders(job.headers),
          attributes: {
            'docgen.delivery.id': String(job.data?.deliveryId ?? ''),
            'messaging.message.delivery_count': job.deliveryCount,
          },
        },
        async (span) => {
          const step = await worker.handle(job);
          span?.setAttribute('docgen.delivery.step', step);
        },
      );
    },
    onError: (err) => logger.warn('webhook delivery job failed; it will be redelivered', { err: String(err) }),
  });

  const sweeper = new DeliverySweeper({
    deliveries: repositories.deliveries,
    stats: repositories.stats,
    publishJob,
    intervalMs: SWEEP_INTERVAL_MS,
    graceMs: SWEEP_GRACE_MS,
    onRequeued: (deliveryId) => logger.warn('re-queued a delivery whose job was lost', { deliveryId }),
    onError: (err) => logger.warn('delivery sweep failed', { err: String(err) }),
  });
  sweeper.start();

  let stopped = false;
  return {
    name: 'webhooks',
    dispatcher,
    worker,
    sweeper,
    readiness: {},
    consumers: [events, sends],
    gauges: [
      [
        'docgen_webhook_queue_depth',
        async () => (await nats.jsm.streams.info(names.streams.deliveries)).state.messages,
      ],
      // Both consumers: events not yet fanned out, and delivery jobs not yet settled
      // (retries waiting for their delay included).
      ['docgen_webhook_consumer_pending', async () => (await events.backlog()) + (await sends.backlog())],
    ],
    async stopAccepting() {
      if (stopped) return;
      stopped = true;
      events.stop();
      sends.stop();
      await sweeper.stop();
    },
    async drain(signal) {
      const handBack = () => {
        // Past the grace period: cut off running attempts (their jobs are naked at once)
        // and hand back events still being fanned out (fan-out is idempotent).
        worker.abortAttempts();
        for (const job of dispatching) job.nak(0);
      };
      if (signal.aborted) handBack();
      else signal.addEventListener('abort', handBack, { once: true });
      const [dispatched, sent] = await Promise.all([events.done, sends.done]);
      signal.removeEventListener('abort', handBack);
      if (dispatched.abandoned + sent.abandoned > 0) {
        logger.warn('shutdown left work running; JetStream redelivers it after ack_wait', {
          events: dispatched.abandoned,
          deliveries: sent.abandoned,
        });
      }
    },
    async close() {},
  };
}

function reportAttempt(report: AttemptReport, logger: Logger, metrics: Metrics): void {
  const { result } = report;
  if (result) metrics.observeWebhookAttempt(result.kind, result.durationMs / 1000);
  const fields = {
    deliveryId: report.deliveryId,
    endpointId: report.endpointId,
    attempt: report.attempt.number,
    roundAttempts: report.roundAttempts,
    statusCode: report.attempt.statusCode || undefined,
    error: report.attempt.error || undefined,
    durationMs: report.attempt.durationMs,
    status: report.status,
    nextAttemptAt: report.nextAttemptAt?.toISOString(),
  };
  if (report.status === undefined) logger.info('webhook attempt made twice (another worker recorded it first)', fields);
  else if (report.status === 'SUCCEEDED') logger.debug('webhook delivered', fields);
  else if (report.status === 'DROPPED') logger.warn('webhook delivery dropped', fields);
  // Not sent for a reason on docgen's side (e.g. a secret that does not decrypt): the operator's problem.
  else if (!result) logger.error('webhook attempt could not be made; will retry', fields);
  else logger.info('webhook attempt failed; will retry', fields);
}
