import type { Db, ObjectId } from 'mongodb';
import { COLLECTIONS, type EncryptedSecret, type WebhookEndpointDoc } from './documents.ts';
import { keysetPage, NEWEST_ID_FIRST, type Page, type PageRequest } from './pagination.ts';

export class WebhookEndpointsRepository {
  private readonly collection;
  constructor(db: Db) {
    this.collection = db.collection<WebhookEndpointDoc>(COLLECTIONS.webhookEndpoints);
  }

  async insert(doc: WebhookEndpointDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  get(id: ObjectId): Promise<WebhookEndpointDoc | null> {
    return this.collection.findOne({ _id: id, deletedAt: null });
  }

  /** Live endpoints, newest first. */
  list(workspaceId: ObjectId, page: PageRequest): Promise<Page<WebhookEndpointDoc>> {
    return keysetPage(this.collection, { workspaceId, deletedAt: null }, NEWEST_ID_FIRST, page);
  }

  /**
   * Live endpoints of a workspace that selected the event; for a test generation's event
   * (docs/interface.md#test-mode), only those that opted in to test events.
   */
  subscribers(workspaceId: ObjectId, event: string, options: { test?: boolean } = {}): Promise<WebhookEndpointDoc[]> {
    const filter = options.test
      ? { workspaceId, deletedAt: null, events: event, testEvents: true }
      : { workspaceId, deletedAt: null, events: event };
    return this.collection.find(filter).toArray();
  }

  /** Soft delete: past deliveries keep pointing at a row that explains them. */
  async delete(id: ObjectId): Promise<boolean> {
    const result = await this.collection.updateOne({ _id: id, deletedAt: null }, { $set: { deletedAt: new Date() } });
    return result.matchedCount === 1;
  }

  async rotateSecret(
    id: ObjectId,
    secret: EncryptedSecret,
    previous: EncryptedSecret,
    previousValidUntil: Date,
  ): Promise<WebhookEndpointDoc | null> {
    const result = await this.collection.findOneAndUpdate(
      // Conditional on the secret being replaced: of two concurrent rotations one wins, and
      // the loser gets null instead of handing out a secret that never becomes valid.
      { _id: id, deletedAt: null, 'secret.data': previous.data },
      {
        $set: {
          secret,
          previousSecret: previous,
          previousSecretExpiresAt: previousValidUntil,
          secretRotatedAt: new Date(),
        },
      },
      { returnDocument: 'after' },
    );
    return result ?? null;
  }
}
