// Right to erasure: a generation goes with everything docgen keeps about it — its row (which
// holds the variables), its PDF and its webhook deliveries. Used by the admin plane's
// DeleteGeneration and by the retention sweeper.
//
// No transaction spans MongoDB and S3, so the order makes a crash harmless: deliveries and
// the PDF go first and the row last, because the row is what lets a retried erasure (or the
// next sweep) find the rest. Deliveries are removed once more after the row, for any the
// webhook dispatcher created in between from an event already in flight. A render that was
// still running stores its PDF, finds the row gone and removes the PDF itself
// (render-pipeline.ts).
import type { ObjectId } from 'mongodb';
import { formatId } from '../domain/ids.ts';
import type { GenerationDoc } from '../store/documents.ts';

export interface GenerationErasureDeps {
  generations: { get(id: ObjectId): Promise<GenerationDoc | null>; delete(id: ObjectId): Promise<boolean> };
  deliveries: { deleteByGeneration(generationId: ObjectId): Promise<number> };
  /** The object store; removing a missing key succeeds (S3 semantics). */
  objects: { remove(key: string): Promise<void> };
}

/** What erasure needs of a generation's row. */
export type ErasableGeneration = Pick<GenerationDoc, '_id' | 'workspaceId' | 'status' | 'outputKey'>;

export interface ErasedGeneration {
  generationId: string;
  workspaceId: string;
  /** False when the row was already gone (a repeated erasure is not an error here). */
  rowDeleted: boolean;
  deliveriesDeleted: number;
  /** The object key removed ('' when none could exist). */
  objectKey: string;
}

/** Where a generation's PDF lives: `workspaces/<ws>/generations/<gen>.pdf`. */
export function generationObjectKey(doc: Pick<GenerationDoc, '_id' | 'workspaceId'>): string {
  return `workspaces/${formatId('workspace', doc.workspaceId)}/generations/${formatId('generation', doc._id)}.pdf`;
}

/**
 * Erases one generation: deliveries, PDF, row. Pass the row when the caller already read it
 * (e.g. to check its workspace); null when there is nothing to erase. Throws when a step fails
 * (S3 or MongoDB unreachable); repeating the call then finishes the job.
 */
export async function eraseGeneration(
  deps: GenerationErasureDeps,
  generation: ObjectId | ErasableGeneration,
): Promise<ErasedGeneration | null> {
  const doc = 'status' in generation ? generation : await deps.generations.get(generation);
  if (!doc) return null;
  let deliveriesDeleted = await deps.deliveries.deleteByGeneration(doc._id);
  // The stored key, or where a render in progress would put it: removed either way.
  const objectKey = doc.outputKey ?? generationObjectKey(doc);
  await deps.objects.remove(objectKey);
  const rowDeleted = await deps.generations.delete(doc._id);
  deliveriesDeleted += await deps.deliveries.deleteByGeneration(doc._id);
  return {
    generationId: formatId('generation', doc._id),
    workspaceId: formatId('workspace', doc.workspaceId),
    rowDeleted,
    deliveriesDeleted,
    objectKey,
  };
}
