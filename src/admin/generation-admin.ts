// Generations from the admin plane (the portal's Generations screen): the public API's list
// and read (same filters, paging, views and fresh presigned URLs: src/generations), for any
// workspace the operator names, and deletion as the right to erasure.
import { failedPrecondition, notFound } from '../domain/errors.ts';
import { eraseGeneration, type GenerationErasureDeps } from '../generations/generation-erasure.ts';
import type { GenerationPage, GenerationService, ListGenerationsInput } from '../generations/generation-service.ts';
import type { GenerationView } from '../generations/generation-view.ts';
import type { GenerationDoc, GenerationHistoryEntry } from '../store/documents.ts';
import type { GenerationsRepository } from '../store/generations-repository.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';
import type { BatchService, BatchView } from '../batches/batch-service.ts';
import { formatId, parseId } from '../domain/ids.ts';
import type { BatchesRepository } from '../store/batches-repository.ts';
import { quoteId, requireId, requireWorkspace } from '../domain/input.ts';

export interface GenerationAdminDeps {
  workspaces: WorkspacesRepository;
  /** The public API's generation service. */
  generations: Pick<GenerationService, 'list' | 'getInAnyWorkspace' | 'create'>;
  /** The rows themselves: a generation's story (timeline) is not part of the public view. */
  rows: Pick<GenerationsRepository, 'get'>;
  /** Reads a stored PDF (the object store). */
  pdfs: { getObject(key: string): Promise<Buffer> };
  erasure: GenerationErasureDeps;
  /** The public API's batch reads. */
  batches?: Pick<BatchService, 'get'> | undefined;
  /** Batch rows: erasing an item removes its batch's merged PDF (which holds its pages). */
  batchRows?: Pick<BatchesRepository, 'getSummary' | 'dropOutput'> | undefined;
}

/** A generation as the portal's detail page shows it: the public view and its story. */
export interface GenerationDetail {
  generation: GenerationView;
  timeline: {
    createdAt: Date;
    pickedUpAt: Date | null;
    finishedAt: Date | null;
    attempts: number;
    steps: GenerationHistoryEntry[];
  };
  renderedFrom: string | null;
  errorCode: string | null;
}

function isFinal(doc: GenerationDoc): boolean {
  return doc.status === 'COMPLETED' || doc.status === 'FAILED';
}

export class GenerationAdmin {
  private readonly deps: GenerationAdminDeps;
  constructor(deps: GenerationAdminDeps) {
    this.deps = deps;
  }

  async list(workspaceId: string, input: ListGenerationsInput): Promise<GenerationPage> {
    const workspace = await requireWorkspace(this.deps.workspaces, workspaceId);
    return this.deps.generations.list({ workspaceId: workspace._id }, input);
  }

  async get(id: string): Promise<GenerationDetail> {
    const objectId = requireId('generation', id, 'id', 'Generation');
    const [generation, doc] = await Promise.all([
      this.deps.generations.getInAnyWorkspace(id),
      this.deps.rows.get(objectId),
    ]);
    if (!doc) throw notFound('Generation');
    return {
      generation,
      timeline: {
        createdAt: doc.createdAt,
        pickedUpAt: doc.pickedUpAt ?? null,
        // A final row is not written again, so its updatedAt is when it became final.
        finishedAt: isFinal(doc) ? doc.updatedAt : null,
        attempts: doc.attempts,
        steps: doc.history ?? [],
      },
      renderedFrom: doc.renderedFrom ? formatId('generation', doc.renderedFrom) : null,
      errorCode: doc.status === 'FAILED' ? (doc.errorCode ?? null) : null,
    };
  }

  /** The stored PDF of a COMPLETED generation. */
  async pdf(id: string): Promise<Buffer> {
    const objectId = requireId('generation', id, 'id', 'Generation');
    const doc = await this.deps.rows.get(objectId);
    if (!doc) throw notFound(`Generation ${quoteId(id)}`);
    if (doc.status !== 'COMPLETED' || !doc.outputKey) {
      throw failedPrecondition(`Generation ${quoteId(id)} has no PDF: it is ${doc.status}`);
    }
    return this.deps.pdfs.getObject(doc.outputKey);
  }

  /**
   * A new generation of the same template with the same data, in the same workspace, naming
   * the original (`renderedFrom`). It renders the template's published version of now.
   */
  async renderAgain(id: string): Promise<GenerationView> {
    const objectId = requireId('generation', id, 'id', 'Generation');
    const doc = await this.deps.rows.get(objectId);
    if (!doc) throw notFound(`Generation ${quoteId(id)}`);
    // Rendered again in the original's mode (a test generation stays one: docs/interface.md#test-mode).
    return this.deps.generations.create(
      { workspaceId: doc.workspaceId, test: doc.test === true },
      { templateId: doc.templateRef, variables: doc.data, format: 'pdf' },
      undefined,
      { renderedFrom: doc._id },
    );
  }

  /** A batch of the workspace with its progress; NOT_FOUND for another workspace's. */
  async getBatch(workspaceId: string, id: string): Promise<BatchView> {
    const workspace = await requireWorkspace(this.deps.workspaces, workspaceId);
    requireId('batch', id, 'id', 'Batch');
    if (!this.deps.batches) throw notFound('Batch');
    return this.deps.batches.get({ workspaceId: workspace._id }, id);
  }

  /** Deletes the generation, its PDF and its deliveries; afterwards the public API answers 404. */
  async delete(id: string): Promise<void> {
    const objectId = requireId('generation', id, 'id', 'Generation');
    // A batch counts its items as they become final: one erased before that would never be
    // counted and its batch would never complete. Retention only erases final rows.
    const current = await this.deps.erasure.generations.get(objectId);
    if (current?.batchId && (current.status === 'PENDING' || current.status === 'PROCESSING')) {
      throw failedPrecondition(
        `Generation ${quoteId(id)} is an item of batch ${current.batchId} and is not final yet; delete it once it is COMPLETED or FAILED`,
      );
    }
    const erased = await eraseGeneration(this.deps.erasure, objectId);
    if (!erased) throw notFound(`Generation ${quoteId(id)}`);
    // The batch's merged PDF holds this item's pages: it goes too (the batch's outputUrl is then
    // null). The object first: a crash before the row's update leaves a key to a missing object,
    // never the erased pages.
    const batchId = current?.batchId === undefined ? undefined : parseId('batch', current.batchId);
    const batch = batchId && this.deps.batchRows ? await this.deps.batchRows.getSummary(batchId) : null;
    if (batch?.outputKey) {
      await this.deps.erasure.objects.remove(batch.outputKey);
      await this.deps.batchRows!.dropOutput(batch._id);
    }
  }
}
