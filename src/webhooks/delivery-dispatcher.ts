// Fan-out: one final-state event becomes one delivery per endpoint of the workspace that
// selected the event (a test generation's event: only the endpoints that opted in to test
// events, docs/interface.md#test-mode). Each delivery is written once (its _id derives from event and
// endpoint, so a redelivered event finds it already there) and then its job is published;
// the caller acks the event only after this returns, so a crash anywhere in between makes
// JetStream hand the event over again and the fan-out completes on the next pass.
import type { ObjectId } from 'mongodb';
import { deterministicObjectId, formatId, parseId, timeOrderedObjectId } from '../domain/ids.ts';
import type { DeliveriesRepository } from '../store/deliveries-repository.ts';
import type { DeliveryDoc } from '../store/documents.ts';
import type { WebhookEndpointsRepository } from '../store/webhook-endpoints-repository.ts';
import { firstDeliveryJobMsgId, isBatchEvent, type DeliveryJob, type WebhookSourceEvent } from '../queue/messages.ts';

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

/**
 * The delivery of an event to an endpoint: always the same id, which is what makes fan-out
 * idempotent. Its time bytes are the event's (the final transition's second), so ListDeliveries,
 * ordered by id, is newest first.
 */
export function deliveryIdFor(eventId: ObjectId, endpointId: ObjectId, eventTimestamp: number): ObjectId {
  return timeOrderedObjectId(eventTimestamp, eventId.toHexString(), endpointId.toHexString());
}

/** The id a delivery had before ids carried their event's time (rows written by docgen 0.1). */
export function legacyDeliveryIdFor(eventId: ObjectId, endpointId: ObjectId): ObjectId {
  return deterministicObjectId(eventId.toHexString(), endpointId.toHexString());
}

/** A new delivery of the event to one endpoint: PENDING, due now, round 1, no attempts yet. */
export function newDeliveryDoc(event: WebhookSourceEvent, endpointId: ObjectId, now: Date): DeliveryDoc {
  const eventId = parseId('event', event.eventId)!;
  let payload: DeliveryDoc['payload'];
  if (isBatchEvent(event)) payload = { batchId: event.batchId, completed: event.completed, failed: event.failed };
  else if (event.event === 'generation.failed')
    payload = { generationId: event.generationId, error: event.error ?? 'Rendering failed' };
  else payload = { generationId: event.generationId };
  const subject = isBatchEvent(event)
    ? { generationId: null, batchId: parseId('batch', event.batchId)! }
    : { generationId: parseId('generation', event.generationId)! };
  return {
    _id: deliveryIdFor(eventId, endpointId, event.timestamp),
    workspaceId: parseId('workspace', event.workspaceId)!,
    endpointId,
    eventId,
    event: event.event,
    ...subject,
    // Stored with the delivery so every attempt, and a redeliver, sends the same bytes.
    payload,
    timestamp: event.timestamp,
    status: 'PENDING',
    attempts: [],
    attemptCount: 0,
    roundAttempts: 0,
    round: 1,
    createdAt: now,
    updatedAt: now,
    nextAttemptAt: now,
    // A test generation's body says "test": true (the delivery worker adds it from this flag).
    ...(event.test === true ? { test: true } : {}),
  };
}

export class DeliveryDispatcher {
  private readonly deps: DeliveryDispatcherDeps;
  constructor(deps: DeliveryDispatcherDeps) {
    this.deps = deps;
  }

  /** Fans the event out. Throws when a write or publish fails: the caller must not ack the event then. */
  async dispatch(event: WebhookSourceEvent): Promise<DispatchResult> {
    const endpoints = await this.deps.endpoints.subscribers(parseId('workspace', event.workspaceId)!, event.event, {
      test: event.test === true,
    });

    const created = await Promise.all(
      endpoints.map(async (endpoint) => {
        const now = (this.deps.now ?? (() => new Date()))();
        const doc = newDeliveryDoc(event, endpoint._id, now);
        // An event fanned out before ids carried its time (docgen 0.1) has its delivery under
        // the old id: that one stands, so an upgrade never delivers an event twice.
        const legacy = await this.deps.deliveries.get(legacyDeliveryIdFor(doc.eventId, endpoint._id));
        const inserted = legacy ? false : await this.deps.deliveries.insertOnce(doc);
        const existing = inserted ? doc : (legacy ?? (await this.deps.deliveries.get(doc._id)));
        // Seen before: its first job may not have been published (a crash between insert and
        // publish): publish it again under the same msgId, which the broker drops if it did
        // get through recently. Once attempts ran, the job is alive: leave it be.
        if (!existing || existing.status !== 'PENDING' || existing.round !== 1 || existing.roundAttempts !== 0)
          return false;
        const deliveryId = formatId('delivery', existing._id);
        const job: DeliveryJob = { deliveryId, endpointId: formatId('webhookEndpoint', endpoint._id) };
        await this.deps.publishJob(job, firstDeliveryJobMsgId(deliveryId));
        return inserted;
      }),
    );
    return { endpoints: endpoints.length, created: created.filter(Boolean).length };
  }
}
