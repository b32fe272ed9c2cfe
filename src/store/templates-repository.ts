import { ObjectId, type Db } from 'mongodb';
import { deterministicObjectId } from '../domain/ids.ts';
import type { TemplateVersionContent } from '../domain/template.ts';
import { COLLECTIONS, type TemplateDoc, type TemplateVersionDoc, type VersionAuthorDoc } from './documents.ts';
import { isDuplicateKeyError as isDuplicateKey } from './mongo.ts';
import { keysetPage, NEWEST_ID_FIRST, type Page, type PageRequest } from './pagination.ts';
import { openContent, sealContent } from './pdf-password-box.ts';

/** Who saved a version and their note (both optional: absent on older versions). */
export interface VersionMeta {
  author?: VersionAuthorDoc | undefined;
  /** '' for none (then not stored). */
  note?: string | undefined;
}

function metaFields(meta: VersionMeta): Pick<TemplateVersionDoc, 'author' | 'note'> {
  return { ...(meta.author ? { author: meta.author } : {}), ...(meta.note ? { note: meta.note } : {}) };
}

/** Not being deleted (DeleteTemplate sets deletingAt first). */
const NOT_DELETING = { deletingAt: { $exists: false } } as const;

export function templateVersionId(templateId: ObjectId, version: number): ObjectId {
  return deterministicObjectId('template-version', templateId.toHexString(), String(version));
}

/** What the BASIC view of a version holds: everything but the large parts of its content. */
const BASIC_VERSION_FIELDS = {
  templateId: 1,
  version: 1,
  createdAt: 1,
  author: 1,
  note: 1,
  'content.variables': 1,
  'content.pdfOptions': 1,
  'content.title': 1,
  'content.metadata': 1,
  'content.locale': 1,
  'content.timeZone': 1,
  // Document settings (src/render/finishing/document-settings.ts): small, so in the BASIC view too.
  'content.conformance': 1,
  'content.eInvoice': 1,
  'content.sign': 1,
  'content.stamp': 1,
  'content.outline': 1,
  'content.attachments': 1,
} as const;

export class TemplatesRepository {
  private readonly templates;
  private readonly versions;
  private readonly secretKey: Buffer;
  /** `secretKey`: DOCGEN_SECRET_KEY, which seals the versions' PDF passwords (pdf-password-box.ts). */
  constructor(db: Db, secretKey: Buffer) {
    this.templates = db.collection<TemplateDoc>(COLLECTIONS.templates);
    this.versions = db.collection<TemplateVersionDoc>(COLLECTIONS.templateVersions);
    this.secretKey = secretKey;
  }

  /** A stored version as everything above the repository sees it: passwords open. */
  private opened(doc: TemplateVersionDoc): TemplateVersionDoc {
    return { ...doc, content: openContent(doc.content, this.secretKey, doc.templateId) };
  }

  async create(
    workspaceId: ObjectId,
    name: string,
    content: TemplateVersionContent,
    meta: VersionMeta = {},
  ): Promise<{ template: TemplateDoc; version: TemplateVersionDoc }> {
    const now = new Date();
    const template: TemplateDoc = {
      _id: new ObjectId(),
      workspaceId,
      name,
      status: 'ACTIVE',
      publishedVersion: 0,
      latestVersion: 1,
      createdAt: now,
      updatedAt: now,
    };
    // Version first: a template row never points at a version that does not exist.
    const version: TemplateVersionDoc = {
      _id: templateVersionId(template._id, 1),
      templateId: template._id,
      version: 1,
      content,
      createdAt: now,
      ...metaFields(meta),
    };
    await this.versions.insertOne({ ...version, content: sealContent(content, this.secretKey, template._id) });
    await this.templates.insertOne(template);
    return { template, version };
  }

  get(id: ObjectId): Promise<TemplateDoc | null> {
    return this.templates.findOne({ _id: id });
  }

  /** Newest first. */
  list(workspaceId: ObjectId, page: PageRequest): Promise<Page<TemplateDoc>> {
    return keysetPage(this.templates, { workspaceId }, NEWEST_ID_FIRST, page);
  }

  async getVersion(templateId: ObjectId, version: number): Promise<TemplateVersionDoc | null> {
    const doc = await this.versions.findOne({ _id: templateVersionId(templateId, version) });
    return doc && this.opened(doc);
  }

  /**
   * A template's versions, oldest first. `basic` leaves out what can be large (body, CSS,
   * partials, sample data: up to 1 MiB each), so a list of hundreds of versions stays small;
   * those fields read as empty.
   */
  async listVersions(templateId: ObjectId, view: 'basic' | 'full' = 'full'): Promise<TemplateVersionDoc[]> {
    if (view === 'full')
      return (await this.versions.find({ templateId }).sort({ version: 1 }).toArray()).map((doc) => this.opened(doc));
    // An inclusion projection: the stand-in applies a nested exclusion to its stored document
    // (test/integration/congodb-capabilities.test.ts), deleting the field for good.
    const rows = await this.versions
      .find<TemplateVersionDoc>({ templateId }, { projection: BASIC_VERSION_FIELDS })
      .sort({ version: 1 })
      .toArray();
    return rows.map((row) => this.opened({ ...row, content: { ...row.content, body: '', css: '', partials: {} } }));
  }

