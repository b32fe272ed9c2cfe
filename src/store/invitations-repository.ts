// Invitation links. The token in the link is never stored: the document holds its SHA-256 and
// its _id is derived from that hash. Using a link is one conditional update, so a token is
// accepted once even when two requests race.
import type { Db, ObjectId } from 'mongodb';
import { COLLECTIONS } from './documents.ts';
import type { InvitationDoc } from './identity-documents.ts';
import { retryTransient } from './mongo-errors.ts';

export class InvitationsRepository {
  private readonly collection;
  constructor(db: Db) {
    this.collection = db.collection<InvitationDoc>(COLLECTIONS.invitations);
  }

  async insert(doc: InvitationDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  get(id: ObjectId): Promise<InvitationDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  /** Marks the invitation used if it is still open and unexpired; null otherwise. */
  consume(id: ObjectId, now = new Date()): Promise<InvitationDoc | null> {
    return this.collection.findOneAndUpdate(
      { _id: id, usedAt: null, revokedAt: null, expiresAt: { $gt: now } },
      { $set: { usedAt: now } },
      { returnDocument: 'after' },
    );
  }

  /**
   * Revokes the user's open invitations (a newer link replaces them). Several documents: the
   * driver does not retry that, so it is retried here through a failover (applying it twice is
   * the same as once).
   */
  async revokeOpenOfUser(userId: ObjectId, now = new Date()): Promise<void> {
    await retryTransient(() =>
      this.collection.updateMany({ userId, usedAt: null, revokedAt: null }, { $set: { revokedAt: now } }),
    );
  }
}
