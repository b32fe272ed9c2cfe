import { ObjectId, type Db } from 'mongodb';
import { COLLECTIONS, type WorkspaceDoc } from './documents.ts';
import { pageByIdDesc, type Page } from './pagination.ts';

export class WorkspacesRepository {
  private readonly collection;
  constructor(db: Db) {
    this.collection = db.collection<WorkspaceDoc>(COLLECTIONS.workspaces);
  }

  async create(name: string): Promise<WorkspaceDoc> {
    const doc: WorkspaceDoc = { _id: new ObjectId(), name, createdAt: new Date() };
    await this.collection.insertOne(doc);
    return doc;
  }

  get(id: ObjectId): Promise<WorkspaceDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  /** Newest first; only the given ids when `only` is set. */
  list(pageSize?: number, pageToken?: string, only?: ObjectId[]): Promise<Page<WorkspaceDoc>> {
    return pageByIdDesc(this.collection, only ? { _id: { $in: only } } : {}, pageSize, pageToken);
  }
}
