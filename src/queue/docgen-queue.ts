// docgen's messages on top of the generic JetStream queue: every render job, final event and
// delivery job is published through here (subjects and msgID rules in messages.ts), with
// the active trace context in the message headers.
import { SpanKind, traceHeaders, withSpan } from '../ops/tracing.ts';
import type { NatsQueue } from './jetstream.ts';
import {
  deliveryJobsSubject,
  finalEventMsgId,
  finalEventSubject,
  renderLaneSubject,
  type BatchCompletedEvent,
  type DeliveryJob,
  type FinalEvent,
  type RenderRoute,
} from './messages.ts';

export interface DocgenQueue {
  nats: NatsQueue;
  /** Into the generation's workspace lane (renderRouteOf). */
  publishRenderJob(generationId: string, msgId: string, route: RenderRoute): Promise<void>;
  /** One event per generation: the msgID derives from it. */
  publishFinalEvent(event: FinalEvent): Promise<void>;
  /** One event per batch: the msgID is its event id. */
  publishBatchEvent(event: BatchCompletedEvent): Promise<void>;
  publishDeliveryJob(job: DeliveryJob, msgId: string): Promise<void>;
}

export function createDocgenQueue(nats: NatsQueue): DocgenQueue {
  const prefix = nats.prefix;
  // Each publish is a PRODUCER span; the message carries its context, so the consumer's span
  // is its child (one trace per generation across processes).
  const publish = (what: string, subject: string, data: object, msgId: string, attributes: Record<string, string>) =>
    withSpan(
      `publish ${what}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject, ...attributes },
      },
      async () => {
        await nats.publish(subject, data, msgId, traceHeaders());
      },
    );
  return {
    nats,
    async publishRenderJob(generationId, msgId, route) {
      await publish('render job', renderLaneSubject(prefix, route), { generationId }, msgId, {
        'docgen.generation.id': generationId,
        'docgen.workspace.id': route.workspaceId,
        'docgen.render.lane': route.lane,
      });
    },
    async publishFinalEvent(event) {
      await publish('final event', finalEventSubject(prefix, event.event), event, finalEventMsgId(event), {
        'docgen.generation.id': event.generationId,
        'docgen.event': event.event,
      });
    },
    async publishBatchEvent(event) {
      await publish('batch event', finalEventSubject(prefix, event.event), event, event.eventId, {
        'docgen.batch.id': event.batchId,
        'docgen.event': event.event,
      });
    },
    async publishDeliveryJob(job, msgId) {
      const message: DeliveryJob = { deliveryId: job.deliveryId };
      if (job.endpointId !== undefined) message.endpointId = job.endpointId;
      await publish('delivery job', deliveryJobsSubject(prefix), message, msgId, {
        'docgen.delivery.id': job.deliveryId,
      });
    },
  };
}
