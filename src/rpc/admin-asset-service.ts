// Connect handlers of docgen.admin.v1.AssetService.
import { create } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import type { AssetAdmin, AssetView } from '../assets/asset-admin.ts';
import {
  AssetSchema,
  DeleteAssetResponseSchema,
  ListAssetsResponseSchema,
  UploadAssetResponseSchema,
  type Asset,
  type AssetService,
  type DeleteAssetRequest,
  type DeleteAssetResponse,
  type ListAssetsRequest,
  type ListAssetsResponse,
  type UploadAssetRequest,
  type UploadAssetResponse,
} from '../gen/docgen/admin/v1/asset_pb.js';
import { ts } from './admin-proto.ts';

export function assetToProto(a: AssetView): Asset {
  return create(AssetSchema, {
    id: a.id,
    workspaceId: a.workspaceId,
    name: a.name,
    contentType: a.contentType,
    kind: a.kind,
    sizeBytes: BigInt(a.sizeBytes),
    sha256: a.sha256,
    createdAt: ts(a.createdAt),
  });
}

export class AssetServiceHandler implements ServiceImpl<typeof AssetService> {
  private readonly admin: AssetAdmin;
  constructor(admin: AssetAdmin) {
    this.admin = admin;
  }

  async uploadAsset(req: UploadAssetRequest): Promise<UploadAssetResponse> {
    const { asset, warnings } = await this.admin.upload({
      workspaceId: req.workspaceId,
      name: req.name,
      content: req.content,
    });
    return create(UploadAssetResponseSchema, { asset: assetToProto(asset), warnings });
  }

  async listAssets(req: ListAssetsRequest): Promise<ListAssetsResponse> {
    const page = await this.admin.list(req.workspaceId, { pageSize: req.pageSize, pageToken: req.pageToken });
    return create(ListAssetsResponseSchema, {
      assets: page.assets.map(assetToProto),
      nextPageToken: page.nextPageToken,
      usedBytes: BigInt(page.usedBytes),
      quotaBytes: BigInt(page.quotaBytes),
    });
  }

  async deleteAsset(req: DeleteAssetRequest): Promise<DeleteAssetResponse> {
    await this.admin.delete(req.id);
    return create(DeleteAssetResponseSchema, {});
  }
}
