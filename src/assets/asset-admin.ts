// Workspace assets for the admin plane: upload (type checked from the bytes, size limit and
// workspace quota), list (by name, paged), delete. Rows in MongoDB, bytes in the object store.
import { createHash } from 'node:crypto';
import { ObjectId } from 'mongodb';
import { DomainError, failedPrecondition, notFound, validationError } from '../domain/errors.ts';
import { formatId } from '../domain/ids.ts';
import type { AssetDoc } from '../store/documents.ts';
import type { AssetsRepository } from '../store/assets-repository.ts';
import type { PageInput, PageTokens } from '../store/pagination.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';
import { quoteId, requireId, requireWorkspace } from '../domain/input.ts';
import { AssetRejected, checkAssetFile, type AssetKind } from './asset-file.ts';

export interface AssetView {
  id: string;
  workspaceId: string;
  name: string;
  contentType: string;
  kind: AssetKind;
  sizeBytes: number;
  sha256: string;
  createdAt: Date;
}

export interface AssetBytesStore {
  putObject(key: string, bytes: Buffer, contentType: string): Promise<void>;
  remove(key: string): Promise<void>;
}

export interface AssetAdminDeps {
  workspaces: WorkspacesRepository;
  assets: AssetsRepository;
  objects: AssetBytesStore;
  /** config.assets.maxBytes. */
  maxBytes: number;
  /** config.assets.workspaceQuotaBytes. */
  workspaceQuotaBytes: number;
  pageTokens: PageTokens;
}

export interface AssetPage {
  assets: AssetView[];
  /** '' on the last page. */
  nextPageToken: string;
  /** Bytes of all the workspace's assets, and the quota they count against. */
  usedBytes: number;
  quotaBytes: number;
}

export function toAssetView(doc: AssetDoc): AssetView {
  return {
    id: formatId('asset', doc._id),
    workspaceId: formatId('workspace', doc.workspaceId),
    name: doc.name,
    contentType: doc.contentType,
    kind: doc.kind,
    sizeBytes: doc.sizeBytes,
    sha256: doc.sha256,
    createdAt: doc.createdAt,
  };
}

export function assetObjectKey(workspaceId: ObjectId, assetId: ObjectId): string {
  return `workspaces/${formatId('workspace', workspaceId)}/assets/${formatId('asset', assetId)}`;
}

export class AssetAdmin {
  private readonly deps: AssetAdminDeps;
  constructor(deps: AssetAdminDeps) {
    this.deps = deps;
  }

  async upload(input: {
    workspaceId: string;
    name: string;
    content: Uint8Array;
  }): Promise<{ asset: AssetView; warnings: string[] }> {
    const workspace = await requireWorkspace(this.deps.workspaces, input.workspaceId);
    const bytes = Buffer.from(input.content.buffer, input.content.byteOffset, input.content.byteLength);
    let checked;
    try {
      checked = await checkAssetFile(input.name ?? '', bytes, this.deps.maxBytes);
    } catch (err) {
      if (err instanceof AssetRejected) throw validationError([{ field: err.field, issue: err.message }], err.message);
      throw err;
    }
    const used = await this.deps.assets.usedBytes(workspace._id);
    if (used + checked.bytes.length > this.deps.workspaceQuotaBytes) {
      throw failedPrecondition(
        `Workspace ${formatId('workspace', workspace._id)} would use ${used + checked.bytes.length} bytes of assets; its quota is ${this.deps.workspaceQuotaBytes} bytes (DOCGEN_ASSET_WORKSPACE_QUOTA_BYTES). Delete unused assets first.`,
      );
    }
    if (await this.deps.assets.findByName(workspace._id, input.name)) throw nameTaken(input.name);
    const id = new ObjectId();
    const doc: AssetDoc = {
      _id: id,
      workspaceId: workspace._id,
      name: input.name,
      contentType: checked.contentType,
      kind: checked.kind,
      sizeBytes: checked.bytes.length,
      sha256: createHash('sha256').update(checked.bytes).digest('hex'),
      key: assetObjectKey(workspace._id, id),
      createdAt: new Date(),
    };
    // Bytes first: a row never points at an object that is not there.
    await this.deps.objects.putObject(doc.key, checked.bytes, doc.contentType);
    if (!(await this.deps.assets.create(doc))) {
      await this.deps.objects.remove(doc.key).catch(() => {});
      throw nameTaken(input.name);
    }
    return { asset: toAssetView(doc), warnings: checked.warnings };
  }

  async list(workspaceId: string, input?: PageInput): Promise<AssetPage> {
    const page = this.deps.pageTokens.request(input, { list: 'assets', filters: { workspace: workspaceId } });
    const workspace = await requireWorkspace(this.deps.workspaces, workspaceId);
    const [result, usedBytes] = await Promise.all([
      this.deps.assets.list(workspace._id, page),
      this.deps.assets.usedBytes(workspace._id),
    ]);
    return {
      assets: result.items.map(toAssetView),
      nextPageToken: result.nextPageToken,
      usedBytes,
      quotaBytes: this.deps.workspaceQuotaBytes,
    };
  }

  async delete(id: string): Promise<void> {
    const assetId = requireId('asset', id, 'id', 'Asset');
    const doc = await this.deps.assets.get(assetId);
    if (!doc) throw notFound(`Asset ${quoteId(id)}`);
    await this.deps.assets.delete(doc);
    await this.deps.objects.remove(doc.key);
  }

  /** Names among `names` that the workspace has no asset for (publish-time check). */
  async missing(workspaceId: string, names: readonly string[]): Promise<string[]> {
    if (names.length === 0) return [];
    const workspace = await requireWorkspace(this.deps.workspaces, workspaceId);
    const have = await this.deps.assets.existingNames(workspace._id, names);
    return names.filter((n) => !have.has(n));
  }
}

function nameTaken(name: string): DomainError {
  return new DomainError(
    'CONFLICT',
    `An asset named ${JSON.stringify(name)} already exists in this workspace; assets are immutable, so delete it first or upload under another name`,
  );
}
