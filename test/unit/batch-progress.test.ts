// Batches in process, on the real repositories over the embedded MongoDB: the create request's
// all-or-nothing validation and idempotency, and counting each item once however often its
// outbox step runs (a retry, a crashed worker's successor), with one COMPLETED transition and
// one batch.completed publish.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchProgress } from '../../src/batches/batch-progress.ts';
import { parseCreateBatchBody } from '../../src/batches/batch-input.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { parseId } from '../../src/domain/ids.ts';
import type { BatchCompletedEvent } from '../../src/queue/messages.ts';
import { rejection, startInProcessStack, type InProcessStack } from '../harness/in-process.ts';
import { GenerationAdmin } from '../../src/admin/generation-admin.ts';
import { DeliveriesRepository } from '../../src/store/deliveries-repository.ts';
import { MemoryObjects } from '../harness/admin-in-process.ts';
import { formatId } from '../../src/domain/ids.ts';

let stack: InProcessStack;

beforeAll(async () => {
  stack = await startInProcessStack();
});

afterAll(async () => {
  await stack?.close();
});

/** Records what it was asked to publish: what the webhook dispatcher would receive. */
function recordingEvents(): {
  published: BatchCompletedEvent[];
  publishBatchEvent(e: BatchCompletedEvent): Promise<void>;
} {
  const published: BatchCompletedEvent[] = [];
  return {
    published,
    async publishBatchEvent(event) {
      published.push(event);
    },
  };
}

function progressWith(events: ReturnType<typeof recordingEvents>): BatchProgress {
  return new BatchProgress({
    batches: stack.repositories.batches,
    generations: stack.repositories.generations,
    store: {
      downloadToFile: () => Promise.reject(new Error('no PDFs in this test')),
      putPdfFile: () => Promise.reject(new Error('no PDFs in this test')),
    },
    events,
  });
}

describe('batch body', () => {
  it('names every bad item by its index and keeps the limits', () => {
    const err = (() => {
      try {
        parseCreateBatchBody({ items: [{ templateId: 'tpl_a' }, { templateId: 7 }, 'x', { variables: {} }], merge: 1 });
      } catch (e) {
        return e as DomainError;
      }
      throw new Error('accepted');
    })();
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.details.map((d) => d.field)).toEqual([
      'merge',
      'items[1].templateId',
      'items[2]',
      'items[3].templateId',
    ]);
    expect(() => parseCreateBatchBody({ items: [{ templateId: 'tpl_a' }, { templateId: 'tpl_b' }] }, 1)).toThrow(
      DomainError,
    );
    expect(parseCreateBatchBody({ items: [{ templateId: 'tpl_a' }] })).toEqual({
      items: [{ templateId: 'tpl_a', variables: {}, format: 'pdf' }],
      merge: false,
      itemEvents: true,
    });
  });
});

