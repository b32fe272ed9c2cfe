// Batches' operational parts in process, on the real repositories over the embedded MongoDB:
// - a create cut off by a crash (simulated by taking the create's lower-level steps only up to
//   the crash) is finished by the creation sweeper from the kept request, also with two
//   sweepers at once; without a kept request its missing items count as failed;
// - retention erases finished batches and their merged PDFs like generations (workspace
//   retention, test batches after the test retention), and never an unfinished one;
// - the progress gauges on the metrics endpoint.
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchCreationSweeper, BATCH_CREATION_GRACE_MS } from '../../src/batches/batch-creation-sweeper.ts';
import { eraseBatch } from '../../src/batches/batch-erasure.ts';
import { batchItemDocs, keepBatchRequest, type ResolvedBatchItem } from '../../src/batches/batch-items.ts';
import { batchProgressGauges } from '../../src/batches/batch-metrics.ts';
import { BatchProgress, batchObjectKey } from '../../src/batches/batch-progress.ts';
import { formatId, parseId } from '../../src/domain/ids.ts';
import { RetentionSweeper } from '../../src/generations/retention-sweeper.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { BatchCompletedEvent } from '../../src/queue/messages.ts';
import type { BatchDoc } from '../../src/store/documents.ts';
import { MemoryObjects } from '../harness/admin-in-process.ts';
import { GenerationAdmin } from '../../src/admin/generation-admin.ts';
import { DeliveriesRepository } from '../../src/store/deliveries-repository.ts';
import { startInProcessStack, type InProcessStack } from '../harness/in-process.ts';

let stack: InProcessStack;

/** An ObjectId of that second (as one made then would be), unique. */
function idAt(date: Date): ObjectId {
  const seconds = Math.floor(date.getTime() / 1000)
    .toString(16)
    .padStart(8, '0');
  return new ObjectId(seconds + new ObjectId().toHexString().slice(8));
}

beforeAll(async () => {
  stack = await startInProcessStack();
});

afterAll(async () => {
  await stack?.close();
});

function progressWith(published: BatchCompletedEvent[]): BatchProgress {
  return new BatchProgress({
    batches: stack.repositories.batches,
    generations: stack.repositories.generations,
    store: {
      downloadToFile: () => Promise.reject(new Error('no merge in this test')),
      putPdfFile: () => Promise.reject(new Error('no merge in this test')),
    },
    events: {
      async publishBatchEvent(event) {
        published.push(event);
      },
    },
  });
}

function sweeperWith(published: BatchCompletedEvent[], now: () => number): BatchCreationSweeper {
  return new BatchCreationSweeper({
    batches: stack.repositories.batches,
    generations: stack.repositories.generations,
    jobs: stack.jobs,
    progress: progressWith(published),
    intervalMs: 60_000,
    now,
  });
}

/**
 * The first steps of a create, as BatchService.create takes them, cut off after `storedItems`
 * items: the API process died there (no itemsStored, no jobs published by it).
 */
async function cutOffCreate(options: {
  items: number;
  storedItems: number;
  keepRequest: boolean;
  createdAt: Date;
}): Promise<{ batch: BatchDoc; resolved: ResolvedBatchItem[] }> {
  const workspace = await stack.workspace();
  const templateRef = await stack.template(workspace);
  const templateId = parseId('template', templateRef)!;
  const resolved: ResolvedBatchItem[] = Array.from({ length: options.items }, (_, i) => ({
    templateId,
    templateRef,
    templateName: 'Letter',
    variables: { name: `item ${i}` },
  }));
  const { batches, generations } = stack.repositories;
  const batch = batches.newDoc(
    {
      _id: idAt(options.createdAt),
      workspaceId: workspace,
      total: options.items,
      merge: false,
      itemEvents: false,
      request: options.keepRequest ? await keepBatchRequest(resolved) : null,
    },
    options.createdAt,
  );
  expect(await batches.insertOnce(batch)).toBe(true);
  const items = batchItemDocs(generations, batch, resolved, options.createdAt);
  await generations.insertManyOnce(items.slice(0, options.storedItems));
  return { batch, resolved };
}

