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
import type { GenerationsRepository } from '../store/generations-repository.ts';
import { checkPageSize, type PageTokens } from '../store/pagination.ts';
import type { TemplatesRepository } from '../store/templates-repository.ts';
import { createInputHash, type CreateGenerationInput } from './create-input.ts';
import { GENERATION_STATUSES, toGenerationView, type GenerationView } from './generation-view.ts';

/** Lifetime of a minted outputUrl by default (DOCGEN_OUTPUT_URL_TTL_SECONDS). */
export const OUTPUT_URL_TTL_SECONDS = 3600;
const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

export interface RenderJobPublisher {
  publishRenderJob(generationId: string): Promise<void>;
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

interface TemplateIdentity {
  _id: ObjectId;
  workspaceId: ObjectId;
  name: string;
}

const TEMPLATE_CACHE_SIZE = 1000;

const mebibytes = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

export class GenerationService {
  private readonly deps: GenerationServiceDeps;
  private readonly templateIdentities = new Map<string, TemplateIdentity>();
  constructor(deps: GenerationServiceDeps) {
    this.deps = deps;
  }

  /** `renderedFrom`: the generation this one renders again (the portal's "Render again"). */
  async create(
    principal: Pick<Principal, 'workspaceId'>,
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
      const recordId = deterministicObjectId('idempotency', principal.workspaceId.toHexString(), idempotencyKey);
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
      await this.deps.jobs.publishRenderJob(id);
      // Not awaited: the flag only spares the outbox sweeper a republish, which JetStream's
      // msgID de-duplication would drop anyway, so the client need not wait for it.
      generations.markJobPublished(doc._id).catch((err: unknown) => this.deps.onPublishError?.(id, err));
    } catch (err) {
      // The row is the source of truth: the outbox sweeper publishes it shortly.
      this.deps.onPublishError?.(id, err);
    }
    return this.view(doc);
  }

  async get(principal: Pick<Principal, 'workspaceId'>, id: string): Promise<GenerationView> {
    const doc = await this.findDoc(id);
    if (!doc || !doc.workspaceId.equals(principal.workspaceId)) throw notFound('Generation');
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
  async list(principal: Pick<Principal, 'workspaceId'>, input: ListGenerationsInput): Promise<GenerationPage> {
    checkPageSize(input.pageSize); // first: a bad size is reported before bad filters
    if (input.status !== undefined && !(GENERATION_STATUSES as readonly string[]).includes(input.status)) {
      throw validationError([{ field: 'status', issue: `must be one of ${GENERATION_STATUSES.join(', ')}` }]);
    }
    if (input.templateId !== undefined && input.templateId.length === 0) {
      throw validationError([{ field: 'templateId', issue: 'must not be empty' }]);
    }
    const page = this.deps.pageTokens.request(input, {
      list: 'generations',
      filters: {
        workspace: principal.workspaceId.toHexString(),
        status: input.status,
        templateId: input.templateId,
        createdAfter: input.createdAfter?.toISOString(),
        createdBefore: input.createdBefore?.toISOString(),
      },
    });
    let templateId: ObjectId | undefined;
    if (input.templateId !== undefined) {
      templateId = parseId('template', input.templateId);
      // An id that is not a template id matches nothing.
      if (!templateId) return { generations: [], nextPageToken: null };
    }
    const rows = await this.deps.generations.list(
      {
        workspaceId: principal.workspaceId,
        status: input.status as GenerationStatus | undefined,
        templateId,
        createdAfter: input.createdAfter,
        createdBefore: input.createdBefore,
      },
      page,
    );
    return {
      generations: await Promise.all(rows.items.map((doc) => this.view(doc))),
      nextPageToken: rows.nextPageToken || null,
    };
  }

  private async view(doc: GenerationDoc): Promise<GenerationView> {
    const url =
      doc.status === 'COMPLETED' && doc.outputKey
        ? await this.deps.urls.presignGet(doc.outputKey, this.deps.outputUrlTtlSeconds ?? OUTPUT_URL_TTL_SECONDS)
        : null;
    return toGenerationView(doc, url);
  }

  /**
   * The template's id and name for a new generation. A template's workspace and name never
   * change, so found ones are remembered (whether it is published or archived is decided at
   * render time, not here).
   */
  private async findTemplate(workspaceId: ObjectId, templateRef: string): Promise<TemplateIdentity | null> {
    let template = this.templateIdentities.get(templateRef);
    if (!template) {
      const id = parseId('template', templateRef);
      const doc = id ? await this.deps.templates.get(id) : null;
      if (!doc) return null;
      template = { _id: doc._id, workspaceId: doc.workspaceId, name: doc.name };
      if (this.templateIdentities.size >= TEMPLATE_CACHE_SIZE)
        this.templateIdentities.delete(this.templateIdentities.keys().next().value!);
      this.templateIdentities.set(templateRef, template);
    }
    // Another workspace's template is as unknown as a missing one.
    return template.workspaceId.equals(workspaceId) ? template : null;
  }
}