  /**
   * Adds the next version. The version number is claimed by inserting its deterministic _id,
   * so two concurrent adds never share a number; the template's latestVersion only grows.
   * Returns null when the template is archived (or gone).
   */
  async addVersion(
    templateId: ObjectId,
    content: TemplateVersionContent,
    meta: VersionMeta = {},
  ): Promise<TemplateVersionDoc | null> {
    for (let tries = 0; tries < 20; tries++) {
      const template = await this.get(templateId);
      if (!template || template.status !== 'ACTIVE' || template.deletingAt) return null;
      const number = template.latestVersion + 1;
      const version: TemplateVersionDoc = {
        _id: templateVersionId(templateId, number),
        templateId,
        version: number,
        content,
        createdAt: new Date(),
        ...metaFields(meta),
      };
      try {
        await this.versions.insertOne({ ...version, content: sealContent(content, this.secretKey, templateId) });
      } catch (err) {
        if (isDuplicateKey(err)) {
          // Another add took this number; make sure latestVersion reflects it, then retry.
          await this.templates.updateOne(
            { _id: templateId, latestVersion: { $lt: number } },
            { $set: { latestVersion: number } },
          );
          continue;
        }
        throw err;
      }
      await this.templates.updateOne(
        { _id: templateId, latestVersion: { $lt: number } },
        { $set: { latestVersion: number, updatedAt: new Date() } },
      );
      return version;
    }
    throw new Error('could not allocate a template version number under contention');
  }

  /** Publishes a version of an ACTIVE template; null when the template is not active. */
  async publish(templateId: ObjectId, version: number): Promise<TemplateDoc | null> {
    const result = await this.templates.findOneAndUpdate(
      { _id: templateId, status: 'ACTIVE', ...NOT_DELETING },
      { $set: { publishedVersion: version, updatedAt: new Date() } },
      { returnDocument: 'after' },
    );
    return result ?? null;
  }

  async archive(templateId: ObjectId): Promise<TemplateDoc | null> {
    await this.templates.updateOne(
      { _id: templateId, status: 'ACTIVE' },
      { $set: { status: 'ARCHIVED', updatedAt: new Date() } },
    );
    return this.get(templateId);
  }

  /** Null when the template is gone or being deleted. */
  async rename(templateId: ObjectId, name: string): Promise<TemplateDoc | null> {
    return this.templates.findOneAndUpdate(
      { _id: templateId, ...NOT_DELETING },
      { $set: { name, updatedAt: new Date() } },
      { returnDocument: 'after' },
    );
  }

  /** ARCHIVED to ACTIVE (an active one stays as it is); null when gone or being deleted. */
  async unarchive(templateId: ObjectId): Promise<TemplateDoc | null> {
    await this.templates.updateOne(
      { _id: templateId, status: 'ARCHIVED', ...NOT_DELETING },
      { $set: { status: 'ACTIVE', updatedAt: new Date() } },
    );
    const after = await this.get(templateId);
    return after && !after.deletingAt ? after : null;
  }

  // ---- used, and deleting ------------------------------------------------------------------
  // Deleting a template and making its first generation race without a transaction. Both
  // sides write one field of the template row, each on the condition that the other's is
  // absent, and MongoDB applies updates to one document one at a time: markUsed (before a
  // generation is stored) needs no deletingAt; beginDelete needs no usedAt. Whichever comes
  // first wins: a marked-used template is archived instead of deleted, and a generation that
  // finds the template being deleted is made as for an unknown template (no templateId).

  /**
   * Records that a generation of the template is about to be stored. False when the template
   * is gone or being deleted: the generation must not name it.
   */
  async markUsed(templateId: ObjectId, at = new Date()): Promise<boolean> {
    // $min keeps the first use.
    const result = await this.templates.updateOne({ _id: templateId, ...NOT_DELETING }, { $min: { usedAt: at } });
    return result.matchedCount === 1;
  }

  /**
   * Starts deleting a template no generation has marked used (a repeated call after a crash
   * finds it marked already). Null when it is gone or used.
   */
  async beginDelete(templateId: ObjectId, at = new Date()): Promise<TemplateDoc | null> {
    return this.templates.findOneAndUpdate(
      { _id: templateId, usedAt: { $exists: false } },
      { $min: { deletingAt: at } },
      { returnDocument: 'after' },
    );
  }

  /**
   * Ends a delete that found generations after all (stored before usedAt existed): the
   * template is kept, used and archived.
   */
  async keepAsUsed(templateId: ObjectId, at = new Date()): Promise<TemplateDoc | null> {
    return this.templates.findOneAndUpdate(
      { _id: templateId },
      { $min: { usedAt: at }, $unset: { deletingAt: '' }, $set: { status: 'ARCHIVED', updatedAt: at } },
      { returnDocument: 'after' },
    );
  }

  /** Removes a template beginDelete marked, with its versions. */
  async removeDeleting(templateId: ObjectId): Promise<void> {
    await this.versions.deleteMany({ templateId });
    await this.templates.deleteOne({ _id: templateId, deletingAt: { $exists: true } });
    // A version add that read the template before the mark may have stored one since.
    await this.versions.deleteMany({ templateId });
  }
}
