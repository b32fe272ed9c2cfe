// Erasing a finished batch (retention, test-mode expiry): its merged PDF, then its row. The row
// last, as for a generation (src/generations/generation-erasure.ts): it is what lets a repeated
// erasure find the PDF after a crash. Its items are generations, erased by the same retention on
// their own (they were created with the batch). Every step is idempotent: removing a missing
// object or row succeeds, so replicas sweeping at once need no lock.
import type { ExpiredBatch } from '../store/batches-repository.ts';
import { batchObjectKey } from './batch-progress.ts';

export interface BatchErasureDeps {
  batches: { delete(id: ExpiredBatch['_id']): Promise<boolean> };
  /** The object store; removing a missing key succeeds (S3 semantics). */
  objects: { remove(key: string): Promise<void> };
}

export async function eraseBatch(deps: BatchErasureDeps, batch: ExpiredBatch): Promise<{ rowDeleted: boolean }> {
  // The stored key, or where a merge would put it (a merge interrupted before COMPLETED).
  await deps.objects.remove(batch.outputKey ?? batchObjectKey(batch));
  return { rowDeleted: await deps.batches.delete(batch._id) };
}
