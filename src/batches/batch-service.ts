// Create and read batches (docs/interface.md#batches) for an authenticated principal.
// Transport-neutral, like GenerationService: REST and Connect call it through src/api/public-api.ts.
//
// Creating writes no transaction: the batch row first (itemsStored false, with the resolved
// request kept in it), then every item under an id derived from the batch and its index
// (src/domain/ids.ts batchItemObjectId), then itemsStored (dropping the kept request), then the
// render jobs (batch-items.ts). A retry with the same Idempotency-Key names the same batch id,
// so it writes exactly the rows the first attempt did not; a create cut off by a crash and not
// retried is finished from the kept request by the creation sweeper
// (batch-creation-sweeper.ts); a job not published is published by the outbox sweeper like any
// generation's.
import { ObjectId } from 'mongodb';
import type { Principal } from '../auth/api-key-authenticator.ts';
import { DomainError, notFound, validationError, type FieldIssue } from '../domain/errors.ts';
import { deterministicObjectId, formatId, parseId } from '../domain/ids.ts';
import type { JsonValue } from '../domain/template.ts';
import { canonicalJsonHash } from '../generations/create-input.ts';
import type {
  GenerationService,
  OutputUrlSigner,
  RenderJobPublisher,
  TemplateIdentity,
} from '../generations/generation-service.ts';
import { OUTPUT_URL_TTL_SECONDS } from '../generations/generation-service.ts';
import type { BatchesRepository } from '../store/batches-repository.ts';
import {
  bsonSize,
  MAX_NEW_GENERATION_BSON_BYTES,
  type BatchDoc,
  type BatchStatus,
  type GenerationDoc,
} from '../store/documents.ts';
import type { GenerationsRepository } from '../store/generations-repository.ts';
import { MAX_BATCH_ISSUES, type CreateBatchInput } from './batch-input.ts';
import { batchItemDocs, keepBatchRequest, storeBatchItems, type ResolvedBatchItem } from './batch-items.ts';

const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/** The Batch as clients see it (docs/interface.md#batches). */
export interface BatchView {
  id: string;
  status: BatchStatus;
  total: number;
  completed: number;
  failed: number;
  /** merge: true and COMPLETED: the merged PDF, presigned on this read. */
  outputUrl: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** For gRPC clients and the portal (REST shows the eight fields above). */
  workspaceId: string;
  merge: boolean;
  itemEvents: boolean;
}

export interface BatchServiceDeps {
  batches: BatchesRepository;
  generations: GenerationsRepository;
  /** Template look-ups (cached) and the generation rules shared with single creates. */
  generationService: Pick<GenerationService, 'findTemplate'>;
  jobs: RenderJobPublisher;
  urls: OutputUrlSigner;
  outputUrlTtlSeconds?: number;
  onPublishError?: (generationId: string, err: unknown) => void;
  /** Test hook: runs between the batch row's insert and its items' (the crash tests kill the process here). */
  afterBatchInsert?: ((batchId: string) => void) | undefined;
}

export class BatchService {
  private readonly deps: BatchServiceDeps;
  constructor(deps: BatchServiceDeps) {
    this.deps = deps;
  }

