// Users of the portal. A user's _id is derived from the normalised email, so two invitations
// racing for one address meet on the same document instead of creating two people.
import type { Db, Filter, ObjectId } from 'mongodb';
import { deterministicObjectId } from '../domain/ids.ts';
import { COLLECTIONS } from './documents.ts';
import type { UserDoc } from './identity-documents.ts';
import { isDuplicateKeyError } from './mongo.ts';
import { keysetPage, NEWEST_FIRST, type Page, type PageRequest } from './pagination.ts';

/** The _id of the user with this (already normalised) email. */
export function userIdForEmail(email: string): ObjectId {
  return deterministicObjectId('user', email);
}

export class UsersRepository {
  private readonly collection;
  constructor(db: Db) {
    this.collection = db.collection<UserDoc>(COLLECTIONS.users);
  }

  /** The user with this email, created (without a password) when new. */
  async getOrCreate(
    email: string,
    displayName: string,
    now = new Date(),
  ): Promise<{ user: UserDoc; created: boolean }> {
    const _id = userIdForEmail(email);
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
      // Two upserts of a new email at once: one inserts, the other collides on _id.
      if (!isDuplicateKeyError(err)) throw err;
      const user = await this.collection.findOne({ _id });
      if (!user) throw err;
      return { user, created: false };
    }
  }

  get(id: ObjectId): Promise<UserDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  getByEmail(email: string): Promise<UserDoc | null> {
    return this.get(userIdForEmail(email));
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

  async clearPassword(id: ObjectId, now = new Date()): Promise<UserDoc | null> {
    await this.collection.updateOne({ _id: id }, { $set: { passwordHash: null, updatedAt: now } });
    return this.get(id);
  }

  async setDisplayNameIfEmpty(id: ObjectId, displayName: string): Promise<void> {
    await this.collection.updateOne({ _id: id, displayName: '' }, { $set: { displayName } });
  }
}
