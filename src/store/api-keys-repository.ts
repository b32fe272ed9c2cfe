import { ObjectId, type Db } from 'mongodb';
import { COLLECTIONS, type ApiKeyDoc } from './documents.ts';
import { keysetPage, NEWEST_ID_FIRST, type Page, type PageRequest } from './pagination.ts';

export class ApiKeysRepository {
  private readonly collection;
  constructor(db: Db) {
    this.collection = db.collection<ApiKeyDoc>(COLLECTIONS.apiKeys);
  }

  async insert(doc: ApiKeyDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  get(id: ObjectId): Promise<ApiKeyDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  findByHash(hash: string): Promise<ApiKeyDoc | null> {
    return this.collection.findOne({ hash });
  }

  /** Newest first. */
  list(workspaceId: ObjectId, page: PageRequest): Promise<Page<ApiKeyDoc>> {
    return keysetPage(this.collection, { workspaceId }, NEWEST_ID_FIRST, page);
  }

  /** Sets revokedAt once; revoking again keeps the first time. */
  async revoke(id: ObjectId, at: Date): Promise<ApiKeyDoc | null> {
    await this.collection.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: at } });
    return this.get(id);
  }

  /** Unrevoked keys of a workspace (the workspace index narrows it to that workspace's keys). */
  countActive(workspaceId: ObjectId): Promise<number> {
    return this.collection.countDocuments({ workspaceId, revokedAt: null });
  }

  async touch(id: ObjectId, at: Date): Promise<void> {
    await this.collection.updateOne({ _id: id }, { $set: { lastUsedAt: at } });
  }
}
