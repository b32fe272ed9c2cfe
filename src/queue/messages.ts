// docgen's messages on JetStream, in one place: what each carries, the subject it travels
// on, how it is read back off the wire, and the msgID rule that makes a repeated publish of
// the same message a no-op within the broker's duplicate window.
//
//   render job    <p>.render.ws.<ws>.<lane>  { generationId }   lane: single | batch
//                 API, outbox sweeper -> render workers (fair scheduling: src/queue/fair-puller.ts)
//   legacy job    <p>.render.jobs         { generationId }
//                 written by releases before per-workspace lanes; still drained, never written
//   final event   <p>.events.<event>      FinalEvent
//                 render pipeline, outbox sweeper -> webhook dispatcher
//   batch event   <p>.events.batch.completed  BatchCompletedEvent
//                 render pipeline (the batch's last item), outbox sweeper -> webhook dispatcher
//   delivery job  <p>.deliveries.jobs     { deliveryId, endpointId }
//                 dispatcher, delivery sweeper, admin redeliver -> webhook senders
import { deterministicObjectId, formatId, parseId } from '../domain/ids.ts';
import { isPlainObject } from '../domain/json.ts';
import type { BatchDoc, GenerationDoc } from '../store/documents.ts';

// ---------------------------------------------------------------------------------------------
// Subjects and streams

/** The stream of releases before per-workspace lanes: still drained after an upgrade, no longer written. */
export const renderStreamName = (prefix: string) => `${prefix}_RENDER`;
/** The render lanes: one subject per workspace and lane, in one work-queue stream. */
export const renderLanesStreamName = (prefix: string) => `${prefix}_RENDER_LANES`;
export const eventsStreamName = (prefix: string) => `${prefix}_EVENTS`;
export const deliveriesStreamName = (prefix: string) => `${prefix}_DELIVERIES`;
export const renderJobsSubject = (prefix: string) => `${prefix.toLowerCase()}.render.jobs`;
/** Every lane subject: `<p>.render.ws.<workspace id>.<lane>`. */
export const renderLanesWildcardSubject = (prefix: string) => `${prefix.toLowerCase()}.render.ws.*.*`;
export const eventsWildcardSubject = (prefix: string) => `${prefix.toLowerCase()}.events.>`;
export const deliveryJobsSubject = (prefix: string) => `${prefix.toLowerCase()}.deliveries.jobs`;
/** The subject a final event travels on, e.g. `docgen.events.generation.completed`. */
export const finalEventSubject = (prefix: string, event: FinalEventName | BatchEventName) =>
  `${prefix.toLowerCase()}.events.${event}`;

export interface QueueNames {
  streams: { render: string; renderLanes: string; events: string; deliveries: string };
  subjects: { renderJobs: string; renderLanes: string; eventsWildcard: string; deliveryJobs: string };
}

