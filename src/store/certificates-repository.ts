// Workspace signing certificates (rows; the private key sealed inside). A name is unique in its
// workspace without a unique secondary index: uploading claims it by inserting a row whose _id
// is derived from (workspace, name), which MongoDB keeps unique on every deployment.
import type { Db, ObjectId } from 'mongodb';
import { deterministicObjectId } from '../domain/ids.ts';
import { COLLECTIONS, type CertificateDoc, type CertificateNameDoc } from './documents.ts';
import { isDuplicateKeyError } from './mongo.ts';
import { keysetPage, type Keyset, type Page, type PageRequest } from './pagination.ts';

const BY_NAME: Keyset = { field: 'name', kind: 'string', order: 1 };

/** A claim older than this whose certificate row never appeared was left by a crashed upload. */
const ABANDONED_CLAIM_MS = 5 * 60_000;

function nameClaimId(workspaceId: ObjectId, name: string): ObjectId {
  return deterministicObjectId('certificate-name', workspaceId.toHexString(), name);
}

export class CertificatesRepository {
  private readonly certificates;
  private readonly names;
  constructor(db: Db) {
    this.certificates = db.collection<CertificateDoc>(COLLECTIONS.certificates);
    this.names = db.collection<CertificateNameDoc>(COLLECTIONS.certificateNames);
  }

  /** Inserts the certificate; false when its name is taken in the workspace. */
  async create(doc: CertificateDoc): Promise<boolean> {
    const claim: CertificateNameDoc = {
      _id: nameClaimId(doc.workspaceId, doc.name),
      certificateId: doc._id,
      workspaceId: doc.workspaceId,
      name: doc.name,
      createdAt: doc.createdAt,
    };
    for (let tries = 0; tries < 2; tries++) {
      try {
        await this.names.insertOne(claim);
        await this.certificates.insertOne(doc);
        return true;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        const holder = await this.names.findOne({ _id: claim._id });
        if (!holder) continue; // released meanwhile
        if (await this.certificates.findOne({ _id: holder.certificateId })) return false;
        if (Date.now() - holder.createdAt.getTime() < ABANDONED_CLAIM_MS) return false; // an upload in progress
        await this.names.deleteOne({ _id: claim._id, certificateId: holder.certificateId });
      }
    }
    return false;
  }

  get(id: ObjectId): Promise<CertificateDoc | null> {
    return this.certificates.findOne({ _id: id });
  }

  /** By name. */
  list(workspaceId: ObjectId, page: PageRequest): Promise<Page<CertificateDoc>> {
    return keysetPage(this.certificates, { workspaceId }, BY_NAME, page);
  }

  /** Removes the row (and with it the sealed key), then frees its name; false when it did not exist. */
  async delete(doc: CertificateDoc): Promise<boolean> {
    const result = await this.certificates.deleteOne({ _id: doc._id });
    await this.names.deleteOne({ _id: nameClaimId(doc.workspaceId, doc.name), certificateId: doc._id });
    return result.deletedCount === 1;
  }
}
