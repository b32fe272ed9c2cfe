// The audit trail: one document per state-changing admin call, newest first.
import { ObjectId, type Db, type Filter } from 'mongodb';
import { COLLECTIONS } from './documents.ts';
import type { AuditEventDoc } from './identity-documents.ts';
import { keysetPage, NEWEST_ID_FIRST, type Page, type PageRequest } from './pagination.ts';

/** What a list narrows to; each filter is served by an index (schema step 8, `audit-filters`). */
export interface AuditEventFilter {
  /** `usr_…` or `operator`. */
  actor?: string | undefined;
  /** The names the action was recorded under (an operation, and its RPC's for older events). */
  actions?: readonly string[] | undefined;
  /** At or after. */
  occurredAfter?: Date | undefined;
  /** Before. */
  occurredBefore?: Date | undefined;
}

export class AuditEventsRepository {
  private readonly collection;
  constructor(db: Db) {
    this.collection = db.collection<AuditEventDoc>(COLLECTIONS.auditEvents);
  }

  async insert(doc: AuditEventDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  /**
   * Events of one workspace, or of all (and those of no workspace) when it is undefined, newest
   * first. The time range bounds `_id` too (an event's _id is made the moment it is recorded,
   * and starts with that second), so it narrows the index range instead of filtering a scan;
   * `occurredAt` then decides exactly within the second either side.
   */
  list(
    workspaceId: ObjectId | undefined,
    page: PageRequest,
    filter: AuditEventFilter = {},
  ): Promise<Page<AuditEventDoc>> {
    const query: Filter<AuditEventDoc> = workspaceId ? { workspaceId } : {};
    if (filter.actor !== undefined) query.actor = filter.actor;
    if (filter.actions !== undefined)
      query.action = filter.actions.length === 1 ? filter.actions[0]! : { $in: [...filter.actions] };
    const { occurredAfter: after, occurredBefore: before } = filter;
    if (after || before) {
      const ids: { $gte?: ObjectId; $lt?: ObjectId } = {};
      const times: { $gte?: Date; $lt?: Date } = {};
      if (after) {
        ids.$gte = ObjectId.createFromTime(Math.max(0, Math.floor(after.getTime() / 1000) - 1));
        times.$gte = after;
      }
      if (before) {
        ids.$lt = ObjectId.createFromTime(Math.min(0xffffffff, Math.max(0, Math.floor(before.getTime() / 1000) + 1)));
        times.$lt = before;
      }
      query._id = ids;
      query.occurredAt = times;
    }
    return keysetPage(this.collection, query, NEWEST_ID_FIRST, page);
  }
}
