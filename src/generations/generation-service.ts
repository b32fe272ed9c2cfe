// Create, read and list generations for an authenticated principal. Transport-neutral: the
// REST gateway and the Connect handlers both call this after authentication, scope and rate
// limit checks (src/api/public-api.ts).
import type { ObjectId } from 'mongodb';
import type { Principal } from '../auth/api-key-authenticator.ts';
import { DomainError, notFound, validationError } from '../domain/errors.ts';
import { deterministicObjectId, formatId, parseId } from '../domain/ids.ts';
import {
  bsonSize,
  MAX_NEW_GENERATION_BSON_BYTES,
  type GenerationDoc,
  type GenerationStatus,
} from '../store/documents.ts';
import { inMode, type GenerationsRepository } from '../store/generations-repository.ts';
import { renderRouteOf, type RenderRoute } from '../queue/messages.ts';
import { checkPageSize, type PageTokens } from '../store/pagination.ts';
import type { TemplatesRepository } from '../store/templates-repository.ts';
import { createInputHash, type CreateGenerationInput } from './create-input.ts';
import { GENERATION_STATUSES, toGenerationView, type GenerationView } from './generation-view.ts';

/** Lifetime of a minted outputUrl by default (DOCGEN_OUTPUT_URL_TTL_SECONDS). */
export const OUTPUT_URL_TTL_SECONDS = 3600;
const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

export interface RenderJobPublisher {
  /** Publishes the job into the generation's workspace lane (src/queue/messages.ts renderRouteOf). */
  publishRenderJob(generationId: string, route: RenderRoute): Promise<void>;
}

export interface OutputUrlSigner {
  presignGet(key: string, expirySeconds: number): Promise<string>;
}

export interface ListGenerationsInput {
  pageSize?: number;
  pageToken?: string;
  status?: string;
  templateId?: string;
  createdAfter?: Date;
  createdBefore?: Date;
  /** `bat_…`: only that batch's items. */
  batchId?: string;
}

/**
 * Whose generations a read sees: a workspace's, and of one mode when `test` is set (an API
 * key sees only its own mode, docs/interface.md#test-mode); the admin plane sees both.
 */
export interface GenerationScope {
  workspaceId: ObjectId;
  test?: boolean | undefined;
}

export interface GenerationPage {
  generations: GenerationView[];
  nextPageToken: string | null;
}

export interface GenerationServiceDeps {
  generations: GenerationsRepository;
  templates: TemplatesRepository;
  jobs: RenderJobPublisher;
  urls: OutputUrlSigner;
  pageTokens: PageTokens;
  /** Lifetime of each minted outputUrl; default OUTPUT_URL_TTL_SECONDS. */
  outputUrlTtlSeconds?: number;
  onPublishError?: (generationId: string, err: unknown) => void;
  /** Runs between the database write and the job publish (a seam the crash tests fill). */
  afterInsert?: (generationId: string) => void;
}

export interface TemplateIdentity {
  _id: ObjectId;
  workspaceId: ObjectId;
  name: string;
}

const TEMPLATE_CACHE_SIZE = 1000;
/** How long a found template's name is reused for new generations (a rename shows after it). */
const TEMPLATE_CACHE_MS = 30_000;

const mebibytes = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

export class GenerationService {
  private readonly deps: GenerationServiceDeps;
  private readonly templateIdentities = new Map<string, { identity: TemplateIdentity; foundAt: number }>();
  /** markJobPublished writes still on their way (not awaited by the create: see there). */
  private readonly bookkeeping = new Set<Promise<void>>();
  constructor(deps: GenerationServiceDeps) {
    this.deps = deps;
  }

