// Workspace signing certificates (rows; the private key sealed inside). A name is unique in its
// workspace through a claim (workspace-name-claims.ts).
import type { Db, ObjectId } from 'mongodb';
import { COLLECTIONS, type CertificateDoc } from './documents.ts';
import { keysetPage, type Keyset, type Page, type PageRequest } from './pagination.ts';
import { WorkspaceNameClaims } from './workspace-name-claims.ts';

const BY_NAME: Keyset = { field: 'name', kind: 'string', order: 1 };

export class CertificatesRepository {
  private readonly certificates;
  private readonly claims;
  constructor(db: Db) {
    this.certificates = db.collection<CertificateDoc>(COLLECTIONS.certificates);
    this.claims = new WorkspaceNameClaims(
      this.certificates,
      db.collection(COLLECTIONS.certificateNames),
      'certificate-name',
      'certificateId',
    );
  }

  /** Inserts the certificate; false when its name is taken in the workspace. */
  create(doc: CertificateDoc): Promise<boolean> {
    return this.claims.insert(doc);
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
    await this.claims.release(doc);
    return result.deletedCount === 1;
  }
}
