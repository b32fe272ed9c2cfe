// Connect/gRPC/gRPC-web handler of docgen.v1.BatchService: translates proto to the shared
// request pipeline (src/api/public-api.ts) and back. No business logic here: the item rules
// are src/batches/batch-input.ts's, as for REST.
import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext } from '@connectrpc/connect';
import type { PublicApi } from '../api/public-api.ts';
import { batchItemIssues, batchSizeIssues, MAX_BATCH_ISSUES } from '../batches/batch-input.ts';
import type { BatchView } from '../batches/batch-service.ts';
import { DEFAULT_MAX_BATCH_ITEMS } from '../config/limits.ts';
import { validationError, type FieldIssue } from '../domain/errors.ts';
import type { JsonObject } from '../domain/template.ts';
import { validateIdempotencyKey } from '../generations/create-input.ts';
import {
  BatchSchema,
  BatchStatus,
  CreateBatchResponseSchema,
  GetBatchResponseSchema,
  type Batch,
  type CreateBatchRequest,
  type CreateBatchResponse,
  type GetBatchRequest,
  type GetBatchResponse,
} from '../gen/docgen/v1/batch_pb.js';
import { callContext, writeHeaders } from './generation-handler.ts';

const STATUS_TO_PROTO = {
  PENDING: BatchStatus.PENDING,
  PROCESSING: BatchStatus.PROCESSING,
  COMPLETED: BatchStatus.COMPLETED,
} as const;

export function batchToProto(view: BatchView): Batch {
  return create(BatchSchema, {
    id: view.id,
    status: STATUS_TO_PROTO[view.status],
    total: view.total,
    completed: view.completed,
    failed: view.failed,
    outputUrl: view.outputUrl ?? undefined,
    createdAt: timestampFromDate(view.createdAt),
    updatedAt: timestampFromDate(view.updatedAt),
    workspaceId: view.workspaceId,
    merge: view.merge,
    itemEvents: view.itemEvents,
  });
}

export class BatchHandler {
  private readonly api: PublicApi;
  private readonly maxItems: number;
  constructor(api: PublicApi, maxItems = DEFAULT_MAX_BATCH_ITEMS) {
    this.api = api;
    this.maxItems = maxItems;
  }

  async createBatch(req: CreateBatchRequest, ctx: HandlerContext): Promise<CreateBatchResponse> {
    const call = callContext(ctx);
    try {
      const batch = await this.api.createBatch(call, () => {
        const issues: FieldIssue[] = batchSizeIssues(req.items.length, this.maxItems);
        if (issues.length === 0) {
          req.items.forEach((item, index) => {
            if (issues.length < MAX_BATCH_ISSUES)
              issues.push(...batchItemIssues(index, item.templateId, (item.variables ?? {}) as JsonObject));
          });
        }
        if (issues.length > 0) throw validationError(issues.slice(0, MAX_BATCH_ISSUES));
        return {
          input: {
            items: req.items.map((item) => ({
              templateId: item.templateId,
              variables: (item.variables ?? {}) as JsonObject,
              format: 'pdf' as const,
            })),
            merge: req.merge,
            itemEvents: req.itemEvents ?? true,
          },
          idempotencyKey: validateIdempotencyKey(ctx.requestHeader.get('idempotency-key')),
        };
      });
      return create(CreateBatchResponseSchema, { batch: batchToProto(batch) });
    } finally {
      writeHeaders(call, ctx);
    }
  }

  async getBatch(req: GetBatchRequest, ctx: HandlerContext): Promise<GetBatchResponse> {
    const call = callContext(ctx);
    try {
      const batch = await this.api.getBatch(call, () => req.id);
      return create(GetBatchResponseSchema, { batch: batchToProto(batch) });
    } finally {
      writeHeaders(call, ctx);
    }
  }
}