describe('batch create and counting', () => {
  it('refuses an unknown template without storing anything; the same key gives the same batch', async () => {
    const workspace = await stack.workspace();
    const templateId = await stack.template(workspace);
    const principal = stack.principal(workspace);
    const refused = await rejection(
      stack.batches.create(principal, {
        items: [
          { templateId, variables: {}, format: 'pdf' },
          { templateId: 'tpl_0123456789abcdef01234567', variables: {}, format: 'pdf' },
        ],
        merge: false,
        itemEvents: true,
      }),
      DomainError,
    );
    expect(refused.details.map((d) => d.field)).toEqual(['items[1].templateId']);
    const listed = await stack.generations.list(principal, {});
    expect(listed.generations).toEqual([]);

    const input = {
      items: [0, 1, 2].map((n) => ({ templateId, variables: { name: `n${n}` }, format: 'pdf' as const })),
      merge: false,
      itemEvents: false,
    };
    const first = await stack.batches.create(principal, input, 'key-1');
    const again = await stack.batches.create(principal, input, 'key-1');
    expect(again.id).toBe(first.id);
    expect((await stack.generations.list(principal, { batchId: first.id })).generations).toHaveLength(3);
    const reused = await rejection(stack.batches.create(principal, { ...input, merge: true }, 'key-1'), DomainError);
    expect(reused.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('counts each item once however often its step runs; one COMPLETED, one event', async () => {
    const workspace = await stack.workspace();
    const templateId = await stack.template(workspace);
    const principal = stack.principal(workspace);
    const batch = await stack.batches.create(principal, {
      items: [0, 1, 2].map((n) => ({ templateId, variables: { name: `n${n}` }, format: 'pdf' as const })),
      merge: false,
      itemEvents: true,
    });
    const { generations } = stack.repositories;
    const items = await generations.listBatchItems(batch.id);
    expect(items.map((i) => i.batchIndex)).toEqual([0, 1, 2]);
    const events = recordingEvents();
    const progress = progressWith(events);

    // Item 0 completes, item 1 fails; each step runs twice (a retried outbox step).
    const done0 = (await generations.fail(items[0]!._id, null, 'x'))!;
    const asCompleted = { ...done0, status: 'COMPLETED' as const };
    await progress.itemFinal(asCompleted);
    await progress.itemFinal(asCompleted);
    const failed1 = (await generations.fail(items[1]!._id, null, 'broken'))!;
    await Promise.all([progress.itemFinal(failed1), progress.itemFinal(failed1)]);
    let view = await stack.batches.get(principal, batch.id);
    expect(view).toMatchObject({ status: 'PROCESSING', total: 3, completed: 1, failed: 1 });
    expect(events.published).toEqual([]);

    // The last item, three times at once (two workers and the sweeper).
    const failed2 = (await generations.fail(items[2]!._id, null, 'broken'))!;
    await Promise.all([progress.itemFinal(failed2), progress.itemFinal(failed2), progress.itemFinal(failed2)]);
    view = await stack.batches.get(principal, batch.id);
    expect(view).toMatchObject({ status: 'COMPLETED', total: 3, completed: 1, failed: 2, outputUrl: null });
    // Publishing may repeat (JetStream and the fan-out drop repeats), but every publish is the one event.
    expect(new Set(events.published.map((e) => e.eventId)).size).toBe(1);
    expect(events.published[0]).toMatchObject({ event: 'batch.completed', batchId: batch.id, completed: 1, failed: 2 });
    const stored = await stack.repositories.batches.get(parseId('batch', batch.id)!);
    expect(stored?.eventPublished).toBe(true);
    // Once published, a later repeat of an item's step publishes nothing more.
    const before = events.published.length;
    await progress.itemFinal(failed2);
    expect(events.published.length).toBe(before);
  });
});

describe('deleting a batch item', () => {
  it('is refused until the item is final (it would never be counted), then allowed', async () => {
    const workspace = await stack.workspace();
    const templateId = await stack.template(workspace);
    const batch = await stack.batches.create(stack.principal(workspace), {
      items: [{ templateId, variables: {}, format: 'pdf' }],
      merge: false,
      itemEvents: true,
    });
    const admin = new GenerationAdmin({
      workspaces: stack.repositories.workspaces,
      generations: stack.generations,
      rows: stack.repositories.generations,
      pdfs: new MemoryObjects(),
      erasure: {
        generations: stack.repositories.generations,
        deliveries: new DeliveriesRepository(stack.db),
        objects: new MemoryObjects(),
      },
    });
    const [item] = await stack.repositories.generations.listBatchItems(batch.id);
    const id = formatId('generation', item!._id);
    const refused = await rejection(admin.delete(id), DomainError);
    expect(refused.code).toBe('FAILED_PRECONDITION');
    expect(refused.message).toContain(batch.id);
    await stack.repositories.generations.fail(item!._id, null, 'broken');
    await admin.delete(id);
    expect(await stack.repositories.generations.get(item!._id)).toBeNull();
  });
});
