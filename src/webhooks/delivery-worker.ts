// Handles one delivery job: at most one attempt, then the job is settled.
//
// The delivery's state lives in MongoDB; the job only says "look at delivery X". Waiting
// between attempts is done by JetStream: a failed attempt records nextAttemptAt and naks
// the job with that delay, so the wait survives a crash of this process (the broker
// redelivers to whichever webhooks process pulls next). A job that arrives early (a
// duplicate, a sweeper re-queue) is naked until the delivery is due.
//
// Duplicates are tolerated, not prevented: a job for a delivery this process is already
// sending is dropped, and recording an attempt is conditional on the attempt count seen
// before sending, so of two workers racing on one delivery only one records and carries
// on; the other drops its job. Receivers dedupe on X-Service-Delivery (at-least-once).
import type { ObjectId } from 'mongodb';
import { formatId, parseId } from '../domain/ids.ts';
import { countDeliveryAttempt, type DeliveryStatsDeps } from './delivery-stats.ts';
import type { DeliveriesRepository } from '../store/deliveries-repository.ts';
import {
  deliveryAttemptsMade,
  type DeliveryAttemptDoc,
  type DeliveryDoc,
  type WebhookEndpointDoc,
} from '../store/documents.ts';
import type { WebhookEndpointsRepository } from '../store/webhook-endpoints-repository.ts';
import type { HostLookup } from './address-guard.ts';
import type { DeliveryJob } from '../queue/messages.ts';
import type { EndpointLimiter } from './endpoint-limiter.ts';
import { markSpanError, SpanKind, withSpan } from '../ops/tracing.ts';
import { sendAttempt, type AttemptResult } from './http-sender.ts';
import { nextAttemptDelayMs } from './retry-schedule.ts';
import { buildSignedRequest, openSigningSecrets, type WebhookEventData } from './signing.ts';
import { errorMessage } from '../domain/errors.ts';

/** Characters of a receiver's answer kept with each attempt (the portal shows them). */
const RESPONSE_EXCERPT_STORED_CHARS = 1024;

/** What the worker needs of a queue job (JetStream's JobContext fits). */
export interface DeliveryJobHandle {
  readonly data: DeliveryJob;
  /** 1 on the first delivery of this job message, then 2, 3, … (naks included). */
  readonly deliveryCount: number;
  working(): void;
  ack(): void;
  nak(delayMs?: number): void;
  term(): void;
}

export type DeliveryStep =
  | 'invalid-job'
  | 'unknown-delivery'
  | 'not-pending'
  | 'not-due'
  | 'endpoint-busy'
  | 'duplicate-job'
  | 'sent'
  | 'lost-race'
  | 'aborted';

export interface AttemptReport {
  deliveryId: string;
  endpointId: string;
  /** The attempt as recorded (number counts every attempt of the delivery, across redeliveries). */
  attempt: DeliveryAttemptDoc;
  result: AttemptResult | undefined;
  /** State after the attempt; undefined when another worker recorded this attempt first. */
  status: DeliveryDoc['status'] | undefined;
  /** When the next attempt is due (PENDING only). */
  nextAttemptAt?: Date | undefined;
  /** Attempts made in the current round, this one included. */
  roundAttempts: number;
}

export interface DeliveryWorkerDeps {
  deliveries: Pick<DeliveriesRepository, 'get' | 'recordAttempt' | 'markAttemptCounted'>;
  /** The workspace statistics (delivery-stats.ts); each recorded attempt is counted once. */
  stats?: DeliveryStatsDeps['stats'] | undefined;
  endpoints: Pick<WebhookEndpointsRepository, 'get'>;
  /** DOCGEN_SECRET_KEY: opens the endpoints' signing secrets. */
  secretKey: Buffer;
  /** AES-GCM context a secret of this endpoint was sealed under (secret-box.ts: webhookSecretContext). */
  secretContext: (endpoint: WebhookEndpointDoc) => string;
  limiter: EndpointLimiter;
  /** DOCGEN_WEBHOOK_TIMEOUT_MS. */
  timeoutMs: number;
  /** DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS. */
  allowInsecure: boolean;
  /** DOCGEN_WEBHOOK_ALLOWED_PORTS. */
  allowedPorts?: readonly number[] | undefined;
  /** Interval of working() while an attempt runs, so the job's ack_wait never expires under it. */
  heartbeatMs: number;
  lookup?: HostLookup | undefined;
  now?: () => number;
  random?: () => number;
  /** An attempt is about to be sent (logs). */
  onAttemptStart?: (info: { deliveryId: string; attempt: number }) => void;
  /** Every attempt made (metrics, logs). */
  onAttempt?: (report: AttemptReport) => void;
}