export function queueNames(prefix: string): QueueNames {
  return {
    streams: {
      render: renderStreamName(prefix),
      renderLanes: renderLanesStreamName(prefix),
      events: eventsStreamName(prefix),
      deliveries: deliveriesStreamName(prefix),
    },
    subjects: {
      renderJobs: renderJobsSubject(prefix),
      renderLanes: renderLanesWildcardSubject(prefix),
      eventsWildcard: eventsWildcardSubject(prefix),
      deliveryJobs: deliveryJobsSubject(prefix),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Render job

export interface RenderJob {
  generationId: string;
}

/**
 * The lane a generation's job waits in. A workspace's single generations go ahead of its batch
 * items (src/queue/fair-scheduler.ts).
 */
export type RenderLane = 'single' | 'batch';
export const RENDER_LANES: readonly RenderLane[] = ['single', 'batch'];

/** Where a render job is published: its workspace (`ws_…`) and lane. */
export interface RenderRoute {
  workspaceId: string;
  lane: RenderLane;
}

/** A generation's route: batch items (the row names a batch) wait in the batch lane. */
export function renderRouteOf(doc: Pick<GenerationDoc, 'workspaceId' | 'batchId'>): RenderRoute {
  return {
    workspaceId: formatId('workspace', doc.workspaceId),
    lane: doc.batchId ? 'batch' : 'single',
  };
}

export function renderLaneSubject(prefix: string, route: RenderRoute): string {
  return `${prefix.toLowerCase()}.render.ws.${route.workspaceId}.${route.lane}`;
}

/** The route a lane subject names; undefined for any other subject. */
export function parseRenderLaneSubject(prefix: string, subject: string): RenderRoute | undefined {
  const head = `${prefix.toLowerCase()}.render.ws.`;
  if (!subject.startsWith(head)) return undefined;
  const [workspaceId, lane, ...rest] = subject.slice(head.length).split('.');
  if (rest.length > 0 || !workspaceId || !parseId('workspace', workspaceId)) return undefined;
  if (lane !== 'single' && lane !== 'batch') return undefined;
  return { workspaceId, lane };
}

/**
 * The durable consumer of one lane, shared by every render process (its name is the lane's:
 * whoever needs it first creates it, the same config again is a no-op on the server).
 */
export function renderLaneConsumerName(route: RenderRoute): string {
  return `render-${route.workspaceId}-${route.lane}`;
}

/**
 * The API's own publish uses the bare generation id, so the outbox sweeper's first re-publish of
 * a row it never saw published collapses with it.
 */
export function renderJobMsgId(generationId: string): string {
  return generationId;
}

/**
 * A re-publish of a job that was published before (lost, or its worker's lease expired): a fresh
 * id per attempt and sweep.
 */
export function renderJobRepublishMsgId(generationId: string, attempts: number, now: Date): string {
  return `${generationId}:${attempts}:${now.getTime()}`;
}

/** Checks a render job off the wire; a string says what is wrong with it. */
export function parseRenderJob(data: unknown): RenderJob | string {
  if (!isPlainObject(data)) return 'the render job is not a JSON object';
  const generationId = (data as Record<string, unknown>).generationId;
  if (typeof generationId !== 'string' || !parseId('generation', generationId)) return 'generationId is not a gen_… id';
  return { generationId };
}

// ---------------------------------------------------------------------------------------------
// Final event

export type FinalEventName = 'generation.completed' | 'generation.failed';
export const FINAL_EVENTS: readonly FinalEventName[] = ['generation.completed', 'generation.failed'];

/** A generation reached its final state. Exactly one per generation: its id derives from the generation. */
export interface FinalEvent {
  eventId: string;
  event: FinalEventName;
  generationId: string;
  workspaceId: string;
  /** generation.failed only. */
  error?: string;
  /** Unix seconds of the final transition. */
  timestamp: number;
  /**
   * A test generation's event (docs/interface.md#test-mode): delivered only to endpoints that
   * opted in to test events, with `"test": true` in the body. Absent for live generations.
   */
  test?: true;
}

/** The event of a final generation row (the same id every time it is built). */
export function finalEventFor(
  doc: Pick<GenerationDoc, '_id' | 'workspaceId' | 'status' | 'error' | 'updatedAt' | 'test'>,
): FinalEvent {
  const event: FinalEvent = {
    eventId: formatId('event', deterministicObjectId('event', doc._id.toHexString())),
    event: doc.status === 'COMPLETED' ? 'generation.completed' : 'generation.failed',
    generationId: formatId('generation', doc._id),
    workspaceId: formatId('workspace', doc.workspaceId),
    timestamp: Math.floor(doc.updatedAt.getTime() / 1000),
  };
  if (doc.status === 'FAILED') event.error = doc.error ?? 'Rendering failed';
  if (doc.test === true) event.test = true;
  return event;
}

/** One event per generation: the msgID is the event id. */
export function finalEventMsgId(event: FinalEvent): string {
  return event.eventId;
}

/** Checks an event off the wire; a string says what is wrong with it. */
export function parseFinalEvent(data: unknown): FinalEvent | string {
  if (!isPlainObject(data)) return 'the event is not a JSON object';
  const e = data as Record<string, unknown>;
  if (typeof e.eventId !== 'string' || !parseId('event', e.eventId)) return 'eventId is not an evt_… id';
  if (typeof e.event !== 'string' || !(FINAL_EVENTS as readonly string[]).includes(e.event))
    return `unknown event ${JSON.stringify(e.event)}`;
  if (typeof e.generationId !== 'string' || !parseId('generation', e.generationId))
    return 'generationId is not a gen_… id';
  if (typeof e.workspaceId !== 'string' || !parseId('workspace', e.workspaceId)) return 'workspaceId is not a ws_… id';
  if (!Number.isSafeInteger(e.timestamp) || (e.timestamp as number) < 0) return 'timestamp is not whole Unix seconds';
  if (e.error !== undefined && typeof e.error !== 'string') return 'error is not a string';
  if (e.test !== undefined && typeof e.test !== 'boolean') return 'test is not a boolean';
  const event: FinalEvent = {
    eventId: e.eventId,
    event: e.event as FinalEventName,
    generationId: e.generationId,
    workspaceId: e.workspaceId,
    timestamp: e.timestamp as number,
  };
  if (e.event === 'generation.failed') event.error = typeof e.error === 'string' ? e.error : 'Rendering failed';
  if (e.test === true) event.test = true;
  return event;
}

// ---------------------------------------------------------------------------------------------
// Batch event

export type BatchEventName = 'batch.completed';
export const BATCH_EVENTS: readonly BatchEventName[] = ['batch.completed'];

/** Every item of a batch is final. Exactly one per batch: its id derives from the batch. */
export interface BatchCompletedEvent {
  eventId: string;
  event: BatchEventName;
  batchId: string;
  workspaceId: string;
  completed: number;
  failed: number;
  /** Unix seconds of the batch's COMPLETED transition. */
  timestamp: number;
  /** A test key's batch: delivered only to endpoints that opted in to test events. */
  test?: true;
}

/** Any event a webhook endpoint can receive. */
export type WebhookSourceEvent = FinalEvent | BatchCompletedEvent;

export function isBatchEvent(event: WebhookSourceEvent): event is BatchCompletedEvent {
  return event.event === 'batch.completed';
}

/** The event of a COMPLETED batch (the same id every time it is built). */
export function batchCompletedEventFor(
  doc: Pick<BatchDoc, '_id' | 'workspaceId' | 'completed' | 'failed' | 'updatedAt' | 'test'>,
): BatchCompletedEvent {
  const event: BatchCompletedEvent = {
    eventId: formatId('event', deterministicObjectId('batch-event', doc._id.toHexString())),
    event: 'batch.completed',
    batchId: formatId('batch', doc._id),
    workspaceId: formatId('workspace', doc.workspaceId),
    completed: doc.completed,
    failed: doc.failed,
    timestamp: Math.floor(doc.updatedAt.getTime() / 1000),
  };
  if (doc.test === true) event.test = true;
  return event;
}

/** Checks any event off the events stream (a generation's or a batch's); a string says what is wrong. */
export function parseWebhookSourceEvent(data: unknown): WebhookSourceEvent | string {
  if (!isPlainObject(data) || (data as Record<string, unknown>).event !== 'batch.completed')
    return parseFinalEvent(data);
  const e = data as Record<string, unknown>;
  if (typeof e.eventId !== 'string' || !parseId('event', e.eventId)) return 'eventId is not an evt_… id';
  if (typeof e.batchId !== 'string' || !parseId('batch', e.batchId)) return 'batchId is not a bat_… id';
  if (typeof e.workspaceId !== 'string' || !parseId('workspace', e.workspaceId)) return 'workspaceId is not a ws_… id';
  for (const count of ['completed', 'failed'] as const) {
    if (!Number.isSafeInteger(e[count]) || (e[count] as number) < 0) return `${count} is not a count`;
  }
  if (!Number.isSafeInteger(e.timestamp) || (e.timestamp as number) < 0) return 'timestamp is not whole Unix seconds';
  if (e.test !== undefined && typeof e.test !== 'boolean') return 'test is not a boolean';
  return {
    ...(e.test === true ? { test: true as const } : {}),
    eventId: e.eventId,
    event: 'batch.completed',
    batchId: e.batchId,
    workspaceId: e.workspaceId,
    completed: e.completed as number,
    failed: e.failed as number,
    timestamp: e.timestamp as number,
  };
}

// ---------------------------------------------------------------------------------------------
// Delivery job

/** "Look at delivery X". `endpointId` lets a worker pace a saturated endpoint without a database read. */
export interface DeliveryJob {
  deliveryId: string;
  endpointId?: string;
}

/** The delivery's first job (fan-out): a redelivered event re-publishes under the same id. */
export function firstDeliveryJobMsgId(deliveryId: string): string {
  return `${deliveryId}:1`;
}

/** An operator's redeliver starts a new round; one job per round. */
export function redeliverJobMsgId(deliveryId: string, round: number): string {
  return `${deliveryId}:redeliver:${round}`;
}

/**
 * The sweeper's re-queue of a job presumed lost: fresh, since the lost job's id may still be in
 * the duplicate window.
 */
export function sweptDeliveryJobMsgId(deliveryId: string, round: number, roundAttempts: number, now: number): string {
  return `${deliveryId}:sweep:${round}:${roundAttempts}:${now}`;
}
