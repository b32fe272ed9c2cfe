import { ObjectId, type Db } from 'mongodb';
import { formatId, parseId } from '../domain/ids.ts';
import { COLLECTIONS, type WorkspaceDoc } from './documents.ts';
import { keysetPage, NEWEST_ID_FIRST, type Page, type PageRequest } from './pagination.ts';

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

  /**
   * Sets the name and/or the retention (null removes it); fields left undefined stay.
   * Returns the updated workspace, null when it does not exist.
   */
  async update(
    id: ObjectId,
    changes: { name?: string; retentionSeconds?: number | null; renderWeight?: number },
  ): Promise<WorkspaceDoc | null> {
    const set: Partial<WorkspaceDoc> = {};
    const unset: Record<string, ''> = {};
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.retentionSeconds === null) unset.retentionSeconds = '';
    else if (changes.retentionSeconds !== undefined) set.retentionSeconds = changes.retentionSeconds;
    if (changes.renderWeight !== undefined) set.renderWeight = changes.renderWeight;
    const update: { $set?: Partial<WorkspaceDoc>; $unset?: Record<string, ''> } = {};
    if (Object.keys(set).length > 0) update.$set = set;
    if (Object.keys(unset).length > 0) update.$unset = unset;
    if (update.$set === undefined && update.$unset === undefined) return this.get(id);
    return this.collection.findOneAndUpdate({ _id: id }, update, { returnDocument: 'after' });
  }

  /**
   * The render weights of the given workspaces (`ws_…` ids) that set one: the render
   * processes' fair scheduler reads the few workspaces with work, by _id (no scan).
   */
  async renderWeights(workspaceIds: string[]): Promise<Map<string, number>> {
    const ids = workspaceIds.map((id) => parseId('workspace', id)).filter((id) => id !== undefined);
    const weights = new Map<string, number>();
    if (ids.length === 0) return weights;
    const rows = await this.collection
      .find({ _id: { $in: ids } }, { projection: { _id: 1, renderWeight: 1 } })
      .toArray();
    for (const row of rows)
      if (row.renderWeight !== undefined) weights.set(formatId('workspace', row._id), row.renderWeight);
    return weights;
  }

  /** Workspaces that have a retention, in _id order from `after` (the sweeper's batches). */
  withRetention(limit: number, after?: ObjectId): Promise<WorkspaceDoc[]> {
    const filter = after ? { retentionSeconds: { $gt: 0 }, _id: { $gt: after } } : { retentionSeconds: { $gt: 0 } };
    return this.collection.find(filter).sort({ _id: 1 }).limit(limit).toArray();
  }

  /** Newest first; only the given ids when `only` is set. */
  list(page: PageRequest, only?: ObjectId[]): Promise<Page<WorkspaceDoc>> {
    return keysetPage(this.collection, only ? { _id: { $in: only } } : {}, NEWEST_ID_FIRST, page);
  }
}
