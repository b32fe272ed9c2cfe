// Connect handlers of docgen.admin.v1.GenerationAdminService: the public API's generation
// shape (docgen.v1.Generation) and list filters, for the admin plane.
import { create } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import type { GenerationAdmin } from '../admin/generation-admin.ts';
import {
  DeleteGenerationResponseSchema,
  GetBatchResponseSchema,
  type GetBatchRequest,
  type GetBatchResponse,
  GetGenerationResponseSchema,
  RenderAgainResponseSchema,
  GetGenerationPdfResponseSchema,
  type GetGenerationPdfRequest,
  type GetGenerationPdfResponse,
  type RenderAgainRequest,
  type RenderAgainResponse,
  ListGenerationsResponseSchema,
  type DeleteGenerationRequest,
  type DeleteGenerationResponse,
  type GenerationAdminService,
  type GetGenerationRequest,
  type GetGenerationResponse,
  type ListGenerationsRequest,
  type ListGenerationsResponse,
} from '../gen/docgen/admin/v1/generation_pb.js';
import { generationToProto, listInputFromProto } from './generation-handler.ts';
import { batchToProto } from './batch-handler.ts';
import { ts } from './admin-proto.ts';

export class GenerationAdminServiceHandler implements ServiceImpl<typeof GenerationAdminService> {
  private readonly admin: GenerationAdmin;
  constructor(admin: GenerationAdmin) {
    this.admin = admin;
  }

  async listGenerations(req: ListGenerationsRequest): Promise<ListGenerationsResponse> {
    const page = await this.admin.list(req.workspaceId, listInputFromProto(req));
    return create(ListGenerationsResponseSchema, {
      generations: page.generations.map(generationToProto),
      nextPageToken: page.nextPageToken ?? '',
    });
  }

  async getGeneration(req: GetGenerationRequest): Promise<GetGenerationResponse> {
    const detail = await this.admin.get(req.id);
    const { timeline } = detail;
    return create(GetGenerationResponseSchema, {
      generation: generationToProto(detail.generation),
      timeline: {
        createdAt: ts(timeline.createdAt),
        pickedUpAt: ts(timeline.pickedUpAt),
        finishedAt: ts(timeline.finishedAt),
        attempts: timeline.attempts,
        steps: timeline.steps.map((step) => ({
          event: step.event,
          at: ts(step.at),
          error: step.error ?? '',
          code: step.code ?? '',
        })),
      },
      renderedFrom: detail.renderedFrom ?? '',
      errorCode: detail.errorCode ?? '',
    });
  }

  async getGenerationPdf(req: GetGenerationPdfRequest): Promise<GetGenerationPdfResponse> {
    return create(GetGenerationPdfResponseSchema, { pdf: await this.admin.pdf(req.id) });
  }

  async renderAgain(req: RenderAgainRequest): Promise<RenderAgainResponse> {
    return create(RenderAgainResponseSchema, { generation: generationToProto(await this.admin.renderAgain(req.id)) });
  }

  async getBatch(req: GetBatchRequest): Promise<GetBatchResponse> {
    return create(GetBatchResponseSchema, { batch: batchToProto(await this.admin.getBatch(req.workspaceId, req.id)) });
  }

  async deleteGeneration(req: DeleteGenerationRequest): Promise<DeleteGenerationResponse> {
    await this.admin.delete(req.id);
    return create(DeleteGenerationResponseSchema, {});
  }
}
