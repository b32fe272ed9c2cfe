// RenderPipeline in process: the real state machine on the MongoDB stand-in, with in-memory
// renderer, PDF store, event stream and job control. Attempts, permanent vs transient
// failures, a lost lease, and exactly one final event (docs/interface.md#lifecycle).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ObjectId } from 'mongodb';
import type { Principal } from '../../src/auth/api-key-authenticator.ts';
import { parseId } from '../../src/domain/ids.ts';
import { RenderError } from '../../src/render/render-error.ts';
import type { RenderStage } from '../../src/render/render-stages.ts';
import {
  RENDER_RETRY_DELAYS_MS,
  RenderPipeline,
  type RenderOutcomeListener,
} from '../../src/render/render-pipeline.ts';
import { startInProcessStack, type InProcessStack } from '../harness/in-process.ts';
import { MemoryEventStream, MemoryPdfStore, RecordingJobControl, ScriptedRenderer } from '../harness/render-fakes.ts';

const MAX_ATTEMPTS = 3;
const PDF = Buffer.from('%PDF-1.7 test document');

let stack: InProcessStack;
let workspaceId: ObjectId;
let principal: Principal;
let templateId: string;

beforeAll(async () => {
  stack = await startInProcessStack();
  workspaceId = await stack.workspace();
  principal = stack.principal(workspaceId);
  templateId = await stack.template(workspaceId, { name: 'Invoice' });
});

afterAll(async () => {
  await stack?.close();
});

function pipeline(
  renderer: ScriptedRenderer,
  options: { events?: MemoryEventStream; store?: MemoryPdfStore; leaseMs?: number } = {},
) {
  const events = options.events ?? new MemoryEventStream();
  const store = options.store ?? new MemoryPdfStore();
  const outcomes: string[] = [];
  const reports: Array<Parameters<RenderOutcomeListener>[1]> = [];
  const stages: Array<[RenderStage, number]> = [];
  const worker = new RenderPipeline({
    generations: stack.repositories.generations,
    templates: stack.repositories.templates,
    renderer,
    store,
    events,
    maxAttempts: MAX_ATTEMPTS,
    leaseMs: options.leaseMs ?? 30_000,
    onOutcome: (outcome, info) => {
      outcomes.push(outcome);
      reports.push(info);
    },
    onStage: (stage, ms) => stages.push([stage, ms]),
  });
  return { worker, events, store, outcomes, reports, stages };
}

async function newGeneration(ref = templateId, variables = { name: 'Ada' }): Promise<string> {
  return (await stack.generations.create(principal, { templateId: ref, variables, format: 'pdf' })).id;
}

async function row(id: string) {
  return (await stack.repositories.generations.get(parseId('generation', id)!))!;
}

async function run(worker: RenderPipeline, generationId: string): Promise<string[]> {
  const control = new RecordingJobControl();
  await worker.process({ generationId }, control);
  return control.calls;
}