  /** `renderedFrom`: the generation this one renders again (the portal's "Render again"). */
  async create(
    principal: Pick<Principal, 'workspaceId' | 'test'>,
    input: CreateGenerationInput,
    idempotencyKey?: string,
    origin: { renderedFrom?: ObjectId } = {},
  ): Promise<GenerationView> {
    const { generations } = this.deps;
    const template = await this.findTemplate(principal.workspaceId, input.templateId);
    const now = new Date();
    const doc = generations.newDoc(
      {
        workspaceId: principal.workspaceId,
        templateId: template?._id ?? null,
        templateRef: input.templateId,
        templateName: template?.name ?? '',
        data: input.variables,
        test: principal.test,
      },
      now,
    );
    if (origin.renderedFrom) doc.renderedFrom = origin.renderedFrom;

    // The variables arrive as JSON; MongoDB stores BSON, which for arrays of small values is
    // several times larger (a 3 MiB JSON array of numbers can exceed the 16 MiB document limit).
    const size = bsonSize(doc);
    if (size > MAX_NEW_GENERATION_BSON_BYTES) {
      throw validationError([
        {
          field: 'variables',
          issue: `take ${mebibytes(size)} MiB as stored (BSON), more than the ${mebibytes(MAX_NEW_GENERATION_BSON_BYTES)} MiB a generation can hold; send less data (large arrays of small values grow the most)`,
        },
      ]);
    }

    if (idempotencyKey !== undefined) {
      const bodyHash = createInputHash(input);
      // A key's mode is part of the scope: a test key's Idempotency-Key never answers with a
      // live generation (nor the reverse). Live keys keep the id they always had.
      const recordId = principal.test
        ? deterministicObjectId('idempotency', principal.workspaceId.toHexString(), 'test', idempotencyKey)
        : deterministicObjectId('idempotency', principal.workspaceId.toHexString(), idempotencyKey);
      const existing = await generations.claimIdempotencyKey({
        _id: recordId,
        workspaceId: principal.workspaceId,
        bodyHash,
        generationId: doc._id,
        createdAt: now,
        expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      });
      if (existing) {
        if (existing.bodyHash !== bodyHash) {
          throw new DomainError(
            'IDEMPOTENCY_KEY_REUSED',
            'This Idempotency-Key was used with a different request body',
          );
        }
        const earlier = await generations.get(existing.generationId);
        if (earlier) return this.view(earlier);
        // The earlier request's generation is not stored: its insert is still on its way (a
        // stall, a failover) or was lost with the request. Insert it under the very _id the key
        // names, so whichever insert comes first makes the one generation and the other meets it.
        doc._id = existing.generationId;
      }
    }

    if (!(await generations.insertOnce(doc))) {
      // Written already: by an earlier request with this key, or by this one, whose first
      // attempt reached the server before a failover cut the answer off (the retry then meets it).
      const stored = await generations.get(doc._id);
      if (stored) return this.view(stored);
      throw new DomainError('UNAVAILABLE', 'The generation is being created by another request; retry shortly', {
        retryAfterSeconds: 1,
      });
    }
    const id = formatId('generation', doc._id);
    this.deps.afterInsert?.(id);
    try {
      await this.deps.jobs.publishRenderJob(id, renderRouteOf(doc));
      // Not awaited: the flag only spares the outbox sweeper a republish, which JetStream's
      // msgID de-duplication would drop anyway, so the client need not wait for it. Tracked,
      // so that closing waits for it (settle) instead of closing the database under it: a
      // write cut off that way failed with MongoExpiredSessionError after the process stopped.
      const write = generations
        .markJobPublished(doc._id)
        .catch((err: unknown) => this.deps.onPublishError?.(id, err))
        .finally(() => this.bookkeeping.delete(write));
      this.bookkeeping.add(write);
    } catch (err) {
      // The row is the source of truth: the outbox sweeper publishes it shortly.
      this.deps.onPublishError?.(id, err);
    }
    return this.view(doc);
  }

  /**
   * Waits for the bookkeeping writes of finished creates (never failing): call after the
   * listeners stopped and before the database connection closes.
   */
  async settle(): Promise<void> {
    while (this.bookkeeping.size > 0) await Promise.all([...this.bookkeeping]);
  }

  /** Another workspace's or another mode's generation is as unknown as a missing one. */
  async get(scope: GenerationScope, id: string): Promise<GenerationView> {
    const doc = await this.findDoc(id);
    if (!doc || !doc.workspaceId.equals(scope.workspaceId)) throw notFound('Generation');
    if (scope.test !== undefined && !inMode(doc, scope.test)) throw notFound('Generation');
    return this.view(doc);
  }

  /** Any workspace's generation (the admin plane, which is not scoped to one workspace). */
  async getInAnyWorkspace(id: string): Promise<GenerationView> {
    const doc = await this.findDoc(id);
    if (!doc) throw notFound('Generation');
    return this.view(doc);
  }

