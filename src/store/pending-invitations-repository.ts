// Membership offers to people who already have an account. One document per (user, workspace):
// its _id is derived from the pair, so inviting again replaces the offer instead of piling up
// (a person has at most one offer per workspace, and workspaces are the operator's).
import type { Db, ObjectId } from 'mongodb';
import { deterministicObjectId } from '../domain/ids.ts';
import { COLLECTIONS } from './documents.ts';
import type { MemberRole, PendingInvitationDoc } from './identity-documents.ts';
import { isDuplicateKeyError } from './mongo.ts';
import { keysetPage, OLDEST_FIRST, type Page, type PageRequest } from './pagination.ts';

export function pendingInvitationId(userId: ObjectId, workspaceId: ObjectId): ObjectId {
  return deterministicObjectId('pending-invitation', userId.toHexString(), workspaceId.toHexString());
}

export class PendingInvitationsRepository {
  private readonly collection;
  constructor(db: Db) {
    this.collection = db.collection<PendingInvitationDoc>(COLLECTIONS.pendingInvitations);
  }

  /** Offers the membership (or renews the offer with this role and expiry). */
  async put(
    offer: { userId: ObjectId; workspaceId: ObjectId; role: MemberRole; invitedBy: string; expiresAt: Date },
    now = new Date(),
  ): Promise<PendingInvitationDoc> {
    const _id = pendingInvitationId(offer.userId, offer.workspaceId);
    const doc: PendingInvitationDoc = { _id, ...offer, createdAt: now, purgeAt: offer.expiresAt };
    const write = () => this.collection.replaceOne({ _id }, doc, { upsert: true });
    try {
      await write();
    } catch (err) {
      // A concurrent first insert won the _id: now it exists, so this replaces it.
      if (!isDuplicateKeyError(err)) throw err;
      await write();
    }
    return doc;
  }

  /** The user's offers still open at `now`, oldest first (at most one per workspace). */
  listOpenOfUser(userId: ObjectId, now = new Date()): Promise<PendingInvitationDoc[]> {
    return this.collection
      .find({ userId, expiresAt: { $gt: now } })
      .sort({ createdAt: 1, _id: 1 })
      .limit(1000)
      .toArray();
  }

  /** A page of the workspace's open offers, oldest first (by when they were made or renewed). */
  pageOfWorkspace(workspaceId: ObjectId, page: PageRequest, now = new Date()): Promise<Page<PendingInvitationDoc>> {
    return keysetPage(this.collection, { workspaceId, expiresAt: { $gt: now } }, OLDEST_FIRST, page);
  }

  /** The open offer of this workspace to this user, or null. */
  getOpen(userId: ObjectId, workspaceId: ObjectId, now = new Date()): Promise<PendingInvitationDoc | null> {
    return this.collection.findOne({ _id: pendingInvitationId(userId, workspaceId), expiresAt: { $gt: now } });
  }

  async remove(userId: ObjectId, workspaceId: ObjectId): Promise<boolean> {
    const result = await this.collection.deleteOne({ _id: pendingInvitationId(userId, workspaceId) });
    return result.deletedCount === 1;
  }
}
