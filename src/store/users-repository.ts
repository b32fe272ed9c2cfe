// Users of the portal. One user per normalised email: the email is claimed by a row whose _id
// is derived from it (user_emails), so two invitations racing for one address meet on the same
// claim instead of creating two people. The user's own _id is an ordinary, time-ordered
// ObjectId, so the user list (ordered by _id) is newest first.
//
// Users created by docgen 0.1 have no claim: their _id is the one derived from the email
// (userIdForEmail); they are found by it, and keep it.
import { ObjectId, type Db, type Filter } from 'mongodb';
import { deterministicObjectId } from '../domain/ids.ts';
import { COLLECTIONS } from './documents.ts';
import type { UserDoc } from './identity-documents.ts';
import { isDuplicateKeyError } from './mongo.ts';
import { keysetPage, NEWEST_FIRST, type Page, type PageRequest } from './pagination.ts';

/** The _id of the email's claim row, and of a user created by docgen 0.1 with this email. */
export function userIdForEmail(email: string): ObjectId {
  return deterministicObjectId('user', email);
}

/** user_emails: the claim on a normalised email, naming the user who holds it. */
export interface UserEmailDoc {
  /** userIdForEmail(email). */
  _id: ObjectId;
  email: string;
  userId: ObjectId;
  createdAt: Date;
}

export class UsersRepository {
  private readonly collection;
  private readonly emails;
  constructor(db: Db) {
    this.collection = db.collection<UserDoc>(COLLECTIONS.users);
    this.emails = db.collection<UserEmailDoc>(COLLECTIONS.userEmails);
  }

  /** The user with this email, created (without a password) when new. */
  async getOrCreate(
    email: string,
    displayName: string,
    now = new Date(),
  ): Promise<{ user: UserDoc; created: boolean }> {
    const claimId = userIdForEmail(email);
    for (let tries = 0; tries < 3; tries++) {
      const claim = await this.emails.findOne({ _id: claimId });
      if (!claim) {
        const legacy = await this.collection.findOne({ _id: claimId });
        if (legacy) return { user: legacy, created: false };
        try {
          await this.emails.insertOne({ _id: claimId, email, userId: new ObjectId(), createdAt: now });
        } catch (err) {
          // Another invitation claimed the email first: its claim names the user.
          if (!isDuplicateKeyError(err)) throw err;
        }
        continue;
      }
      // The claim's user, created now unless it exists (also when a request died between
      // claiming and creating).
      const _id = claim.userId;
      try {
        const result = await this.collection.updateOne(
          { _id },
          {
            $setOnInsert: {
              email,
              displayName,
              passwordHash: null,
              invitationId: null,
              disabled: false,
              createdAt: now,
              updatedAt: now,
            },
          },
          { upsert: true },
        );
        const user = await this.collection.findOne({ _id });
        if (!user) throw new Error(`user ${_id.toHexString()} vanished after its upsert`);
        return { user, created: result.upsertedCount === 1 };
      } catch (err) {
        // Two upserts of a new user at once: one inserts, the other collides on _id.
        if (!isDuplicateKeyError(err)) throw err;
        const user = await this.collection.findOne({ _id });
        if (!user) throw err;
        return { user, created: false };
      }
    }
    throw new Error(`could not claim the email of a new user under contention`);
  }

  get(id: ObjectId): Promise<UserDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  async getByEmail(email: string): Promise<UserDoc | null> {
    const claimId = userIdForEmail(email);
    const claim = await this.emails.findOne({ _id: claimId });
    return this.get(claim ? claim.userId : claimId);
  }

  /** Users, newest first (by creation: a user's _id is derived); only the given ids when `ids` is set. */
  list(ids: ObjectId[] | undefined, page: PageRequest): Promise<Page<UserDoc>> {
    const filter: Filter<UserDoc> = ids ? { _id: { $in: ids } } : {};
    return keysetPage(this.collection, filter, NEWEST_FIRST, page);
  }

  getMany(ids: ObjectId[]): Promise<UserDoc[]> {
    return this.collection.find({ _id: { $in: ids } }).toArray();
  }

  async setDisabled(id: ObjectId, disabled: boolean, now = new Date()): Promise<UserDoc | null> {
    await this.collection.updateOne({ _id: id }, { $set: { disabled, updatedAt: now } });
    return this.get(id);
  }

  /** Makes this invitation the only one that can set the user's password (null: none can). */
  async setInvitation(id: ObjectId, invitationId: ObjectId | null): Promise<void> {
    await this.collection.updateOne({ _id: id }, { $set: { invitationId } });
  }

  /**
   * Sets the password hash (and the display name when given) of an enabled user whose current
   * invitation is `invitationId`, and retires that invitation; null when either no longer holds.
   */
  async setPasswordByInvitation(
    id: ObjectId,
    invitationId: ObjectId,
    passwordHash: string,
    displayName: string | undefined,
    now = new Date(),
  ): Promise<UserDoc | null> {
    const set: Partial<UserDoc> = { passwordHash, invitationId: null, updatedAt: now };
    if (displayName) set.displayName = displayName;
    const result = await this.collection.updateOne({ _id: id, disabled: false, invitationId }, { $set: set });
    return result.matchedCount === 1 ? this.get(id) : null;
  }

  /**
   * Replaces a password hash with a stronger one of the same password (rehash on sign-in),
   * only if it is still the hash that was verified: a reset or new password meanwhile wins.
   */
  async replacePasswordHash(id: ObjectId, verifiedHash: string, newHash: string): Promise<boolean> {
    const result = await this.collection.updateOne(
      { _id: id, passwordHash: verifiedHash },
      { $set: { passwordHash: newHash } },
    );
    return result.modifiedCount === 1;
  }

  async clearPassword(id: ObjectId, now = new Date()): Promise<UserDoc | null> {
    await this.collection.updateOne({ _id: id }, { $set: { passwordHash: null, updatedAt: now } });
    return this.get(id);
  }

  async setDisplayNameIfEmpty(id: ObjectId, displayName: string): Promise<void> {
    await this.collection.updateOne({ _id: id, displayName: '' }, { $set: { displayName } });
  }
}