  async create(principal: Principal, input: CreateBatchInput, idempotencyKey?: string): Promise<BatchView> {
    const { batches, generations } = this.deps;
    const templates = await this.resolveTemplates(principal, input);
    const now = new Date();
    let batchId = new ObjectId();
    // Built (and size-checked) before the key is claimed: a refused batch leaves nothing behind.
    let items = this.itemDocs(principal, input, templates, batchId, now);

    if (idempotencyKey !== undefined) {
      const bodyHash = canonicalJsonHash(input as unknown as JsonValue);
      // Batches have keys of their own: the same key on a generation and on a batch are two requests.
      // A test key's keys are apart from a live key's (docs/interface.md#test-mode).
      const recordId = deterministicObjectId(
        principal.test ? 'idempotency-batch-test' : 'idempotency-batch',
        principal.workspaceId.toHexString(),
        idempotencyKey,
      );
      const existing = await generations.claimIdempotencyKey({
        _id: recordId,
        workspaceId: principal.workspaceId,
        bodyHash,
        // The id the key names: here the batch's.
        generationId: batchId,
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
        batchId = existing.generationId;
        items = this.itemDocs(principal, input, templates, batchId, now);
        const earlier = await batches.getSummary(batchId);
        if (earlier?.itemsStored) return this.view(earlier);
        // Not (completely) written yet: the earlier attempt stalled or died. Write what is missing.
      }
    }

    const batchDoc = batches.newDoc(
      {
        _id: batchId,
        workspaceId: principal.workspaceId,
        total: input.items.length,
        merge: input.merge,
        itemEvents: input.itemEvents,
        test: principal.test,
        request: await keepBatchRequest(resolvedItems(input, templates)),
      },
      now,
    );
    const inserted = await batches.insertOnce(batchDoc);
    if (inserted) this.deps.afterBatchInsert?.(formatId('batch', batchId));
    const stored = inserted ? batchDoc : await batches.getSummary(batchId);
    if (!stored) {
      throw new DomainError('UNAVAILABLE', 'The batch is being created by another request; retry shortly', {
        retryAfterSeconds: 1,
      });
    }
    // Stored before (a racing retry, or the creation sweeper): only the jobs are published
    // again, which is harmless (JetStream drops a repeated job id; a claimed item is skipped).
    await storeBatchItems(
      { batches, generations, jobs: this.deps.jobs, onPublishError: this.deps.onPublishError },
      batchId,
      items,
      { itemsStored: stored.itemsStored },
    );
    stored.itemsStored = true;
    return this.view(stored);
  }

  /** A key's batch; `test` set: only a batch of that mode (another mode's is NOT_FOUND, as a generation). */
  async get(principal: Pick<Principal, 'workspaceId'> & { test?: boolean }, id: string): Promise<BatchView> {
    const doc = await this.findInWorkspace(principal.workspaceId, id);
    if (principal.test !== undefined && (doc.test === true) !== principal.test) throw notFound('Batch');
    return this.view(doc);
  }

  /** A batch of the workspace, or NOT_FOUND (another workspace's batch is as unknown as a missing one). */
  async findInWorkspace(workspaceId: ObjectId, id: string): Promise<BatchDoc> {
    const objectId = parseId('batch', id);
    const doc = objectId ? await this.deps.batches.getSummary(objectId) : null;
    if (!doc || !doc.workspaceId.equals(workspaceId)) throw notFound('Batch');
    return doc;
  }

  async view(doc: BatchDoc): Promise<BatchView> {
    const outputUrl =
      doc.status === 'COMPLETED' && doc.outputKey
        ? await this.deps.urls.presignGet(doc.outputKey, this.deps.outputUrlTtlSeconds ?? OUTPUT_URL_TTL_SECONDS)
        : null;
    return {
      id: formatId('batch', doc._id),
      status: doc.status,
      total: doc.total,
      completed: doc.completed,
      failed: doc.failed,
      outputUrl,
      createdAt: doc.createdAt,
      updatedAt: doc.updatedAt,
      workspaceId: formatId('workspace', doc.workspaceId),
      merge: doc.merge,
      itemEvents: doc.itemEvents,
    };
  }

  /**
   * Every item's template, looked up once per distinct id. An unknown template (or another
   * workspace's) refuses the batch, naming each item that uses it: a batch is created whole or
   * not at all, and a template that does not exist would only fail every such item later.
   */
  private async resolveTemplates(
    principal: Principal,
    input: CreateBatchInput,
  ): Promise<Map<string, TemplateIdentity>> {
    const found = new Map<string, TemplateIdentity>();
    const distinct = [...new Set(input.items.map((item) => item.templateId))];
    await Promise.all(
      distinct.map(async (ref) => {
        const template = await this.deps.generationService.findTemplate(principal.workspaceId, ref);
        if (template) found.set(ref, template);
      }),
    );
    const issues: FieldIssue[] = [];
    input.items.forEach((item, index) => {
      if (issues.length < MAX_BATCH_ISSUES && !found.has(item.templateId))
        issues.push({
          field: `items[${index}].templateId`,
          issue: `no template ${JSON.stringify(item.templateId)} in this workspace`,
        });
    });
    if (issues.length > 0) throw validationError(issues);
    return found;
  }

  private itemDocs(
    principal: Principal,
    input: CreateBatchInput,
    templates: Map<string, TemplateIdentity>,
    batchId: ObjectId,
    now: Date,
  ): GenerationDoc[] {
    const issues: FieldIssue[] = [];
    const docs = batchItemDocs(
      this.deps.generations,
      { _id: batchId, workspaceId: principal.workspaceId, itemEvents: input.itemEvents, test: principal.test },
      resolvedItems(input, templates),
      now,
    );
    docs.forEach((doc, index) => {
      // As for a single generation: BSON can be several times the JSON's size.
      if (issues.length < MAX_BATCH_ISSUES && bsonSize(doc) > MAX_NEW_GENERATION_BSON_BYTES)
        issues.push({
          field: `items[${index}].variables`,
          issue: 'take more than a generation can hold as stored (BSON); send less data',
        });
    });
    if (issues.length > 0) throw validationError(issues);
    return docs;
  }
}

/** The request's items with their templates found (every one is: resolveTemplates checked). */
function resolvedItems(input: CreateBatchInput, templates: Map<string, TemplateIdentity>): ResolvedBatchItem[] {
  return input.items.map((item) => {
    const template = templates.get(item.templateId)!;
    return {
      templateId: template._id,
      templateRef: item.templateId,
      templateName: template.name,
      variables: item.variables,
    };
  });
}
