// docgen's messages on top of the generic JetStream queue: every render job, final event and
// delivery job is published through here (subjects and msgID rules in messages.ts), with
// the caller's trace context in the message headers.
import type { NatsQueue } from './jetstream.ts';
import { deliveryJobsSubject, finalEventMsgId, finalEventSubject, renderJobsSubject, type DeliveryJob, type FinalEvent } from './messages.ts';

export interface DocgenQueue {
  nats: NatsQueue;
  publishRenderJob(generationId: string, msgId: string): Promise<void>;
  /** One event per generation: the msgID derives from it. */
  publishFinalEvent(event: FinalEvent): Promise<void>;
  publishDeliveryJob(job: DeliveryJob, msgId: string): Promise<void>;
}

export interface DocgenQueueOptions {
  /** Headers to add to each publish, e.g. the current trace context (traceparent). */
  headers?: () => Record<string, string> | undefined;
}

export function createDocgenQueue(nats: NatsQueue, options: DocgenQueueOptions = {}): DocgenQueue {
  const prefix = nats.prefix;
  const headers = () => options.headers?.();
  return {
    nats,
    async publishRenderJob(generationId, msgId) {
      await nats.publish(renderJobsSubject(prefix), { generationId }, msgId, headers());
    },
    async publishFinalEvent(event) {
      await nats.publish(finalEventSubject(prefix, event.event), event, finalEventMsgId(event), headers());
    },
    async publishDeliveryJob(job, msgId) {
      const message: DeliveryJob = { deliveryId: job.deliveryId };
      if (job.endpointId !== undefined) message.endpointId = job.endpointId;
      await nats.publish(deliveryJobsSubject(prefix), message, msgId, headers());
    },
  };
}