  private async findDoc(id: string): Promise<GenerationDoc | null> {
    const objectId = parseId('generation', id);
    return objectId ? this.deps.generations.get(objectId) : null;
  }

  /** Newest first, with filters and keyset paging; the public API and the admin plane both list here. */
  async list(scope: GenerationScope, input: ListGenerationsInput): Promise<GenerationPage> {
    checkPageSize(input.pageSize); // first: a bad size is reported before bad filters
    if (input.status !== undefined && !(GENERATION_STATUSES as readonly string[]).includes(input.status)) {
      throw validationError([{ field: 'status', issue: `must be one of ${GENERATION_STATUSES.join(', ')}` }]);
    }
    if (input.templateId !== undefined && input.templateId.length === 0) {
      throw validationError([{ field: 'templateId', issue: 'must not be empty' }]);
    }
    if (input.batchId !== undefined && input.batchId.length === 0) {
      throw validationError([{ field: 'batchId', issue: 'must not be empty' }]);
    }
    const page = this.deps.pageTokens.request(input, {
      list: 'generations',
      filters: {
        workspace: scope.workspaceId.toHexString(),
        // A test key's page token is refused elsewhere. Live lists hash as they did before
        // test mode, so tokens handed out across an upgrade keep working.
        mode: scope.test === true ? 'test' : undefined,
        status: input.status,
        templateId: input.templateId,
        createdAfter: input.createdAfter?.toISOString(),
        createdBefore: input.createdBefore?.toISOString(),
        batchId: input.batchId,
      },
    });
    // An id that is not a batch id matches nothing (as for templateId).
    if (input.batchId !== undefined && !parseId('batch', input.batchId))
      return { generations: [], nextPageToken: null };
    let templateId: ObjectId | undefined;
    if (input.templateId !== undefined) {
      templateId = parseId('template', input.templateId);
      // An id that is not a template id matches nothing.
      if (!templateId) return { generations: [], nextPageToken: null };
    }
    const rows = await this.deps.generations.list(
      {
        workspaceId: scope.workspaceId,
        test: scope.test,
        status: input.status as GenerationStatus | undefined,
        templateId,
        createdAfter: input.createdAfter,
        createdBefore: input.createdBefore,
        batchId: input.batchId,
      },
      page,
    );
    return {
      generations: await Promise.all(rows.items.map((doc) => this.view(doc))),
      nextPageToken: rows.nextPageToken || null,
    };
  }

  async view(doc: GenerationDoc): Promise<GenerationView> {
    const url =
      doc.status === 'COMPLETED' && doc.outputKey
        ? await this.deps.urls.presignGet(doc.outputKey, this.deps.outputUrlTtlSeconds ?? OUTPUT_URL_TTL_SECONDS)
        : null;
    return toGenerationView(doc, url);
  }

  /**
   * The template's id and name for a new generation, once the template is marked used
   * (TemplatesRepository.markUsed: a used template is never deleted). Null for an unknown
   * template, another workspace's, and one being deleted. Found ones are remembered for
   * TEMPLATE_CACHE_MS (a rename reaches new generations' names within it; a used template stays
   * used, and whether it is published or archived is decided at render time, not here).
   */
  async findTemplate(workspaceId: ObjectId, templateRef: string): Promise<TemplateIdentity | null> {
    const now = Date.now();
    let cached = this.templateIdentities.get(templateRef);
    if (!cached || now - cached.foundAt > TEMPLATE_CACHE_MS) {
      const id = parseId('template', templateRef);
      const doc = id ? await this.deps.templates.get(id) : null;
      if (!doc || doc.deletingAt || !doc.workspaceId.equals(workspaceId)) return null;
      if (!doc.usedAt && !(await this.deps.templates.markUsed(doc._id))) return null;
      cached = { identity: { _id: doc._id, workspaceId: doc.workspaceId, name: doc.name }, foundAt: now };
      this.templateIdentities.delete(templateRef);
      if (this.templateIdentities.size >= TEMPLATE_CACHE_SIZE)
        this.templateIdentities.delete(this.templateIdentities.keys().next().value!);
      this.templateIdentities.set(templateRef, cached);
    }
    // Another workspace's template is as unknown as a missing one.
    return cached.identity.workspaceId.equals(workspaceId) ? cached.identity : null;
  }
}
