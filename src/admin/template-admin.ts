// Templates (docs/interface.md#templates): create with a first version, add immutable versions,
// publish one after checking its Liquid and PDF options, rename, archive and unarchive, delete
// (a never-used one; a used one is archived), and preview-render without storing (stored
// versions, and unsaved content for the portal's editor), and check unsaved content. Each
// version records who saved it and an optional note.
import type { ObjectId } from 'mongodb';
import { DomainError, failedPrecondition, notFound, validationError } from '../domain/errors.ts';
import { formatId } from '../domain/ids.ts';
import type { JsonObject, Template, TemplateVersion, TemplateVersionContent } from '../domain/template.ts';
import type { TemplateDoc, TemplateVersionDoc, VersionAuthorDoc } from '../store/documents.ts';
import type { TemplatesRepository } from '../store/templates-repository.ts';
import type { GenerationsRepository } from '../store/generations-repository.ts';
import type { UserDoc } from '../store/identity-documents.ts';
import type { VersionAuthorView } from '../domain/template.ts';
import { normalizeVersionNote, versionNoteIssue } from '../domain/version-note.ts';
import type { Page, PageInput, PageTokens } from '../store/pagination.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';
import { quoteId, requireId, requireName, requireWorkspace } from '../domain/input.ts';
import { literalAssetNamesOf } from '../render/liquid/asset-url.ts';
import { normalizeContent, type TemplateContentInput } from './template-content.ts';
import { keepPdfPasswords } from './pdf-password-keep.ts';
import type { DiagnosticSource, TemplateDiagnostic } from '../domain/template-diagnostics.ts';
import { GALLERY_NAMES, galleryTemplate, listGallery, type GalleryTemplate } from '../gallery/gallery.ts';

/** One problem found by the analyzer: a message, or an object carrying one. */
export type TemplateProblem = string | { message: string };

/** Parses the Liquid and checks declarations and PDF options; empty when publishable. */
export type AnalyzeTemplate = (
  content: TemplateVersionContent,
) => readonly TemplateProblem[] | Promise<readonly TemplateProblem[]>;

/** The same checks, placed, with warnings and the variables to declare (src/render/liquid/analyze-template.ts). */
export type DiagnoseTemplate = (content: TemplateVersionContent) => ContentCheck;

/**
 * Renders content to PDF bytes on a render process; stores nothing. Resolves the variables
 * exactly as a generation's render does. Throws the render's error (`kind`, `code`, `message`,
 * `diagnostic`) or DomainError UNAVAILABLE.
 */
export type RenderPreview = (
  content: TemplateVersionContent,
  variables: JsonObject,
  options?: PreviewRenderOptions,
) => Promise<{ pdf: Uint8Array; renderMs: number }>;

/** Whose assets the preview may use, and the title when the version sets none. */
export interface PreviewRenderOptions {
  workspaceId?: string | undefined;
  templateName?: string | undefined;
}

export interface TemplateAdminDeps {
  workspaces: WorkspacesRepository;
  templates: TemplatesRepository;
  analyzeTemplate: AnalyzeTemplate;
  diagnoseTemplate: DiagnoseTemplate;
  renderPreview: RenderPreview;
  /** Asset names (of those given) the workspace lacks; publishing needs none missing. */
  missingAssets?: ((workspaceId: string, names: readonly string[]) => Promise<string[]>) | undefined;
  /** Whether the workspace has the certificate (`crt_…`); publishing a signed version needs it. */
  certificateExists?: ((workspaceId: string, certificateId: string) => Promise<boolean>) | undefined;
  /** Counts a used template's generations for DeleteTemplate's answer. */
  generations: Pick<GenerationsRepository, 'countForTemplate'>;
  /** The authors' names and emails as they are now; without it only the user id is shown. */
  users?: { getMany(ids: ObjectId[]): Promise<UserDoc[]> } | undefined;
  pageTokens: PageTokens;
}

/** Who is saving a version: a signed-in member (`usr_…` id) or the operator token. */
export type VersionAuthorInput = { kind: 'member'; userId: ObjectId } | { kind: 'operator' };

/** Who saves the version and their note ('' for none). */
export interface VersionSaveInput {
  author?: VersionAuthorInput | undefined;
  note?: string | undefined;
}

