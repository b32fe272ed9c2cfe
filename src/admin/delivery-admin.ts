// Webhook deliveries: read them with every attempt, and redeliver (a new round of attempts).
import { failedPrecondition, notFound, validationError } from '../domain/errors.ts';
import { formatId, parseId } from '../domain/ids.ts';
import { redeliverJobMsgId, type DeliveryJob } from '../queue/messages.ts';
import type { DeliveriesRepository, DeliveryFilter } from '../store/deliveries-repository.ts';
import type { DeliveryAttemptDoc, DeliveryDoc, DeliveryStatus } from '../store/documents.ts';
import type { Page, PageInput, PageTokens } from '../store/pagination.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';
import { quoteId, requireId, requireWorkspace } from '../domain/input.ts';

export interface DeliveryAttemptView {
  number: number;
  attemptedAt: Date;
  /** 0 when no answer was received. */
  statusCode: number;
  error: string;
  durationMs: number;
  /** The first bytes of the receiver's answer; '' when none. */
  responseExcerpt: string;
}

export interface DeliveryView {
  id: string;
  workspaceId: string;
  endpointId: string;
  eventId: string;
  event: string;
  /** Empty for a `batch.completed` delivery. */
  generationId: string;
  /** `batch.completed` deliveries: the batch, `bat_…`; empty otherwise. */
  batchId: string;
  status: DeliveryStatus;
  attempts: DeliveryAttemptView[];
  createdAt: Date;
  updatedAt: Date;
  nextAttemptAt: Date | null;
  /** A test event (SendTestEvent). */
  test: boolean;
}

export interface ListDeliveriesInput extends PageInput {
  workspaceId?: string | undefined;
  generationId?: string | undefined;
  /** Only deliveries to this endpoint (`whe_…`). */
  endpointId?: string | undefined;
  status?: DeliveryStatus | undefined;
}

export interface DeliveryAdminDeps {
  workspaces: WorkspacesRepository;
  deliveries: DeliveriesRepository;
  /** Hands the delivery (`dlv_…`) to the webhook workers. */
  enqueueDelivery: (job: DeliveryJob, msgId: string) => Promise<void>;
  /**
   * Told when the hand-over fails. The delivery is PENDING and due, so the webhooks sweeper
   * picks it up anyway; the redeliver itself still succeeds.
   */
  onEnqueueError?: ((deliveryId: string, err: unknown) => void) | undefined;
  pageTokens: PageTokens;
}

function toAttemptView(a: DeliveryAttemptDoc): DeliveryAttemptView {
  return {
    number: a.number,
    attemptedAt: a.attemptedAt,
    statusCode: a.statusCode,
    error: a.error,
    durationMs: a.durationMs,
    responseExcerpt: a.responseExcerpt ?? '',
  };
}

export function toDeliveryView(doc: DeliveryDoc): DeliveryView {
  return {
    id: formatId('delivery', doc._id),
    workspaceId: formatId('workspace', doc.workspaceId),
    endpointId: formatId('webhookEndpoint', doc.endpointId),
    eventId: formatId('event', doc.eventId),
    event: doc.event,
    generationId: doc.generationId ? formatId('generation', doc.generationId) : '',
    batchId: doc.batchId ? formatId('batch', doc.batchId) : '',
    status: doc.status,
    attempts: doc.attempts.map(toAttemptView),
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    nextAttemptAt: doc.status === 'PENDING' ? doc.nextAttemptAt : null,
    test: doc.test === true,
  };
}

export class DeliveryAdmin {
  private readonly deps: DeliveryAdminDeps;
  constructor(deps: DeliveryAdminDeps) {
    this.deps = deps;
  }

  /** By workspace, generation or endpoint (at least one), optionally by status; newest first. */
  async list(input: ListDeliveriesInput): Promise<Page<DeliveryView>> {
    const page = this.deps.pageTokens.request(input, {
      list: 'deliveries',
      filters: {
        workspace: input.workspaceId,
        generation: input.generationId,
        endpoint: input.endpointId,
        status: input.status,
      },
    });
    const filter: DeliveryFilter = {};
    if (!input.workspaceId && !input.generationId && !input.endpointId) {
      throw validationError([
        { field: 'workspaceId', issue: 'give a workspace, a generation or an endpoint (or several)' },
      ]);
    }
    if (input.endpointId) {
      const endpointId = parseId('webhookEndpoint', input.endpointId);
      if (!endpointId)
        throw validationError([
          {
            field: 'endpointId',
            issue: `${JSON.stringify(quoteId(input.endpointId))} is not a webhook endpoint id (whe_…)`,
          },
        ]);
      filter.endpointId = endpointId;
    }
    if (input.status) filter.status = input.status;
    if (input.workspaceId) filter.workspaceId = (await requireWorkspace(this.deps.workspaces, input.workspaceId))._id;
    if (input.generationId) {
      const generationId = parseId('generation', input.generationId);
      if (!generationId)
        throw validationError([
          {
            field: 'generationId',
            issue: `${JSON.stringify(quoteId(input.generationId))} is not a generation id (gen_…)`,
          },
        ]);
      filter.generationId = generationId;
    }
    const result = await this.deps.deliveries.list(filter, page);
    return { items: result.items.map(toDeliveryView), nextPageToken: result.nextPageToken };
  }

  async get(id: string): Promise<DeliveryView> {
    const objectId = requireId('delivery', id, 'id', 'Delivery');
    const doc = await this.deps.deliveries.get(objectId);
    if (!doc) throw notFound(`Delivery ${quoteId(id)}`);
    return toDeliveryView(doc);
  }

  /** Starts a new round of attempts (same id, same body) for a delivery that is not pending. */
  async redeliver(id: string): Promise<DeliveryView> {
    const objectId = requireId('delivery', id, 'id', 'Delivery');
    const doc = await this.deps.deliveries.startNewRound(objectId);
    if (!doc) {
      if (!(await this.deps.deliveries.get(objectId))) throw notFound(`Delivery ${quoteId(id)}`);
      throw failedPrecondition(`Delivery ${quoteId(id)} is already pending; its attempts are still running`);
    }
    const publicId = formatId('delivery', doc._id);
    try {
      await this.deps.enqueueDelivery(
        { deliveryId: publicId, endpointId: formatId('webhookEndpoint', doc.endpointId) },
        redeliverJobMsgId(publicId, doc.round),
      );
    } catch (err) {
      this.deps.onEnqueueError?.(publicId, err);
    }
    return toDeliveryView(doc);
  }
}