describe('render pipeline', () => {
  it('renders, stores the PDF, completes and publishes one completed event', async () => {
    const id = await newGeneration();
    const { worker, events, store, outcomes } = pipeline(new ScriptedRenderer(PDF));
    expect(await run(worker, id)).toEqual(['ack']);
    const done = await row(id);
    expect(done).toMatchObject({
      status: 'COMPLETED',
      attempts: 1,
      templateVersion: 1,
      eventPublished: true,
      leaseOwner: null,
    });
    expect(store.objects.get(done.outputKey!)).toEqual(PDF);
    expect(events.for(id)).toEqual([
      expect.objectContaining({
        event: 'generation.completed',
        generationId: id,
        eventId: expect.stringMatching(/^evt_/),
      }),
    ]);
    expect(outcomes).toEqual(['completed']);
  });

  it('reports how long each stage of a completed render took, in order', async () => {
    const id = await newGeneration();
    const { worker, stages } = pipeline(new ScriptedRenderer(PDF));
    await run(worker, id);
    expect(stages.map(([stage]) => stage)).toEqual(['claim', 'queue_wait', 'template', 'upload', 'complete', 'event']);
    for (const [, ms] of stages) expect(ms).toBeGreaterThanOrEqual(0);
  });

  it("tells each outcome that job's own stage times (the render log's stagesMs)", async () => {
    // The renderer takes 60 ms: that job's report says where its time went.
    const id = await newGeneration();
    const { worker, reports } = pipeline(
      new ScriptedRenderer(() => new Promise((resolve) => setTimeout(() => resolve({ pdf: PDF }), 60))),
    );
    await run(worker, id);
    const [report] = reports;
    expect(report).toMatchObject({ generationId: id });
    expect(Object.keys(report!.stagesMs).sort()).toEqual(
      ['claim', 'complete', 'event', 'queue_wait', 'template', 'upload'].sort(),
    );
    const outsideRenderer =
      Object.values(report!.stagesMs).reduce((sum, ms) => sum + ms, 0) - report!.stagesMs.queue_wait!;
    // The 60 ms of the renderer are in durationMs and in no stage the pipeline itself times.
    expect(report!.durationMs).toBeGreaterThanOrEqual(outsideRenderer + 55);
  });

  it('writes the PDF without asking the database again while the lease is fresh, and confirms an older lease first', async () => {
    const extendLease = vi.spyOn(stack.repositories.generations, 'extendLease');
    try {
      const quick = pipeline(new ScriptedRenderer(PDF), { leaseMs: 30_000 });
      const quickId = await newGeneration();
      await run(quick.worker, quickId);
      expect(extendLease).not.toHaveBeenCalled();
      expect(await row(quickId)).toMatchObject({ status: 'COMPLETED' });

      // Rendering takes 80 ms of a 100 ms lease: more than half, so the lease is confirmed.
      const slow = pipeline(
        new ScriptedRenderer(() => new Promise((resolve) => setTimeout(() => resolve({ pdf: PDF }), 80))),
        { leaseMs: 100 },
      );
      const slowId = await newGeneration();
      await run(slow.worker, slowId);
      expect(extendLease).toHaveBeenCalledTimes(1);
      expect(slow.stages.map(([stage]) => stage)).toContain('lease_check');
      expect(await row(slowId)).toMatchObject({ status: 'COMPLETED' });
    } finally {
      extendLease.mockRestore();
    }
  });

  it('a permanent failure fails at once, naming the problem, without retry', async () => {
    const id = await newGeneration();
    const renderer = new ScriptedRenderer(
      new RenderError('UNKNOWN_VARIABLE', 'Variable "nme" is not declared by the template'),
    );
    const { worker, events } = pipeline(renderer);
    expect(await run(worker, id)).toEqual(['ack']);
    expect(await row(id)).toMatchObject({
      status: 'FAILED',
      attempts: 1,
      error: 'Variable "nme" is not declared by the template',
    });
    expect(events.for(id)).toEqual([
      expect.objectContaining({ event: 'generation.failed', error: 'Variable "nme" is not declared by the template' }),
    ]);
    expect(renderer.calls).toHaveLength(1);
  });

  it('template problems are permanent and never reach the renderer', async () => {
    const unpublished = await stack.template(workspaceId, { name: 'Draft', publish: false });
    const archived = await stack.template(workspaceId, { name: 'Old' });
    await stack.repositories.templates.archive(parseId('template', archived)!);
    const cases: Array<[string, RegExp]> = [
      ['tpl_000000000000000000000000', /does not exist/],
      [unpublished, /has no published version/],
      [archived, /is archived/],
    ];
    for (const [ref, message] of cases) {
      const id = await newGeneration(ref);
      const renderer = new ScriptedRenderer(PDF);
      const { worker, events } = pipeline(renderer);
      expect(await run(worker, id)).toEqual(['ack']);
      expect((await row(id)).error, ref).toMatch(message);
      expect(events.for(id)).toHaveLength(1);
      expect(renderer.calls).toEqual([]);
    }
  });

  it('a transient failure is retried with back-off; after the last attempt the generation fails with the last error', async () => {
    const id = await newGeneration();
    const renderer = new ScriptedRenderer(
      new RenderError('BROWSER_CRASHED', 'The browser crashed'),
      new RenderError('RENDER_TIMEOUT', 'Rendering timed out'),
    );
    const { worker, events, outcomes } = pipeline(renderer);
    expect(await run(worker, id)).toEqual([`nak ${RENDER_RETRY_DELAYS_MS[0]}`]);
    expect(await row(id)).toMatchObject({
      status: 'PROCESSING',
      attempts: 1,
      leaseOwner: null,
      lastError: 'The browser crashed',
    });
    expect(await run(worker, id)).toEqual([`nak ${RENDER_RETRY_DELAYS_MS[1]}`]);
    expect(await run(worker, id)).toEqual(['ack']);
    expect(await row(id)).toMatchObject({ status: 'FAILED', attempts: MAX_ATTEMPTS, error: 'Rendering timed out' });
    expect(events.for(id)).toHaveLength(1);
    expect(outcomes).toEqual(['retried', 'retried', 'failed']);
  });

  it('a transient failure followed by success completes with one event', async () => {
    const id = await newGeneration();
    const { worker, events } = pipeline(new ScriptedRenderer(new Error('socket hang up'), PDF));
    expect(await run(worker, id)).toEqual([`nak ${RENDER_RETRY_DELAYS_MS[0]}`]);
    expect(await run(worker, id)).toEqual(['ack']);
    expect(await row(id)).toMatchObject({ status: 'COMPLETED', attempts: 2 });
    expect(events.for(id).map((e) => e.event)).toEqual(['generation.completed']);
  });

  it('attempts that died with their worker count: past the limit the generation fails', async () => {
    const id = await newGeneration();
    const oid = parseId('generation', id)!;
    // Three workers claimed it and died (their leases ran out at once).
    for (let i = 0; i < MAX_ATTEMPTS; i++)
      expect(await stack.repositories.generations.claim(oid, `dead-${i}`, -1)).not.toBeNull();
    const renderer = new ScriptedRenderer(PDF);
    const { worker, events } = pipeline(renderer);
    expect(await run(worker, id)).toEqual(['ack']);
    expect(await row(id)).toMatchObject({
      status: 'FAILED',
      error: `Rendering did not finish after ${MAX_ATTEMPTS} attempts`,
    });
    expect(renderer.calls).toEqual([]);
    expect(events.for(id)).toHaveLength(1);
  });

  it('a worker that lost its lease cannot finish the generation: the new owner does, once', async () => {
    const id = await newGeneration();
    const events = new MemoryEventStream();
    const store = new MemoryPdfStore();
    let release!: () => void;
    const slow = new ScriptedRenderer(
      () => new Promise((resolve) => (release = () => resolve({ pdf: Buffer.from('%PDF stale') }))),
    );
    const a = pipeline(slow, { events, store, leaseMs: 1 });
    const b = pipeline(new ScriptedRenderer(PDF), { events, store });

    const first = run(a.worker, id);
    while (slow.calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 20)); // A's 1 ms lease has run out
    expect(await run(b.worker, id)).toEqual(['ack']);
    release();
    expect(await first).toEqual(['ack']);

    const done = await row(id);
    expect(done).toMatchObject({ status: 'COMPLETED', attempts: 2 });
    expect(store.objects.get(done.outputKey!)).toEqual(PDF);
    expect(events.for(id)).toHaveLength(1);
    expect(a.outcomes).toEqual(['skipped']);
    expect(b.outcomes).toEqual(['completed']);
  });

  it('a redelivered job of a final generation publishes nothing more', async () => {
    const id = await newGeneration();
    const { worker, events, outcomes } = pipeline(new ScriptedRenderer(PDF));
    await run(worker, id);
    expect(await run(worker, id)).toEqual(['ack']);
    expect(await run(worker, id)).toEqual(['ack']);
    expect(events.for(id)).toHaveLength(1);
    expect(outcomes).toEqual(['completed', 'skipped', 'skipped']);
  });

  it('an event that could not be published leaves with the next delivery, exactly once', async () => {
    const id = await newGeneration();
    const events = new MemoryEventStream();
    events.failures = 1;
    const { worker } = pipeline(new ScriptedRenderer(PDF), { events });
    expect((await run(worker, id))[0]).toMatch(/^nak/);
    expect(await row(id)).toMatchObject({ status: 'COMPLETED', eventPublished: false });
    expect(events.for(id)).toEqual([]);
    expect(await run(worker, id)).toEqual(['ack']);
    expect(await row(id)).toMatchObject({ status: 'COMPLETED', eventPublished: true });
    expect(events.for(id)).toHaveLength(1);
  });

  it('a job that names no generation is terminated', async () => {
    const { worker } = pipeline(new ScriptedRenderer(PDF));
    expect(await run(worker, 'not-a-generation')).toEqual(['term']);
  });
});
