// Workspace assets (rows; the bytes are in the object store). A name is unique in its
// workspace without a unique secondary index: uploading claims it by inserting a row whose
// _id is derived from (workspace, name), which MongoDB keeps unique on every deployment.
import type { Db, ObjectId } from 'mongodb';
import { deterministicObjectId } from '../domain/ids.ts';
import { COLLECTIONS, type AssetDoc, type AssetNameDoc } from './documents.ts';
import { isDuplicateKeyError } from './mongo.ts';
import { keysetPage, type Keyset, type Page, type PageRequest } from './pagination.ts';

/** Assets list by name (unique in a workspace), as people look for them. */
const BY_NAME: Keyset = { field: 'name', kind: 'string', order: 1 };

/** A claim older than this whose asset row never appeared was left by a crashed upload. */
const ABANDONED_CLAIM_MS = 5 * 60_000;

function nameClaimId(workspaceId: ObjectId, name: string): ObjectId {
  return deterministicObjectId('asset-name', workspaceId.toHexString(), name);
}

export class AssetsRepository {
  private readonly assets;
  private readonly names;
  constructor(db: Db) {
    this.assets = db.collection<AssetDoc>(COLLECTIONS.assets);
    this.names = db.collection<AssetNameDoc>(COLLECTIONS.assetNames);
  }

  /** Inserts the asset; false when its name is taken in the workspace. */
  async create(doc: AssetDoc): Promise<boolean> {
    const claim: AssetNameDoc = {
      _id: nameClaimId(doc.workspaceId, doc.name),
      assetId: doc._id,
      workspaceId: doc.workspaceId,
      name: doc.name,
      createdAt: doc.createdAt,
    };
    for (let tries = 0; tries < 2; tries++) {
      try {
        await this.names.insertOne(claim);
        await this.assets.insertOne(doc);
        return true;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        const holder = await this.names.findOne({ _id: claim._id });
        if (!holder) continue; // released meanwhile
        if (await this.assets.findOne({ _id: holder.assetId })) return false;
        if (Date.now() - holder.createdAt.getTime() < ABANDONED_CLAIM_MS) return false; // an upload in progress
        await this.names.deleteOne({ _id: claim._id, assetId: holder.assetId });
      }
    }
    return false;
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
    await this.names.deleteOne({ _id: nameClaimId(doc.workspaceId, doc.name), assetId: doc._id });
    return result.deletedCount === 1;
  }
}
