// Connect/gRPC/gRPC-web handler of docgen.v1.GenerationService: translates proto to the
// shared request pipeline (src/api/public-api.ts) and back. No business logic here.
import { create } from '@bufbuild/protobuf';
import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext } from '@connectrpc/connect';
import { validationError } from '../domain/errors.ts';
import { createInputIssues, validateIdempotencyKey } from '../generations/create-input.ts';
import type { GenerationView } from '../generations/generation-view.ts';
import type { ListGenerationsInput } from '../generations/generation-service.ts';
import type { CallContext, PublicApi } from '../api/public-api.ts';
import type { JsonObject } from '../domain/template.ts';
import {
  CreateGenerationResponseSchema,
  DocumentFormat,
  GenerationSchema,
  GenerationStatus,
  GetGenerationResponseSchema,
  ListGenerationsResponseSchema,
  type CreateGenerationRequest,
  type CreateGenerationResponse,
  type Generation,
  type GetGenerationRequest,
  type GetGenerationResponse,
  type ListGenerationsRequest,
  type ListGenerationsResponse,
} from '../gen/docgen/v1/generation_pb.js';
import { writeRateLimitHeaders } from '../api/rate-limit-headers.ts';
import { requestIdFrom } from '../api/request-id.ts';
import { PREFERENCE_APPLIED, parsePreferWait, preferenceApplied } from '../api/prefer-wait.ts';

/** How long before an RPC's deadline a wait gives up, so that the answer still arrives in time. */
const DEADLINE_MARGIN_MS = 500;

function deadlineMargin(timeoutMs: number | undefined): number | undefined {
  return timeoutMs === undefined ? undefined : Math.max(0, timeoutMs - DEADLINE_MARGIN_MS);
}

const STATUS_TO_PROTO = {
  PENDING: GenerationStatus.PENDING,
  PROCESSING: GenerationStatus.PROCESSING,
  COMPLETED: GenerationStatus.COMPLETED,
  FAILED: GenerationStatus.FAILED,
} as const;

const STATUS_FROM_PROTO: Record<number, string | undefined> = {
  [GenerationStatus.PENDING]: 'PENDING',
  [GenerationStatus.PROCESSING]: 'PROCESSING',
  [GenerationStatus.COMPLETED]: 'COMPLETED',
  [GenerationStatus.FAILED]: 'FAILED',
};

export function generationToProto(view: GenerationView): Generation {
  return create(GenerationSchema, {
    id: view.id,
    workspaceId: view.workspaceId,
    templateId: view.templateId,
    templateName: view.templateName,
    format: DocumentFormat.PDF,
    status: STATUS_TO_PROTO[view.status],
    data: view.data,
    outputUrl: view.outputUrl ?? undefined,
    error: view.error ?? undefined,
    createdAt: timestampFromDate(view.createdAt),
    updatedAt: timestampFromDate(view.updatedAt),
    templateVersion: view.templateVersion,
    test: view.test,
  });
}

/** The list filters as both the public and the admin ListGenerationsRequest carry them. */
export function listInputFromProto(
  req: Pick<
    ListGenerationsRequest,
    'pageSize' | 'pageToken' | 'status' | 'templateId' | 'createdAfter' | 'createdBefore' | 'batchId'
  >,
): ListGenerationsInput {
  if (req.status !== GenerationStatus.UNSPECIFIED && !STATUS_FROM_PROTO[req.status]) {
    throw validationError([{ field: 'status', issue: 'is not a known status' }]);
  }
  return {
    pageSize: req.pageSize,
    pageToken: req.pageToken || undefined,
    status: STATUS_FROM_PROTO[req.status],
    templateId: req.templateId || undefined,
    createdAfter: req.createdAfter ? timestampDate(req.createdAfter) : undefined,
    createdBefore: req.createdBefore ? timestampDate(req.createdBefore) : undefined,
    batchId: req.batchId || undefined,
  };
}

export class GenerationHandler {
  private readonly api: PublicApi;
  constructor(api: PublicApi) {
    this.api = api;
  }

  async createGeneration(req: CreateGenerationRequest, ctx: HandlerContext): Promise<CreateGenerationResponse> {
    const call = callContext(ctx);
    try {
      const created = await this.api.createGeneration(
        call,
        () => {
          const variables = (req.variables ?? {}) as JsonObject;
          const issues = createInputIssues(req.templateId, variables);
          if (req.format !== DocumentFormat.UNSPECIFIED && req.format !== DocumentFormat.PDF)
            issues.push({ field: 'format', issue: 'must be PDF' });
          if (issues.length > 0) throw validationError(issues);
          return {
            input: { templateId: req.templateId, variables, format: 'pdf' },
            idempotencyKey: validateIdempotencyKey(ctx.requestHeader.get('idempotency-key')),
            waitSeconds: parsePreferWait(ctx.requestHeader.get('prefer')),
          };
        },
        // The answer must leave before the caller's deadline: stop waiting half a second ahead.
        { signal: ctx.signal, maxWaitMs: deadlineMargin(ctx.timeoutMs()) },
      );
      if (created.waitedSeconds !== undefined)
        ctx.responseHeader.set(PREFERENCE_APPLIED, preferenceApplied(created.waitedSeconds));
      return create(CreateGenerationResponseSchema, { generation: generationToProto(created.generation) });
    } finally {
      writeHeaders(call, ctx);
    }
  }

  async getGeneration(req: GetGenerationRequest, ctx: HandlerContext): Promise<GetGenerationResponse> {
    const call = callContext(ctx);
    try {
      const view = await this.api.getGeneration(call, () => req.id);
      return create(GetGenerationResponseSchema, { generation: generationToProto(view) });
    } finally {
      writeHeaders(call, ctx);
    }
  }

  async listGenerations(req: ListGenerationsRequest, ctx: HandlerContext): Promise<ListGenerationsResponse> {
    const call = callContext(ctx);
    try {
      const page = await this.api.listGenerations(call, () => listInputFromProto(req));
      return create(ListGenerationsResponseSchema, {
        generations: page.generations.map(generationToProto),
        nextPageToken: page.nextPageToken ?? '',
      });
    } finally {
      writeHeaders(call, ctx);
    }
  }
}

/**
 * RateLimit-* into the response headers. Retry-After travels in the error's metadata
 * (src/rpc/connect-errors.ts), which Connect appends to these headers: writing it here too would
 * send "1, 1".
 */
export function writeHeaders(call: CallContext, ctx: HandlerContext): void {
  writeRateLimitHeaders(call.rateLimit, (name, value) => {
    if (name !== 'Retry-After') ctx.responseHeader.set(name, value);
  });
}

/** Also answers with X-Request-Id (echoed when given), as REST does. */
export function callContext(ctx: HandlerContext): CallContext {
  const given = ctx.requestHeader.get('x-request-id');
  ctx.responseHeader.set('x-request-id', requestIdFrom(given));
  return { authorization: ctx.requestHeader.get('authorization') };
}
