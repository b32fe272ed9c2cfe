// A name unique in its workspace without a unique secondary index (assets, certificates): a row
// is stored only after a claim whose _id is derived from (workspace, name) was inserted, and
// MongoDB keeps _id unique on every deployment. The claim names its row in `ownerField`.
import type { Collection, Document, Filter, ObjectId, OptionalUnlessRequiredId } from 'mongodb';
import { deterministicObjectId } from '../domain/ids.ts';
import { isDuplicateKeyError } from './mongo.ts';

/** A claim older than this whose row never appeared was left by a crashed upload. */
const ABANDONED_CLAIM_MS = 5 * 60_000;

interface NamedRow {
  _id: ObjectId;
  workspaceId: ObjectId;
  name: string;
  createdAt: Date;
}

export class WorkspaceNameClaims<Row extends NamedRow> {
  private readonly rows: Collection<Row>;
  private readonly claims: Collection<Document>;
  private readonly kind: string;
  private readonly ownerField: string;
  /**
   * `kind`: what the claim ids derive from (`asset-name`); `ownerField`: the claim's field that
   * holds its row's _id (`assetId`), as stored claims already name it.
   */
  constructor(rows: Collection<Row>, claims: Collection<Document>, kind: string, ownerField: string) {
    this.rows = rows;
    this.claims = claims;
    this.kind = kind;
    this.ownerField = ownerField;
  }

  private claimId(workspaceId: ObjectId, name: string): ObjectId {
    return deterministicObjectId(this.kind, workspaceId.toHexString(), name);
  }

  /** Claims the row's name, then inserts the row; false when the name is taken in the workspace. */
  async insert(row: Row): Promise<boolean> {
    const claim = {
      _id: this.claimId(row.workspaceId, row.name),
      [this.ownerField]: row._id,
      workspaceId: row.workspaceId,
      name: row.name,
      createdAt: row.createdAt,
    };
    for (let tries = 0; tries < 2; tries++) {
      try {
        await this.claims.insertOne(claim);
        await this.rows.insertOne(row as OptionalUnlessRequiredId<Row>);
        return true;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        const holder = await this.claims.findOne({ _id: claim._id });
        if (!holder) continue; // released meanwhile
        const owner = holder[this.ownerField] as ObjectId;
        if (await this.rows.findOne({ _id: owner } as Filter<Row>)) return false;
        // A claim this young belongs to an upload in progress.
        if (Date.now() - (holder.createdAt as Date).getTime() < ABANDONED_CLAIM_MS) return false;
        await this.claims.deleteOne({ _id: claim._id, [this.ownerField]: owner });
      }
    }
    return false;
  }

  /** Frees the name of a row that is gone (only if the claim is still that row's). */
  async release(row: Pick<Row, '_id' | 'workspaceId' | 'name'>): Promise<void> {
    await this.claims.deleteOne({ _id: this.claimId(row.workspaceId, row.name), [this.ownerField]: row._id });
  }
}
