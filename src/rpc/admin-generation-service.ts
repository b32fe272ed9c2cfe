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
    return create(GetGenerationResponseSchema, { generation: generationToProto(await this.admin.get(req.id)) });
  }

  async getBatch(req: GetBatchRequest): Promise<GetBatchResponse> {
    return create(GetBatchResponseSchema, { batch: batchToProto(await this.admin.getBatch(req.workspaceId, req.id)) });
  }

  async deleteGeneration(req: DeleteGenerationRequest): Promise<DeleteGenerationResponse> {
    await this.admin.delete(req.id);
    return create(DeleteGenerationResponseSchema, {});
  }
}
