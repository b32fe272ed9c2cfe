// A batch's items: built from the resolved request, kept on the batch row while they are being
// written, written idempotently and handed to the render queue. One home for the steps that
// the create request (batch-service.ts) and the creation sweeper (batch-creation-sweeper.ts)
// both take, so a create cut off by a crash is finished exactly as it would have been.
//
// No transaction: every item has an _id derived from its batch and index (batchItemObjectId),
// so writing the items again writes only the missing ones; itemsStored is set after the last
// one (and drops the kept request); a render job is de-duplicated by its generation id, and a
// job that never reached the queue is published by the outbox sweeper.
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { Binary, ObjectId } from 'mongodb';
import { batchItemObjectId, formatId } from '../domain/ids.ts';
import type { JsonObject } from '../domain/template.ts';
import type { RenderJobPublisher } from '../generations/generation-service.ts';
import { renderRouteOf } from '../queue/messages.ts';
import type { BatchesRepository } from '../store/batches-repository.ts';
import { MAX_BSON_DOCUMENT_BYTES, type BatchDoc, type GenerationDoc } from '../store/documents.ts';
import type { GenerationsRepository } from '../store/generations-repository.ts';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** Render jobs published at once while a batch is handed to the queue. */
const PUBLISH_CONCURRENCY = 32;
/** Room left in the batch row for its other fields when the request is kept in it. */
const KEPT_REQUEST_MAX_BYTES = MAX_BSON_DOCUMENT_BYTES - 64 * 1024;

/** One item as resolved at create time (its template is found; what newDoc needs). */
export interface ResolvedBatchItem {
  templateId: ObjectId;
  templateRef: string;
  templateName: string;
  variables: JsonObject;
}

/** Which batch the items belong to. */
export type BatchOfItems = Pick<BatchDoc, '_id' | 'workspaceId' | 'itemEvents' | 'test'>;

/** The item rows of a batch, in item order, under their derived ids. */
export function batchItemDocs(
  generations: Pick<GenerationsRepository, 'newDoc'>,
  batch: BatchOfItems,
  items: readonly ResolvedBatchItem[],
  now: Date,
): GenerationDoc[] {
  const publicId = formatId('batch', batch._id);
  return items.map((item, index) =>
    generations.newDoc(
      {
        workspaceId: batch.workspaceId,
        templateId: item.templateId,
        templateRef: item.templateRef,
        templateName: item.templateName,
        data: item.variables,
        batch: { batchId: publicId, index, itemEvents: batch.itemEvents },
        test: batch.test === true,
      },
      now,
      batchItemObjectId(batch._id, index),
    ),
  );
}

interface KeptItem {
  t: string;
  r: string;
  n: string;
  d: JsonObject;
}

/**
 * The resolved items as the batch row keeps them: gzip of JSON (JSON, not BSON: BSON of a
 * large array is several times its JSON). Null when even that would not fit in the row; such a
 * batch, cut off by a crash, cannot be finished and counts its missing items as failed.
 */
export async function keepBatchRequest(items: readonly ResolvedBatchItem[]): Promise<Binary | null> {
  const kept: KeptItem[] = items.map((i) => ({
    t: i.templateId.toHexString(),
    r: i.templateRef,
    n: i.templateName,
    d: i.variables,
  }));
  const packed = await gzipAsync(JSON.stringify(kept));
  return packed.length > KEPT_REQUEST_MAX_BYTES ? null : new Binary(packed);
}

/** The items a batch row kept (keepBatchRequest's inverse). */
export async function keptBatchItems(request: Binary): Promise<ResolvedBatchItem[]> {
  const kept = JSON.parse((await gunzipAsync(request.buffer)).toString('utf8')) as KeptItem[];
  return kept.map((k) => ({
    templateId: new ObjectId(k.t),
    templateRef: k.r,
    templateName: k.n,
    variables: k.d,
  }));
}

export interface StoreBatchItemsDeps {
  batches: Pick<BatchesRepository, 'markItemsStored'>;
  generations: Pick<GenerationsRepository, 'insertManyOnce' | 'markJobsPublished'>;
  jobs: RenderJobPublisher;
  onPublishError?: (generationId: string, err: unknown) => void;
}

/** Writes the items that are missing, marks the batch's items stored, and publishes their jobs. */
export async function storeBatchItems(
  deps: StoreBatchItemsDeps,
  batchId: ObjectId,
  items: GenerationDoc[],
  known: { itemsStored: boolean } = { itemsStored: false },
): Promise<void> {
  if (!known.itemsStored) {
    await deps.generations.insertManyOnce(items);
    await deps.batches.markItemsStored(batchId);
  }
  await publishBatchJobs(deps, items);
}

/** Hands the items to the render queue; what fails to publish, the outbox sweeper publishes. */
async function publishBatchJobs(deps: StoreBatchItemsDeps, items: GenerationDoc[]): Promise<void> {
  const published: ObjectId[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const doc = items[next++]!;
      const id = formatId('generation', doc._id);
      try {
        await deps.jobs.publishRenderJob(id, renderRouteOf(doc));
        published.push(doc._id);
      } catch (err) {
        deps.onPublishError?.(id, err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PUBLISH_CONCURRENCY, items.length) }, worker));
  // Not awaited, as for a single generation: the flag only spares the sweeper a republish.
  deps.generations.markJobsPublished(published).catch(() => {});
}
