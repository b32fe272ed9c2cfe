// Connect handlers of docgen.admin.v1.ApiKeyService.
import { create } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { ApiKeyAdmin } from '../admin/api-key-admin.ts';
import {
  CreateApiKeyResponseSchema,
  ListApiKeysResponseSchema,
  RevokeApiKeyResponseSchema,
  type ApiKeyService,
  type CreateApiKeyRequest,
  type CreateApiKeyResponse,
  type ListApiKeysRequest,
  type ListApiKeysResponse,
  type RevokeApiKeyRequest,
  type RevokeApiKeyResponse,
} from '../gen/docgen/admin/v1/api_key_pb.js';
import { callerKey } from './admin-access-interceptor.ts';
import { apiKeyModeFromProto, apiKeyToProto } from './admin-proto.ts';

export class ApiKeyServiceHandler implements ServiceImpl<typeof ApiKeyService> {
  private readonly admin: ApiKeyAdmin;
  constructor(admin: ApiKeyAdmin) {
    this.admin = admin;
  }

  async createApiKey(req: CreateApiKeyRequest, ctx: HandlerContext): Promise<CreateApiKeyResponse> {
    const { apiKey, secret } = await this.admin.create(
      {
        workspaceId: req.workspaceId,
        name: req.name,
        scopes: req.scopes,
        rateLimitPerSecond: req.rateLimitPerSecond,
        rateLimitBurst: req.rateLimitBurst,
        mode: apiKeyModeFromProto(req.mode),
      },
      { operator: ctx.values.get(callerKey)?.kind === 'operator' },
    );
    return create(CreateApiKeyResponseSchema, { apiKey: apiKeyToProto(apiKey), secret });
  }

  async listApiKeys(req: ListApiKeysRequest): Promise<ListApiKeysResponse> {
    const page = await this.admin.list(req.workspaceId, { pageSize: req.pageSize, pageToken: req.pageToken });
    return create(ListApiKeysResponseSchema, {
      apiKeys: page.items.map(apiKeyToProto),
      nextPageToken: page.nextPageToken,
    });
  }

  async revokeApiKey(req: RevokeApiKeyRequest): Promise<RevokeApiKeyResponse> {
    return create(RevokeApiKeyResponseSchema, { apiKey: apiKeyToProto(await this.admin.revoke(req.id)) });
  }
}
