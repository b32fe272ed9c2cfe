// Workspace assets (rows; the bytes are in the object store). A name is unique in its
// workspace through a claim (workspace-name-claims.ts).
import type { Db, ObjectId } from 'mongodb';
import { COLLECTIONS, type AssetDoc } from './documents.ts';
import { keysetPage, type Keyset, type Page, type PageRequest } from './pagination.ts';
import { WorkspaceNameClaims } from './workspace-name-claims.ts';

/** Assets list by name (unique in a workspace), as people look for them. */
const BY_NAME: Keyset = { field: 'name', kind: 'string', order: 1 };

export class AssetsRepository {
  private readonly assets;
  private readonly claims;
  constructor(db: Db) {
    this.assets = db.collection<AssetDoc>(COLLECTIONS.assets);
    this.claims = new WorkspaceNameClaims(this.assets, db.collection(COLLECTIONS.assetNames), 'asset-name', 'assetId');
  }

  /** Inserts the asset; false when its name is taken in the workspace. */
  create(doc: AssetDoc): Promise<boolean> {
    return this.claims.insert(doc);
  }

  get(id: ObjectId): Promise<AssetDoc | null> {
    return this.assets.findOne({ _id: id });
  }

  findByName(workspaceId: ObjectId, name: string): Promise<AssetDoc | null> {
    return this.assets.findOne({ workspaceId, name });
  }

  /** By name. */
  list(workspaceId: ObjectId, page: PageRequest): Promise<Page<AssetDoc>> {
    return keysetPage(this.assets, { workspaceId }, BY_NAME, page);
  }

  /** Those of `names` that the workspace has an asset of. */
  async existingNames(workspaceId: ObjectId, names: readonly string[]): Promise<Set<string>> {
    const docs = await this.assets
      .find({ workspaceId, name: { $in: [...names] } }, { projection: { name: 1 } })
      .toArray();
    return new Set(docs.map((d) => d.name));
  }

  /** Bytes stored for the workspace (the quota counts them). */
  async usedBytes(workspaceId: ObjectId): Promise<number> {
    const docs = await this.assets.find({ workspaceId }, { projection: { sizeBytes: 1 } }).toArray();
    return docs.reduce((sum, d) => sum + d.sizeBytes, 0);
  }

  /** Removes the row, then frees its name; false when it did not exist. */
  async delete(doc: AssetDoc): Promise<boolean> {
    const result = await this.assets.deleteOne({ _id: doc._id });
    await this.claims.release(doc);
    return result.deletedCount === 1;
  }
}