export class DeliveryWorker {
  private readonly deps: DeliveryWorkerDeps;
  /** Deliveries this process is attempting right now. */
  private readonly sending = new Set<string>();
  private readonly abort = new AbortController();

  constructor(deps: DeliveryWorkerDeps) {
    this.deps = deps;
  }

  /** Attempts in flight in this process. */
  get inFlight(): number {
    return this.sending.size;
  }

  /**
   * Shutdown past its grace: attempts still running are cut off, not recorded (no verdict
   * on the receiver), and their jobs handed back at once so another process retries them.
   */
  abortAttempts(): void {
    this.abort.abort();
  }

  /** Handles the job and settles it (ack, nak or term). Throws only when the database does; the caller naks then. */
  async handle(job: DeliveryJobHandle): Promise<DeliveryStep> {
    const now = this.deps.now ?? Date.now;
    const deliveryId = typeof job.data?.deliveryId === 'string' ? job.data.deliveryId : '';
    const objectId = parseId('delivery', deliveryId);
    if (!objectId) {
      job.term();
      return 'invalid-job';
    }
    if (this.abort.signal.aborted) {
      job.nak();
      return 'aborted';
    }
    // The job names its endpoint: a saturated one is paced without touching the database.
    const hinted =
      typeof job.data.endpointId === 'string' && parseId('webhookEndpoint', job.data.endpointId)
        ? job.data.endpointId
        : undefined;
    if (hinted && this.deps.limiter.isSaturated(hinted)) {
      job.nak(this.deps.limiter.retryDelayMs(hinted, job.deliveryCount - 1));
      return 'endpoint-busy';
    }
    if (this.sending.has(deliveryId)) {
      // The job being worked on here carries the delivery on (and is redelivered if we crash).
      job.ack();
      return 'duplicate-job';
    }
    this.sending.add(deliveryId);
    try {
      return await this.attempt(job, objectId, deliveryId, now);
    } finally {
      this.sending.delete(deliveryId);
    }
  }

  private async attempt(
    job: DeliveryJobHandle,
    objectId: ObjectId,
    deliveryId: string,
    now: () => number,
  ): Promise<DeliveryStep> {
    const doc = await this.deps.deliveries.get(objectId);
    if (!doc) {
      job.term();
      return 'unknown-delivery';
    }
    if (doc.status !== 'PENDING') {
      job.ack();
      return 'not-pending';
    }
    const wait = (doc.nextAttemptAt?.getTime() ?? 0) - now();
    if (wait > 0) {
      job.nak(Math.ceil(wait));
      return 'not-due';
    }
    const endpointId = formatId('webhookEndpoint', doc.endpointId);
    if (!this.deps.limiter.tryAcquire(endpointId)) {
      job.nak(this.deps.limiter.retryDelayMs(endpointId, job.deliveryCount - 1));
      return 'endpoint-busy';
    }
    let durationMs: number | undefined;
    let report: AttemptReport | undefined;
    try {
      const startedAt = now();
      const outcome = await this.send(job, doc, deliveryId);
      if (outcome.result?.aborted) {
        job.nak();
        return 'aborted';
      }
      durationMs = outcome.result?.durationMs;
      const finishedAt = now();
      const attempt: DeliveryAttemptDoc = {
        number: deliveryAttemptsMade(doc) + 1,
        attemptedAt: new Date(startedAt),
        statusCode: outcome.result?.statusCode ?? 0,
        error: outcome.result ? (outcome.result.error ?? '') : outcome.notSent,
        durationMs: outcome.result ? outcome.result.durationMs : 0,
      };
      const excerpt = outcome.result?.responseExcerpt;
      if (excerpt) attempt.responseExcerpt = excerpt.slice(0, RESPONSE_EXCERPT_STORED_CHARS);
      const roundAttempts = doc.roundAttempts + 1;
      // After a failure: the schedule's next delay, or none (dropped) after the 6th attempt.
      const delay =
        outcome.result?.ok || outcome.drop ? undefined : nextAttemptDelayMs(roundAttempts, this.deps.random);
      const next = outcome.result?.ok
        ? ({ status: 'SUCCEEDED' } as const)
        : delay === undefined
          ? ({ status: 'DROPPED' } as const)
          : ({ status: 'PENDING', nextAttemptAt: new Date(finishedAt + delay) } as const);
      // Conditional on the attempts seen before sending: a second worker on the same
      // delivery cannot record this attempt again.
      const updated = await this.deps.deliveries.recordAttempt(doc._id, doc.round, doc.roundAttempts, attempt, next);
      report = {
        deliveryId,
        endpointId,
        attempt,
        result: outcome.result,
        status: updated ? next.status : undefined,
        nextAttemptAt: next.status === 'PENDING' ? next.nextAttemptAt : undefined,
        roundAttempts,
      };
      if (!updated) {
        job.ack();
        return 'lost-race';
      }
      if (this.deps.stats) {
        // A failure here leaves statsDue set: the delivery sweeper counts it later.
        await countDeliveryAttempt({ stats: this.deps.stats, deliveries: this.deps.deliveries }, updated).catch(
          () => {},
        );
      }
      if (next.status === 'PENDING') job.nak(Math.max(1, next.nextAttemptAt.getTime() - now()));
      else job.ack();
      return 'sent';
    } finally {
      this.deps.limiter.release(endpointId, durationMs);
      if (report) this.deps.onAttempt?.(report);
    }
  }

