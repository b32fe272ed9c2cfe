// Signed-in sessions. The cookie carries a random session id; only its SHA-256 is stored,
// and the document's _id is derived from that hash, so a lookup is one read by _id.
import type { Db, ObjectId } from 'mongodb';
import { COLLECTIONS } from './documents.ts';
import type { SessionDoc } from './identity-documents.ts';
import { retryTransient } from './mongo-errors.ts';

export class SessionsRepository {
  private readonly collection;
  constructor(db: Db) {
    this.collection = db.collection<SessionDoc>(COLLECTIONS.sessions);
  }

  async insert(doc: SessionDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  get(id: ObjectId): Promise<SessionDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  /** Moves the idle expiry forward (never past the absolute one) unless revoked. */
  async touch(id: ObjectId, now: Date, idleExpiresAt: Date): Promise<void> {
    await this.collection.updateOne({ _id: id, revokedAt: null }, { $set: { lastSeenAt: now, idleExpiresAt } });
  }

  async revoke(id: ObjectId, now = new Date()): Promise<void> {
    await this.collection.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: now } });
  }

  /**
   * Revokes every open session of the user; returns how many. Several documents: the driver
   * does not retry that, so it is retried here through a failover (a second pass only finds
   * what the first missed).
   */
  async revokeAllOfUser(userId: ObjectId, now = new Date()): Promise<number> {
    let revoked = 0;
    await retryTransient(async () => {
      const result = await this.collection.updateMany({ userId, revokedAt: null }, { $set: { revokedAt: now } });
      revoked += result.modifiedCount;
    });
    return revoked;
  }
}
