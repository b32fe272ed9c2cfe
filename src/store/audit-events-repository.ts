// The audit trail: one document per state-changing admin call, newest first.
import type { Db, Filter, ObjectId } from 'mongodb';
import { COLLECTIONS } from './documents.ts';
import type { AuditEventDoc } from './identity-documents.ts';
import { keysetPage, NEWEST_ID_FIRST, type Page, type PageRequest } from './pagination.ts';

export class AuditEventsRepository {
  private readonly collection;
  constructor(db: Db) {
    this.collection = db.collection<AuditEventDoc>(COLLECTIONS.auditEvents);
  }

  async insert(doc: AuditEventDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  /** Events of one workspace, or of all (and those of no workspace) when it is undefined. */
  list(workspaceId: ObjectId | undefined, page: PageRequest): Promise<Page<AuditEventDoc>> {
    const filter: Filter<AuditEventDoc> = workspaceId ? { workspaceId } : {};
    return keysetPage(this.collection, filter, NEWEST_ID_FIRST, page);
  }
}