  /** Builds and sends the request; `notSent` explains an attempt that could not be made. */
  private async send(
    job: DeliveryJobHandle,
    doc: DeliveryDoc,
    deliveryId: string,
  ): Promise<
    | { result: AttemptResult; notSent?: undefined; drop?: undefined }
    | { result: undefined; notSent: string; drop: boolean }
  > {
    const endpoint = await this.deps.endpoints.get(doc.endpointId);
    if (!endpoint) return { result: undefined, notSent: 'not sent: the webhook endpoint was deleted', drop: true };
    let request;
    try {
      const secrets = openSigningSecrets(endpoint, this.deps.secretKey, this.deps.secretContext(endpoint), new Date());
      const data = deliveryEventData(doc);
      if (doc.test === true) data.test = true;
      request = buildSignedRequest({ deliveryId, data, eventTimestamp: doc.timestamp, secrets });
    } catch (err) {
      // Typically DOCGEN_SECRET_KEY changed: retried on the schedule, then dropped; an
      // operator can redeliver once the key is right.
      return { result: undefined, notSent: `not sent: ${errorMessage(err)}`, drop: false };
    }
    const heartbeat = setInterval(() => job.working(), this.deps.heartbeatMs);
    try {
      const attempt = deliveryAttemptsMade(doc) + 1;
      this.deps.onAttemptStart?.({ deliveryId, attempt });
      const result = await withSpan(
        'webhook attempt',
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'docgen.delivery.id': deliveryId,
            'docgen.delivery.attempt': attempt,
            'server.address': hostOf(endpoint.url),
          },
        },
        async (span) => {
          const sent = await sendAttempt({
            url: endpoint.url,
            headers: request.headers,
            body: request.body,
            timeoutMs: this.deps.timeoutMs,
            allowInsecure: this.deps.allowInsecure,
            allowedPorts: this.deps.allowedPorts,
            lookup: this.deps.lookup,
            signal: this.abort.signal,
          });
          if (sent.statusCode) span?.setAttribute('http.response.status_code', sent.statusCode);
          if (!sent.ok) markSpanError(span, sent.error ?? `HTTP ${sent.statusCode}`);
          return sent;
        },
      );
      return { result };
    } finally {
      clearInterval(heartbeat);
    }
  }
}

/** The endpoint's host for a span (never the path or query, which may carry tokens). */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** What a delivery's request says, from the payload stored with it. */
export function deliveryEventData(doc: Pick<DeliveryDoc, 'event' | 'payload'>): WebhookEventData {
  const payload = doc.payload;
  if ('batchId' in payload)
    return { event: 'batch.completed', batchId: payload.batchId, completed: payload.completed, failed: payload.failed };
  return doc.event === 'generation.failed'
    ? { event: 'generation.failed', generationId: payload.generationId, error: payload.error ?? '' }
    : { event: 'generation.completed', generationId: payload.generationId };
}
