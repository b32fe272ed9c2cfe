// Who belongs to which workspace, with which role. One document per (user, workspace): its
// _id is derived from the pair, so adding a member twice updates the one membership.
import type { Db, ObjectId } from 'mongodb';
import { deterministicObjectId } from '../domain/ids.ts';
import { COLLECTIONS } from './documents.ts';
import type { MemberRole, MembershipDoc } from './identity-documents.ts';
import { isDuplicateKeyError } from './mongo.ts';
import { keysetPage, OLDEST_FIRST, type Page, type PageRequest } from './pagination.ts';

export function membershipId(userId: ObjectId, workspaceId: ObjectId): ObjectId {
  return deterministicObjectId('membership', userId.toHexString(), workspaceId.toHexString());
}

export class MembershipsRepository {
  private readonly collection;
  constructor(db: Db) {
    this.collection = db.collection<MembershipDoc>(COLLECTIONS.memberships);
  }

  /** Adds the membership or changes its role. */
  async put(userId: ObjectId, workspaceId: ObjectId, role: MemberRole, now = new Date()): Promise<MembershipDoc> {
    const _id = membershipId(userId, workspaceId);
    const write = () =>
      this.collection.updateOne(
        { _id },
        { $set: { role, updatedAt: now }, $setOnInsert: { userId, workspaceId, createdAt: now } },
        { upsert: true },
      );
    try {
      await write();
    } catch (err) {
      // A concurrent first insert won the _id; now the document exists, so this is an update.
      if (!isDuplicateKeyError(err)) throw err;
      await write();
    }
    const doc = await this.collection.findOne({ _id });
    if (!doc) throw new Error(`membership ${_id.toHexString()} vanished after its upsert`);
    return doc;
  }

  /** Adds the membership unless there is one (whose role then stays as it is). */
  async addIfAbsent(
    userId: ObjectId,
    workspaceId: ObjectId,
    role: MemberRole,
    now = new Date(),
  ): Promise<MembershipDoc> {
    const _id = membershipId(userId, workspaceId);
    const write = () =>
      this.collection.updateOne(
        { _id },
        { $setOnInsert: { userId, workspaceId, role, createdAt: now, updatedAt: now } },
        { upsert: true },
      );
    try {
      await write();
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
    const doc = await this.collection.findOne({ _id });
    if (!doc) throw new Error(`membership ${_id.toHexString()} vanished after its upsert`);
    return doc;
  }

  get(userId: ObjectId, workspaceId: ObjectId): Promise<MembershipDoc | null> {
    return this.collection.findOne({ _id: membershipId(userId, workspaceId) });
  }

  /** Changes the role of an existing membership; null when there is none. */
  async setRole(
    userId: ObjectId,
    workspaceId: ObjectId,
    role: MemberRole,
    now = new Date(),
  ): Promise<MembershipDoc | null> {
    const _id = membershipId(userId, workspaceId);
    const result = await this.collection.updateOne({ _id }, { $set: { role, updatedAt: now } });
    return result.matchedCount === 1 ? this.collection.findOne({ _id }) : null;
  }

  async remove(userId: ObjectId, workspaceId: ObjectId): Promise<boolean> {
    const result = await this.collection.deleteOne({ _id: membershipId(userId, workspaceId) });
    return result.deletedCount === 1;
  }

  listByUser(userId: ObjectId): Promise<MembershipDoc[]> {
    return this.collection.find({ userId }).toArray();
  }

  /** A workspace's members in the order they joined (bounded: a workspace has people, not crowds). */
  listByWorkspace(workspaceId: ObjectId, limit = 1000): Promise<MembershipDoc[]> {
    return this.collection.find({ workspaceId }).sort({ createdAt: 1, _id: 1 }).limit(limit).toArray();
  }

  /** A page of a workspace's members, in the order they joined. */
  page(workspaceId: ObjectId, page: PageRequest): Promise<Page<MembershipDoc>> {
    return keysetPage(this.collection, { workspaceId }, OLDEST_FIRST, page);
  }

  countOwners(workspaceId: ObjectId): Promise<number> {
    return this.collection.countDocuments({ workspaceId, role: 'owner' });
  }
}
