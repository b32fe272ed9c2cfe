// Fan-out: one final-state event becomes one delivery per endpoint of the workspace that
// selected the event. Each delivery is written once (its _id derives from event and
// endpoint, so a redelivered event finds it already there) and then its job is published;
// the caller acks the event only after this returns, so a crash anywhere in between makes
// JetStream hand the event over again and the fan-out completes on the next pass.
import type { ObjectId } from 'mongodb';
import { deterministicObjectId, formatId, parseId } from '../domain/ids.ts';
import type { DeliveriesRepository } from '../store/deliveries-repository.ts';
import type { DeliveryDoc } from '../store/documents.ts';
import type { WebhookEndpointsRepository } from '../store/webhook-endpoints-repository.ts';
import { WEBHOOK_EVENTS, type WebhookEventName } from './signing.ts';
import { isPlainObject } from '../domain/json.ts';

/**
 * A final-state event as it travels on `<prefix>.events.<event>` (the render pipeline's
 * FinalEvent). Validated here: it comes off the wire.
 */
export interface WebhookEvent {
  eventId: string;
  event: WebhookEventName;
  generationId: string;
  workspaceId: string;
  /** generation.failed only. */
  error?: string;
  /** Unix seconds of the final transition. */
  timestamp: number;
}

/** A delivery job on the deliveries subject. `endpointId` lets a worker pace a saturated endpoint without a database read. */
export interface DeliveryJob {
  deliveryId: string;
  endpointId?: string;
}

export interface DeliveryDispatcherDeps {
  endpoints: Pick<WebhookEndpointsRepository, 'subscribers'>;
  deliveries: Pick<DeliveriesRepository, 'insertOnce' | 'get'>;
  /** Publishes a delivery job; the msgId makes a repeated publish a no-op within the broker's duplicate window. */
  publishJob: (job: DeliveryJob, msgId: string) => Promise<void>;
  now?: () => Date;
}

export interface DispatchResult {
  /** Endpoints that selected the event. */
  endpoints: number;
  /** Deliveries inserted by this call (the rest existed: the event was seen before). */
  created: number;
}

/** The delivery of an event to an endpoint: always the same id, which is what makes fan-out idempotent. */
export function deliveryIdFor(eventId: ObjectId, endpointId: ObjectId): ObjectId {
  return deterministicObjectId(eventId.toHexString(), endpointId.toHexString());
}

/** The msgId of a delivery's first job. */
/** A new delivery of the event to one endpoint: PENDING, due now, round 1, no attempts yet. */
export function newDeliveryDoc(event: WebhookEvent, endpointId: ObjectId, now: Date): DeliveryDoc {
  const eventId = parseId('event', event.eventId)!;
  const payload: DeliveryDoc['payload'] = { generationId: event.generationId };
  if (event.event === 'generation.failed') payload.error = event.error ?? 'Rendering failed';
  return {
    _id: deliveryIdFor(eventId, endpointId),
    workspaceId: parseId('workspace', event.workspaceId)!,
    endpointId,
    eventId,
    event: event.event,
    generationId: parseId('generation', event.generationId)!,
    // Stored with the delivery so every attempt, and a redeliver, sends the same bytes.
    payload,
    timestamp: event.timestamp,
    status: 'PENDING',
    attempts: [],
    roundAttempts: 0,
    round: 1,
    createdAt: now,
    updatedAt: now,
    nextAttemptAt: now,
  };
}

export function firstJobMsgId(deliveryId: string): string {
  return `${deliveryId}:1`;
}

/** Checks an event off the wire; a string says what is wrong with it. */
export function parseWebhookEvent(data: unknown): WebhookEvent | string {
  if (!isPlainObject(data)) return 'the event is not a JSON object';
  const e = data as Record<string, unknown>;
  if (typeof e.eventId !== 'string' || !parseId('event', e.eventId)) return 'eventId is not an evt_… id';
  if (typeof e.event !== 'string' || !(WEBHOOK_EVENTS as readonly string[]).includes(e.event)) return `unknown event ${JSON.stringify(e.event)}`;
  if (typeof e.generationId !== 'string' || !parseId('generation', e.generationId)) return 'generationId is not a gen_… id';
  if (typeof e.workspaceId !== 'string' || !parseId('workspace', e.workspaceId)) return 'workspaceId is not a ws_… id';
  if (!Number.isSafeInteger(e.timestamp) || (e.timestamp as number) < 0) return 'timestamp is not whole Unix seconds';
  if (e.error !== undefined && typeof e.error !== 'string') return 'error is not a string';
  const event: WebhookEvent = {
    eventId: e.eventId,
    event: e.event as WebhookEventName,
    generationId: e.generationId,
    workspaceId: e.workspaceId,
    timestamp: e.timestamp as number,
  };
  if (e.event === 'generation.failed') event.error = typeof e.error === 'string' ? e.error : 'Rendering failed';
  return event;
}

export class DeliveryDispatcher {
  private readonly deps: DeliveryDispatcherDeps;
  constructor(deps: DeliveryDispatcherDeps) {
    this.deps = deps;
  }

  /** Fans the event out. Throws when a write or publish fails: the caller must not ack the event then. */
  async dispatch(event: WebhookEvent): Promise<DispatchResult> {
    const endpoints = await this.deps.endpoints.subscribers(parseId('workspace', event.workspaceId)!, event.event);

    const created = await Promise.all(
      endpoints.map(async (endpoint) => {
        const now = (this.deps.now ?? (() => new Date()))();
        const doc = newDeliveryDoc(event, endpoint._id, now);
        const deliveryId = formatId('delivery', doc._id);
        const job: DeliveryJob = { deliveryId, endpointId: formatId('webhookEndpoint', endpoint._id) };
        const inserted = await this.deps.deliveries.insertOnce(doc);
        if (!inserted) {
          // Seen before. Its first job may not have been published (a crash between insert
          // and publish): publish it again under the same msgId, which the broker drops if
          // it did get through recently. Once attempts ran, the job is alive: leave it be.
          const existing = await this.deps.deliveries.get(doc._id);
          if (!existing || existing.status !== 'PENDING' || existing.round !== 1 || existing.roundAttempts !== 0) return false;
        }
        await this.deps.publishJob(job, firstJobMsgId(deliveryId));
        return inserted;
      }),
    );
    return { endpoints: endpoints.length, created: created.filter(Boolean).length };
  }
}
