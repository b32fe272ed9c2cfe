// The render pipeline's side of fast takeover, in process: a redelivered job whose generation
// is still leased by another worker (typically one that just died) is looked at again just
// after that lease runs out, instead of being dropped and left to a sweep; a job for a final
// generation is acknowledged, and a final row whose event never left gets it once.
import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { formatId } from '../../src/domain/ids.ts';
import type { FinalEvent } from '../../src/queue/messages.ts';
import { RenderPipeline, type JobControl } from '../../src/render/render-pipeline.ts';
import type { GenerationDoc } from '../../src/store/documents.ts';
import type { GenerationsRepository } from '../../src/store/generations-repository.ts';
import type { TemplatesRepository } from '../../src/store/templates-repository.ts';

function row(overrides: Partial<GenerationDoc>): GenerationDoc {
  const now = new Date();
  return {
    _id: new ObjectId(),
    workspaceId: new ObjectId(),
    status: 'PROCESSING',
    leaseOwner: 'render-other',
    leaseUntil: new Date(now.getTime() + 4_000),
    attempts: 1,
    eventPublished: false,
    updatedAt: now,
    createdAt: now,
    ...overrides,
  } as GenerationDoc;
}

function pipelineOver(current: GenerationDoc) {
  const published: FinalEvent[] = [];
  const marked: ObjectId[] = [];
  const generations = {
    claim: async () => null,
    get: async () => current,
    markEventPublished: async (id: ObjectId) => void marked.push(id),
  } as unknown as GenerationsRepository;
  const pipeline = new RenderPipeline({
    generations,
    templates: {} as TemplatesRepository,
    renderer: { render: async () => ({ pdf: Buffer.from('') }) },
    store: { putPdf: async () => {} },
    events: { publishFinalEvent: async (e) => void published.push(e) },
    maxAttempts: 3,
    leaseMs: 6_000,
  });
  const settled: Array<{ action: string; delayMs?: number }> = [];
  const control: JobControl = {
    working: () => {},
    ack: () => void settled.push({ action: 'ack' }),
    nak: (delayMs) => void settled.push({ action: 'nak', delayMs }),
    term: () => void settled.push({ action: 'term' }),
  };
  return { pipeline, control, settled, published, marked };
}

describe('RenderPipeline takeover', () => {
  it('a job whose generation another worker still leases is handed back until just after the lease ends', async () => {
    const current = row({});
    const { pipeline, control, settled, published } = pipelineOver(current);
    await pipeline.process({ generationId: formatId('generation', current._id) }, control);
    expect(settled).toHaveLength(1);
    expect(settled[0]!.action).toBe('nak');
    const leftMs = current.leaseUntil!.getTime() - Date.now();
    expect(settled[0]!.delayMs).toBeGreaterThan(leftMs);
    expect(settled[0]!.delayMs).toBeLessThanOrEqual(leftMs + 300);
    expect(published).toEqual([]);
  });

  it('a job for a final generation is acknowledged; its event is published if it never left, once', async () => {
    const final = row({ status: 'COMPLETED', leaseOwner: null, leaseUntil: null, eventPublished: false });
    const { pipeline, control, settled, published, marked } = pipelineOver(final);
    await pipeline.process({ generationId: formatId('generation', final._id) }, control);
    expect(settled).toEqual([{ action: 'ack' }]);
    expect(published.map((e) => e.generationId)).toEqual([formatId('generation', final._id)]);
    expect(marked).toEqual([final._id]);

    const sent = row({ status: 'FAILED', leaseOwner: null, leaseUntil: null, eventPublished: true, error: 'x' });
    const again = pipelineOver(sent);
    await again.pipeline.process({ generationId: formatId('generation', sent._id) }, again.control);
    expect(again.settled).toEqual([{ action: 'ack' }]);
    expect(again.published).toEqual([]);
  });
});