/** What DeleteTemplate did: deleted, or archived because generations used it. */
export type DeleteOutcome =
  { outcome: 'deleted' } | { outcome: 'archived'; template: Template; generationCount: number };

export interface ContentCheck {
  diagnostics: TemplateDiagnostic[];
  suggestedVariables: string[];
}

export interface ContentPreview {
  /** Empty when diagnostics has an error. */
  pdf: Uint8Array;
  diagnostics: TemplateDiagnostic[];
  renderMs: number;
}

export interface CreateTemplateInput {
  workspaceId: string;
  name: string;
  content: TemplateContentInput | undefined;
  publish?: boolean | undefined;
  /** Start from this gallery template (src/gallery/) instead of `content`. */
  fromGallery?: string | undefined;
  author?: VersionAuthorInput | undefined;
  note?: string | undefined;
}

export interface TemplateWithVersion {
  template: Template;
  version: TemplateVersion;
}

export function toTemplateView(doc: TemplateDoc): Template {
  return {
    id: formatId('template', doc._id),
    workspaceId: formatId('workspace', doc.workspaceId),
    name: doc.name,
    status: doc.status,
    publishedVersion: doc.publishedVersion,
    latestVersion: doc.latestVersion,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

/** `users`: the members among the authors, by user id (hex); one missing shows only its id. */
export function toTemplateVersionView(
  doc: TemplateVersionDoc,
  users: ReadonlyMap<string, UserDoc> = new Map(),
): TemplateVersion {
  return {
    templateId: formatId('template', doc.templateId),
    version: doc.version,
    content: doc.content,
    createdAt: doc.createdAt,
    author: authorView(doc.author, users),
    note: doc.note ?? '',
  };
}

function authorView(
  author: VersionAuthorDoc | undefined,
  users: ReadonlyMap<string, UserDoc>,
): VersionAuthorView | undefined {
  if (!author) return undefined;
  if (author.kind === 'operator') return { kind: 'operator' };
  const user = users.get(author.userId.toHexString());
  return {
    kind: 'member',
    userId: formatId('user', author.userId),
    name: user?.displayName ?? '',
    email: user?.email ?? '',
  };
}

/** The note as stored, or a validation error naming the field. */
function checkedNote(note: string | undefined): string {
  const issue = versionNoteIssue(note);
  if (issue) throw validationError([{ field: 'note', issue }]);
  return normalizeVersionNote(note);
}

function authorDoc(author: VersionAuthorInput | undefined): VersionAuthorDoc | undefined {
  return author?.kind === 'member' ? { kind: 'member', userId: author.userId } : author;
}

export class TemplateAdmin {
  private readonly deps: TemplateAdminDeps;
  constructor(deps: TemplateAdminDeps) {
    this.deps = deps;
  }

  async create(input: CreateTemplateInput): Promise<TemplateWithVersion> {
    const name = requireName(input.name);
    const note = checkedNote(input.note);
    // A new template has no earlier version: a flag asking to keep a password is refused.
    const content = normalizeContent(keepPdfPasswords(contentToCreate(input), undefined));
    const workspace = await requireWorkspace(this.deps.workspaces, input.workspaceId);
    // Check before writing: a refused publish must not leave a half-made template behind.
    if (input.publish) await this.requirePublishable(content, 1, workspace._id);
    const created = await this.deps.templates.create(workspace._id, name, content, {
      author: authorDoc(input.author),
      note,
    });
    let template = created.template;
    if (input.publish) template = await this.publishChecked(template._id, 1);
    return { template: toTemplateView(template), version: await this.versionView(created.version) };
  }

  /** The starter gallery (src/gallery/): what `create` takes as `fromGallery`. */
  gallery(): GalleryTemplate[] {
    return listGallery();
  }

  async get(id: string): Promise<Template> {
    return toTemplateView(await this.requireTemplate(id, 'id'));
  }

  async list(workspaceId: string, input?: PageInput): Promise<Page<Template>> {
    const page = this.deps.pageTokens.request(input, { list: 'templates', filters: { workspace: workspaceId } });
    const workspace = await requireWorkspace(this.deps.workspaces, workspaceId);
    const result = await this.deps.templates.list(workspace._id, page);
    return { items: result.items.map(toTemplateView), nextPageToken: result.nextPageToken };
  }

  /** Adds the next version; refused for archived templates. */
  async addVersion(
    templateId: string,
    contentInput: TemplateContentInput | undefined,
    publish = false,
    save: VersionSaveInput = {},
  ): Promise<TemplateWithVersion> {
    const existing = await this.requireTemplate(templateId, 'templateId');
    const note = checkedNote(save.note);
    const content = normalizeContent(keepPdfPasswords(contentInput, await this.previousContent(existing)));
    if (existing.status === 'ARCHIVED') throw archived(templateId);
    if (existing.deletingAt) throw beingDeleted(templateId);
    if (publish) await this.requirePublishable(content, existing.latestVersion + 1, existing.workspaceId);
    const version = await this.deps.templates.addVersion(existing._id, content, {
      author: authorDoc(save.author),
      note,
    });
    if (!version) {
      // Archived (or gone) between the read and the write.
      const now = await this.deps.templates.get(existing._id);
      if (!now) throw notFound(`Template ${quoteId(templateId)}`);
      if (now.deletingAt) throw beingDeleted(templateId);
      throw archived(templateId);
    }
    const template = publish
      ? await this.publishChecked(existing._id, version.version)
      : await this.requireTemplateById(existing._id, templateId);
    return { template: toTemplateView(template), version: await this.versionView(version) };
  }

  async getVersion(templateId: string, version: number): Promise<TemplateVersion> {
    const template = await this.requireTemplate(templateId, 'templateId');
    checkVersionNumber(version, false);
    return this.versionView(await this.requireVersion(template, templateId, version));
  }

  /** `basic`: without body, CSS, partials and sample data (TemplatesRepository.listVersions). */
  async listVersions(templateId: string, view: 'basic' | 'full' = 'full'): Promise<TemplateVersion[]> {
    const template = await this.requireTemplate(templateId, 'templateId');
    const docs = await this.deps.templates.listVersions(template._id, view);
    const users = await this.authors(docs);
    return docs.map((doc) => toTemplateVersionView(doc, users));
  }

  private async versionView(doc: TemplateVersionDoc): Promise<TemplateVersion> {
    return toTemplateVersionView(doc, await this.authors([doc]));
  }

  /** The member authors of these versions, by user id (hex). */
  private async authors(docs: readonly TemplateVersionDoc[]): Promise<Map<string, UserDoc>> {
    const ids = new Map<string, ObjectId>();
    for (const d of docs) if (d.author?.kind === 'member') ids.set(d.author.userId.toHexString(), d.author.userId);
    if (ids.size === 0 || !this.deps.users) return new Map();
    const users = await this.deps.users.getMany([...ids.values()]);
    return new Map(users.map((u) => [u._id.toHexString(), u]));
  }

  /** Publishes a version once the analyzer finds no problem in it. */
  async publish(templateId: string, version: number): Promise<Template> {
    const template = await this.requireTemplate(templateId, 'templateId');
    checkVersionNumber(version, false);
    if (template.status === 'ARCHIVED')
      throw failedPrecondition(
        `Template ${quoteId(templateId)} is archived; archived templates cannot publish versions`,
      );
    const stored = await this.requireVersion(template, templateId, version);
    await this.requirePublishable(stored.content, version, template.workspaceId);
    return toTemplateView(await this.publishChecked(template._id, version));
  }

  /** Idempotent. Generations of an archived template fail; its versions stay readable. */
  async archive(id: string): Promise<Template> {
    const template = await this.requireTemplate(id, 'id');
    const after = await this.deps.templates.archive(template._id);
    if (!after) throw notFound(`Template ${quoteId(id)}`);
    return toTemplateView(after);
  }

  /** A new name, by the rules of create; the id (and so generations' references) stays. */
  async rename(id: string, newName: string): Promise<Template> {
    const template = await this.requireTemplate(id, 'id');
    const name = requireName(newName);
    const after = await this.deps.templates.rename(template._id, name);
    if (!after) throw notFound(`Template ${quoteId(id)}`);
    return toTemplateView(after);
  }

  /** ARCHIVED to ACTIVE: generations of it are accepted again. Idempotent. */
  async unarchive(id: string): Promise<Template> {
    const template = await this.requireTemplate(id, 'id');
    const after = await this.deps.templates.unarchive(template._id);
    if (!after) throw notFound(`Template ${quoteId(id)}`);
    return toTemplateView(after);
  }

  /**
   * Deletes a template no generation ever used (live or test), with its versions; archives a
   * used one instead. Without transactions: the template is first marked deleting on the
   * condition that no generation marked it used, and a generation marks it used on the
   * condition that it is not being deleted (TemplatesRepository), so a generation made
   * concurrently either keeps the template (archived) or is made as for an unknown template.
   * Templates used before usedAt existed are found by their generations, looked for after the
   * mark (a generation stored after the mark cannot name the template).
   */
  async delete(id: string): Promise<DeleteOutcome> {
    const template = await this.requireTemplate(id, 'id');
    const marked = await this.deps.templates.beginDelete(template._id);
    if (marked) {
      const generations = await this.deps.generations.countForTemplate(marked.workspaceId, marked._id);
      if (generations === 0) {
        await this.deps.templates.removeDeleting(marked._id);
        return { outcome: 'deleted' };
      }
      const kept = await this.deps.templates.keepAsUsed(marked._id);
      if (!kept) throw notFound(`Template ${quoteId(id)}`);
      return { outcome: 'archived', template: toTemplateView(kept), generationCount: generations };
    }
    // Used (or gone meanwhile): archive.
    const archivedTemplate = await this.deps.templates.archive(template._id);
    if (!archivedTemplate) throw notFound(`Template ${quoteId(id)}`);
    const generationCount = await this.deps.generations.countForTemplate(template.workspaceId, template._id);
    return { outcome: 'archived', template: toTemplateView(archivedTemplate), generationCount };
  }

  /**
   * Renders `version` (0: the published one) with `variables` (undefined: the version's
   * sample data) on a render process; nothing is stored.
   */
  async preview(templateId: string, version: number, variables: JsonObject | undefined): Promise<Uint8Array> {
    const template = await this.requireTemplate(templateId, 'templateId');
    checkVersionNumber(version, true);
    const number = version === 0 ? template.publishedVersion : version;
    if (number === 0)
      throw failedPrecondition(`Template ${quoteId(templateId)} has no published version; pass the version to preview`);
    const stored = await this.requireVersion(template, templateId, number);
    try {
      const options = { workspaceId: formatId('workspace', template.workspaceId), templateName: template.name };
      return (await this.deps.renderPreview(stored.content, variables ?? stored.content.sampleData ?? {}, options)).pdf;
    } catch (err) {
      throw previewError(err);
    }
  }

  /**
   * Renders unsaved content (the portal's live preview) with `variables` (undefined: the
   * content's sample data). Problems of the content come back as diagnostics, not errors.
   */
  async previewContent(
    workspaceId: string,
    input: TemplateContentInput | undefined,
    variables: JsonObject | undefined,
    templateId = '',
  ): Promise<ContentPreview> {
    await requireWorkspace(this.deps.workspaces, workspaceId);
    const previous = await this.editedContent(workspaceId, templateId);
    const normalized = normalizeOrDiagnose(input, previous);
    if ('diagnostics' in normalized) return { pdf: new Uint8Array(), diagnostics: normalized.diagnostics, renderMs: 0 };
    const { content } = normalized;
    try {
      const { pdf, renderMs } = await this.deps.renderPreview(content, variables ?? content.sampleData ?? {}, {
        workspaceId,
      });
      return { pdf, diagnostics: [], renderMs };
    } catch (err) {
      const diagnostic = renderDiagnostic(err);
      if (diagnostic) return { pdf: new Uint8Array(), diagnostics: [diagnostic], renderMs: 0 };
      throw previewError(err);
    }
  }

  /** The publish checks on unsaved content, without saving it; suggests undeclared variables. */
  async checkContent(
    workspaceId: string,
    input: TemplateContentInput | undefined,
    templateId = '',
  ): Promise<ContentCheck> {
    await requireWorkspace(this.deps.workspaces, workspaceId);
    const previous = await this.editedContent(workspaceId, templateId);
    const normalized = normalizeOrDiagnose(input, previous);
    if ('diagnostics' in normalized) return { diagnostics: normalized.diagnostics, suggestedVariables: [] };
    const check = this.deps.diagnoseTemplate(normalized.content);
    for (const { source, message } of await this.workspaceProblems(normalized.content, workspaceId))
      check.diagnostics.push({ source, line: 0, column: 0, message, severity: 'error' });
    return check;
  }

  private async requirePublishable(
    content: TemplateVersionContent,
    version: number,
    workspaceId: ObjectId,
  ): Promise<void> {
    const problems = (await this.deps.analyzeTemplate(content)).map((p) => (typeof p === 'string' ? p : p.message));
    for (const p of await this.workspaceProblems(content, formatId('workspace', workspaceId))) problems.push(p.message);
    if (problems.length === 0) return;
    throw validationError(
      problems.map((issue) => ({ field: 'content', issue })),
      `Version ${version} cannot be published: ${problems.join('; ')}`,
    );
  }

  /**
   * What the version needs from its workspace: the assets it uses and attaches, and its
   * signing certificate.
   */
  private async workspaceProblems(
    content: TemplateVersionContent,
    workspaceId: string,
  ): Promise<Array<{ source: DiagnosticSource; message: string }>> {
    const problems: Array<{ source: DiagnosticSource; message: string }> = [];
    const used = literalAssetNamesOf(content);
    const attached = content.attachments ?? [];
    const missing =
      this.deps.missingAssets && used.length + attached.length > 0
        ? await this.deps.missingAssets(workspaceId, [...new Set([...used, ...attached])])
        : [];
    for (const name of missing) {
      const inBody = used.includes(name);
      problems.push({
        source: inBody ? 'body' : 'document_settings',
        message: `${inBody ? 'asset' : 'attachments names'} ${JSON.stringify(name)} ${inBody ? 'is used ' : ''}but the workspace has no asset of that name; upload it first (docgen admin asset upload)`,
      });
    }
    const certificate = content.sign?.certificate;
    if (certificate && this.deps.certificateExists && !(await this.deps.certificateExists(workspaceId, certificate)))
      problems.push({
        source: 'document_settings',
        message: `sign.certificate names ${JSON.stringify(certificate)}, which is not a certificate of this workspace; upload one first (docgen admin certificate upload)`,
      });
    return problems;
  }

  private async publishChecked(id: ObjectId, version: number): Promise<TemplateDoc> {
    const template = await this.deps.templates.publish(id, version);
    if (!template)
      throw failedPrecondition(
        `Template ${formatId('template', id)} is archived; archived templates cannot publish versions`,
      );
    return template;
  }

  /**
   * The content whose PDF passwords a `*PasswordSet` flag keeps: the published version's, else
   * the latest's (pdf-password-keep.ts).
   */
  private async previousContent(template: TemplateDoc): Promise<TemplateVersionContent | undefined> {
    const number = template.publishedVersion || template.latestVersion;
    if (!number) return undefined;
    return (await this.deps.templates.getVersion(template._id, number))?.content;
  }

  /** For check/preview of unsaved content: the edited template's previous content ('' : a new template). */
  private async editedContent(workspaceId: string, templateId: string): Promise<TemplateVersionContent | undefined> {
    if (templateId === '') return undefined;
    const template = await this.requireTemplate(templateId, 'templateId');
    if (formatId('workspace', template.workspaceId) !== workspaceId) throw notFound(`Template ${quoteId(templateId)}`);
    return this.previousContent(template);
  }

  private async requireTemplate(value: string, field: string): Promise<TemplateDoc> {
    const id = requireId('template', value, field, 'Template');
    return this.requireTemplateById(id, value);
  }

  private async requireTemplateById(id: ObjectId, shown: string): Promise<TemplateDoc> {
    const template = await this.deps.templates.get(id);
    if (!template) throw notFound(`Template ${quoteId(shown)}`);
    return template;
  }

  private async requireVersion(template: TemplateDoc, shown: string, version: number): Promise<TemplateVersionDoc> {
    const doc = await this.deps.templates.getVersion(template._id, version);
    if (!doc) throw notFound(`Version ${version} of template ${quoteId(shown)}`);
    return doc;
  }
}

/** The content a new template starts with: the submitted one, or a gallery template's. */
function contentToCreate(input: CreateTemplateInput): TemplateContentInput | undefined {
  const from = input.fromGallery ?? '';
  if (from === '') return input.content;
  if (input.content !== undefined)
    throw validationError([
      { field: 'content', issue: 'must be unset when fromGallery is given (the template starts from the gallery)' },
    ]);
  const template = galleryTemplate(from);
  if (!template)
    throw validationError([
      {
        field: 'fromGallery',
        issue: `${JSON.stringify(from)} is not in the gallery; use one of ${GALLERY_NAMES.join(', ')}`,
      },
    ]);
  return template.content as TemplateContentInput;
}

/** Content as it would be stored, or why it could not be, as diagnostics at the fields. */
function normalizeOrDiagnose(
  input: TemplateContentInput | undefined,
  previous: TemplateVersionContent | undefined,
): { content: TemplateVersionContent } | { diagnostics: TemplateDiagnostic[] } {
  try {
    return { content: normalizeContent(keepPdfPasswords(input, previous)) };
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== 'VALIDATION_ERROR') throw err;
    const issues = err.details.length > 0 ? err.details : [{ field: 'content', issue: err.message }];
    return {
      diagnostics: issues.map((i) => ({
        source: sourceOfField(i.field),
        line: 0,
        column: 0,
        message: `${i.field}: ${i.issue}`,
        severity: 'error',
      })),
    };
  }
}

function sourceOfField(field: string): DiagnosticSource {
  const partial = /^content\.partials\.(.+)$/.exec(field);
  if (partial) return `partials/${partial[1]}`;
  if (field.startsWith('content.variables')) return 'variables';
  if (field.startsWith('content.sampleData')) return 'sample_data';
  if (field === 'content.css') return 'css';
  if (field.startsWith('content.pdfOptions.headerTemplate')) return 'header_template';
  if (field.startsWith('content.pdfOptions.footerTemplate')) return 'footer_template';
  if (field.startsWith('content.pdfOptions')) return 'pdf_options';
  if (/^content\.(conformance|eInvoice|sign|stamp|outline|attachments)\b/.test(field)) return 'document_settings';
  return 'body';
}

/** A permanent render failure (the content's or the variables' fault) as a diagnostic. */
function renderDiagnostic(err: unknown): TemplateDiagnostic | undefined {
  const e = err as { kind?: unknown; code?: unknown; message?: unknown; diagnostic?: TemplateDiagnostic } | null;
  if (e?.kind !== 'permanent' || typeof e.message !== 'string') return undefined;
  if (e.diagnostic) return e.diagnostic;
  const source: DiagnosticSource =
    e.code === 'UNKNOWN_VARIABLE' || e.code === 'MISSING_VARIABLE' || e.code === 'INVALID_VARIABLE'
      ? 'variables'
      : e.code === 'INVALID_TEMPLATE'
        ? 'pdf_options'
        : 'body';
  return { source, line: 0, column: 0, message: e.message, severity: 'error' };
}

function beingDeleted(templateId: string): DomainError {
  return failedPrecondition(`Template ${quoteId(templateId)} is being deleted; it takes no new versions`);
}

function archived(templateId: string): DomainError {
  return failedPrecondition(
    `Template ${quoteId(templateId)} is archived; archived templates do not accept new versions`,
  );
}

function checkVersionNumber(version: number, zeroAllowed: boolean): void {
  const min = zeroAllowed ? 0 : 1;
  if (!Number.isInteger(version) || version < min) {
    throw validationError([
      {
        field: 'version',
        issue: zeroAllowed
          ? 'must be 0 (the published version) or a version number'
          : 'must be a version number (1 or more)',
      },
    ]);
  }
}

/**
 * The renderer classifies its failures: a permanent one is a problem of the template or the
 * variables (the caller can fix it), a transient one is the renderer being unavailable.
 */
function previewError(err: unknown): unknown {
  if (err instanceof DomainError) return err;
  const kind = (err as { kind?: unknown } | null)?.kind;
  const message = (err as { message?: unknown } | null)?.message;
  if (kind === 'permanent' && typeof message === 'string')
    return validationError([{ field: 'content', issue: message }], `Preview failed: ${message}`);
  if (kind === 'transient')
    return new DomainError('UNAVAILABLE', 'The renderer is unavailable; retry the preview shortly', {
      retryAfterSeconds: 1,
      cause: err,
    });
  return err;
}