describe('a batch create cut off by a crash', () => {
  it('is finished from the kept request: every item written once, its jobs published, the request dropped', async () => {
    const createdAt = new Date(Date.now() - 5_000);
    const { batch } = await cutOffCreate({ items: 40, storedItems: 13, keepRequest: true, createdAt });
    const publicId = formatId('batch', batch._id);
    const { batches, generations } = stack.repositories;
    const published: BatchCompletedEvent[] = [];

    // Within the grace period a create may still be running: left alone.
    expect(await sweeperWith(published, Date.now).sweepOnce()).toEqual({ finished: 0, failed: 0 });
    expect(await generations.listBatchItems(publicId)).toHaveLength(13);

    // Past it: two replicas sweep at once (no leader, no lock); one finishes it, the other
    // finds nothing left to do or writes the same rows.
    const later = () => createdAt.getTime() + BATCH_CREATION_GRACE_MS + 1000;
    const before = stack.jobs.published.length;
    const results = await Promise.all([
      sweeperWith(published, later).sweepOnce(),
      sweeperWith(published, later).sweepOnce(),
    ]);
    expect(results.reduce((n, r) => n + r.finished, 0)).toBeGreaterThanOrEqual(1);
    expect(results.every((r) => r.failed === 0)).toBe(true);

    const items = await generations.listBatchItems(publicId);
    expect(items.map((i) => i.batchIndex)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    const stored = await batches.get(batch._id);
    expect(stored).toMatchObject({ itemsStored: true, request: null, status: 'PENDING', total: 40 });
    // Every item handed to the render queue (a repeat is de-duplicated by JetStream).
    const jobs = new Set(stack.jobs.published.slice(before));
    for (const item of items) expect(jobs.has(formatId('generation', item._id))).toBe(true);
    // The rebuilt items are the request's: same variables, template and batch fields.
    const last = await generations.get(items[39]!._id);
    expect(last).toMatchObject({
      data: { name: 'item 39' },
      batchId: publicId,
      batchIndex: 39,
      batchItemEvents: false,
      createdAt,
      status: 'PENDING',
    });

    // Once stored, later sweeps leave it alone.
    expect(await sweeperWith(published, later).sweepOnce()).toEqual({ finished: 0, failed: 0 });

    // The items render (here: fail) and are counted: the batch completes with one event.
    const progress = progressWith(published);
    for (const item of items) await progress.itemFinal((await generations.fail(item._id, null, 'broken'))!);
    expect(await batches.getSummary(batch._id)).toMatchObject({ status: 'COMPLETED', completed: 0, failed: 40 });
    expect(published.filter((e) => e.batchId === publicId)).toHaveLength(1);
  });

  it('without a kept request: the items never stored count as failed, and the batch completes with the rest', async () => {
    const createdAt = new Date(Date.now() - BATCH_CREATION_GRACE_MS - 10_000);
    const { batch } = await cutOffCreate({ items: 5, storedItems: 3, keepRequest: false, createdAt });
    const publicId = formatId('batch', batch._id);
    const { batches, generations } = stack.repositories;
    const published: BatchCompletedEvent[] = [];
    expect((await sweeperWith(published, Date.now).sweepOnce()).finished).toBeGreaterThanOrEqual(1);
    expect(await batches.getSummary(batch._id)).toMatchObject({
      itemsStored: true,
      status: 'PROCESSING',
      completed: 0,
      failed: 2,
    });
    const items = await generations.listBatchItems(publicId);
    expect(items).toHaveLength(3);
    const progress = progressWith(published);
    for (const item of items) {
      const done = (await generations.fail(item._id, null, 'x'))!;
      await progress.itemFinal({ ...done, status: 'COMPLETED' });
    }
    expect(await batches.getSummary(batch._id)).toMatchObject({ status: 'COMPLETED', completed: 3, failed: 2 });
    expect(published.filter((e) => e.batchId === publicId)).toEqual([
      expect.objectContaining({ event: 'batch.completed', completed: 3, failed: 2 }),
    ]);
  });
});

describe('batch retention', () => {
  it('erases finished batches past the retention with their merged PDF; keeps unfinished and recent ones', async () => {
    const { batches, workspaces, generations } = stack.repositories;
    const objects = new MemoryObjects();
    const now = Date.now();
    const day = 86_400_000;
    const workspace = await stack.workspace();
    await workspaces.update(workspace, { retentionSeconds: 7 * 86_400 });
    const unkept = await stack.workspace();

    /** A batch created `ageMs` ago, COMPLETED (with a merged PDF) unless told otherwise. */
    async function batchOf(ws: ObjectId, ageMs: number, options: { finished?: boolean; test?: boolean } = {}) {
      const createdAt = new Date(now - ageMs);
      const doc = batches.newDoc(
        {
          _id: idAt(createdAt),
          workspaceId: ws,
          total: 1,
          merge: true,
          itemEvents: true,
          test: options.test,
        },
        createdAt,
      );
      await batches.insertOnce(doc);
      await batches.markItemsStored(doc._id);
      const key = batchObjectKey(doc);
      if (options.finished !== false) {
        await batches.countItem(doc._id, 0, 'COMPLETED');
        await objects.putObject(key, Buffer.from('%PDF-1.7 merged'), 'application/pdf');
        await batches.complete(doc._id, key);
        await batches.markEventPublished(doc._id);
      }
      return { id: doc._id, key };
    }

    const old = await batchOf(workspace, 8 * day);
    const recent = await batchOf(workspace, 2 * day);
    const unfinished = await batchOf(workspace, 9 * day, { finished: false });
    const noRetention = await batchOf(unkept, 30 * day);
    const oldTest = await batchOf(unkept, 2 * day, { test: true });
    const freshTest = await batchOf(unkept, 3_600_000, { test: true });

    const erased: string[] = [];
    const sweeper = new RetentionSweeper({
      workspaces,
      generations,
      batches,
      erase: async () => {},
      eraseBatch: (doc) => eraseBatch({ batches, objects }, doc),
      onBatchErased: (doc) => erased.push(doc._id.toHexString()),
      testRetentionMs: day,
      intervalMs: 60_000,
    });
    const result = await sweeper.sweepOnce();
    expect(result.failed).toBe(0);
    expect(new Set(erased)).toEqual(new Set([old.id.toHexString(), oldTest.id.toHexString()]));
    expect(await batches.get(old.id)).toBeNull();
    expect(objects.objects.has(old.key)).toBe(false);
    expect(await batches.get(oldTest.id)).toBeNull();
    expect(objects.objects.has(oldTest.key)).toBe(false);
    for (const kept of [recent, noRetention, freshTest]) {
      expect(await batches.get(kept.id)).not.toBeNull();
      expect(objects.objects.has(kept.key)).toBe(true);
    }
    // A batch still running past its retention is not cut off: it goes once it completes.
    expect(await batches.get(unfinished.id)).toMatchObject({ status: 'PENDING' });
    // Erasing again (another replica, a retried sweep) is harmless.
    await expect(
      eraseBatch(
        { batches, objects },
        { _id: old.id, workspaceId: workspace, status: 'COMPLETED', outputKey: old.key, createdAt: new Date() },
      ),
    ).resolves.toEqual({ rowDeleted: false });
  });
});

describe('erasing a merged batch item', () => {
  it("removes the batch's merged PDF, which holds its pages; the batch's outputUrl is null from then on", async () => {
    const { batches, generations, workspaces } = stack.repositories;
    const workspace = await stack.workspace();
    const templateId = await stack.template(workspace);
    const principal = stack.principal(workspace);
    const created = await stack.batches.create(principal, {
      items: [0, 1].map((n) => ({ templateId, variables: { name: `e${n}` }, format: 'pdf' as const })),
      merge: true,
      itemEvents: false,
    });
    const id = parseId('batch', created.id)!;
    const objects = new MemoryObjects();
    const key = batchObjectKey({ _id: id, workspaceId: workspace });
    const items = await generations.listBatchItems(created.id);
    for (const item of items) {
      await generations.fail(item._id, null, 'x');
      await batches.countItem(id, item.batchIndex!, 'COMPLETED');
    }
    await objects.putObject(key, Buffer.from('%PDF-1.7 merged'), 'application/pdf');
    await batches.complete(id, key);
    expect((await stack.batches.get(principal, created.id)).outputUrl).toContain(key);

    const admin = new GenerationAdmin({
      workspaces,
      generations: stack.generations,
      rows: generations,
      pdfs: objects,
      erasure: { generations, deliveries: new DeliveriesRepository(stack.db), objects },
      batchRows: batches,
    });
    await admin.delete(formatId('generation', items[0]!._id));
    expect(objects.objects.has(key)).toBe(false);
    expect(await stack.batches.get(principal, created.id)).toMatchObject({ status: 'COMPLETED', outputUrl: null });
  });
});

describe('batch progress gauges', () => {
  it('report unfinished batches by status and their items not yet final on the metrics endpoint', async () => {
    const { batches } = stack.repositories;
    const base = await batches.progressTotals();
    const workspace = await stack.workspace();
    const templateId = await stack.template(workspace);
    const principal = stack.principal(workspace);
    const input = (n: number) => ({
      items: Array.from({ length: n }, (_, i) => ({
        templateId,
        variables: { name: `g${i}` },
        format: 'pdf' as const,
      })),
      merge: false,
      itemEvents: false,
    });
    await stack.batches.create(principal, input(4));
    const processing = await stack.batches.create(principal, input(3));
    await batches.countItem(parseId('batch', processing.id)!, 0, 'COMPLETED');

    const metrics = createMetrics({ defaultMetrics: false });
    for (const [name, collector] of batchProgressGauges(batches)) metrics.registerGaugeCollector(name, collector);
    const text = await metrics.metricsText();
    const value = (series: string) =>
      Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\d+)$`, 'm').exec(text)?.[1]);
    expect(value('docgen_batches_in_progress{status="pending"}')).toBe(base.pending + 1);
    expect(value('docgen_batches_in_progress{status="processing"}')).toBe(base.processing + 1);
    expect(value('docgen_batch_items_pending')).toBe(base.itemsPending + 4 + 2);
    expect(text).toContain('# TYPE docgen_batch_completion_duration_seconds histogram');
  });
});
