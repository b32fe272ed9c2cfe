// Generations from the admin plane (the portal's Generations screen): the public API's list
// and read (same filters, paging, views and fresh presigned URLs: src/generations), for any
// workspace the operator names, and deletion as the right to erasure.
import { failedPrecondition, notFound } from '../domain/errors.ts';
import { eraseGeneration, type GenerationErasureDeps } from '../generations/generation-erasure.ts';
import type { GenerationPage, GenerationService, ListGenerationsInput } from '../generations/generation-service.ts';
import type { GenerationView } from '../generations/generation-view.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';
import type { BatchService, BatchView } from '../batches/batch-service.ts';
import { quoteId, requireId, requireWorkspace } from '../domain/input.ts';

export interface GenerationAdminDeps {
  workspaces: WorkspacesRepository;
  /** The public API's generation service. */
  generations: Pick<GenerationService, 'list' | 'getInAnyWorkspace'>;
  erasure: GenerationErasureDeps;
  /** The public API's batch reads. */
  batches?: Pick<BatchService, 'get'> | undefined;
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

  async get(id: string): Promise<GenerationView> {
    requireId('generation', id, 'id', 'Generation');
    return this.deps.generations.getInAnyWorkspace(id);
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
  }
}
