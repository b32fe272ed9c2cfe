// "Send test event" for a webhook endpoint: a `generation.completed`-shaped ping marked as a
// test (`"test":true` at the end of the body, docs/webhooks.md), sent to one endpoint whatever
// events it selected. It is a delivery like any other: recorded with its attempts, signed,
// retried on the usual schedule and redeliverable, and it goes out through the delivery queue
// like every delivery. Its generation id names no generation.
import { ObjectId } from 'mongodb';
import { notFound } from '../domain/errors.ts';
import { formatId } from '../domain/ids.ts';
import type { DeliveriesRepository } from '../store/deliveries-repository.ts';
import type { WebhookEndpointsRepository } from '../store/webhook-endpoints-repository.ts';
import { firstDeliveryJobMsgId, type DeliveryJob, type FinalEvent } from '../queue/messages.ts';
import { newDeliveryDoc } from '../webhooks/delivery-dispatcher.ts';
import { quoteId, requireId } from '../domain/input.ts';

export interface WebhookTestEventsDeps {
  endpoints: Pick<WebhookEndpointsRepository, 'get'>;
  deliveries: Pick<DeliveriesRepository, 'insertOnce'>;
  /** Hands a delivery (`dlv_…`) to the webhook workers. */
  enqueueDelivery: (job: DeliveryJob, msgId: string) => Promise<void>;
  onEnqueueError?: ((deliveryId: string, err: unknown) => void) | undefined;
}

export interface TestEventSent {
  deliveryId: string;
  eventId: string;
}

export class WebhookTestEvents {
  private readonly deps: WebhookTestEventsDeps;
  constructor(deps: WebhookTestEventsDeps) {
    this.deps = deps;
  }

  async send(endpointId: string): Promise<TestEventSent> {
    const objectId = requireId('webhookEndpoint', endpointId, 'id', 'Webhook endpoint');
    const endpoint = await this.deps.endpoints.get(objectId);
    if (!endpoint) throw notFound(`Webhook endpoint ${quoteId(endpointId)}`);
    const now = new Date();
    const event: FinalEvent = {
      eventId: formatId('event', new ObjectId()),
      event: 'generation.completed',
      generationId: formatId('generation', new ObjectId()),
      workspaceId: formatId('workspace', endpoint.workspaceId),
      timestamp: Math.floor(now.getTime() / 1000),
    };
    const doc = { ...newDeliveryDoc(event, endpoint._id, now), test: true };
    await this.deps.deliveries.insertOnce(doc);
    const deliveryId = formatId('delivery', doc._id);
    try {
      await this.deps.enqueueDelivery(
        { deliveryId, endpointId: formatId('webhookEndpoint', endpoint._id) },
        firstDeliveryJobMsgId(deliveryId),
      );
    } catch (err) {
      // The delivery is PENDING and due: the webhooks sweeper sends it anyway.
      this.deps.onEnqueueError?.(deliveryId, err);
    }
    return { deliveryId, eventId: event.eventId };
  }
}
