// The outbox sweeper in process (docs/interface.md#lifecycle): what a crash left behind is
// published again, what is in good hands is left alone, and final events leave once. Real
// repositories on the MongoDB stand-in; the queue is in memory.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectId } from 'mongodb';
import type { Principal } from '../../src/auth/api-key-authenticator.ts';
import { parseId } from '../../src/domain/ids.ts';
import { OutboxSweeper } from '../../src/render/outbox-sweeper.ts';
import { RenderPipeline } from '../../src/render/render-pipeline.ts';
import { startInProcessStack, type InProcessStack } from '../harness/in-process.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { MemoryEventStream, MemoryPdfStore, ScriptedRenderer } from '../harness/render-fakes.ts';

const GRACE_MS = 5_000;
const REPUBLISH_AFTER_MS = 60_000;

let stack: InProcessStack;
let principal: Principal;
let templateId: string;
let events: MemoryEventStream;
let pipeline: RenderPipeline;
let jobs: Array<{ generationId: string; msgId: string }>;
let sweeper: OutboxSweeper;

beforeAll(async () => {
  stack = await startInProcessStack();
  const workspaceId: ObjectId = await stack.workspace();
  principal = stack.principal(workspaceId);
  templateId = await stack.template(workspaceId);
  events = new MemoryEventStream();
  pipeline = new RenderPipeline({
    generations: stack.repositories.generations,
    templates: stack.repositories.templates,
    renderer: new ScriptedRenderer(Buffer.from('%PDF')),
    store: new MemoryPdfStore(),
    events,
    maxAttempts: 3,
    leaseMs: 30_000,
  });
  jobs = [];
  sweeper = new OutboxSweeper({
    generations: stack.repositories.generations,
    publishJob: async (generationId, msgId) => void jobs.push({ generationId, msgId }),
    publishEvent: (doc) => pipeline.publishEvent(doc),
    intervalMs: 20,
    publishGraceMs: GRACE_MS,
    republishAfterMs: REPUBLISH_AFTER_MS,
  });
});

afterAll(async () => {
  await sweeper?.stop();
  await stack?.close();
});

const later = (ms: number) => new Date(Date.now() + ms);

/** A generation whose API process died between the insert and the job publish. */
async function unpublished(): Promise<string> {
  stack.jobs.failing = true;
  try {
    return (await stack.generations.create(principal, { templateId, variables: {}, format: 'pdf' })).id;
  } finally {
    stack.jobs.failing = false;
  }
}

/** A generation created normally: its job published and the row marked so. */
async function published(): Promise<string> {
  const id = (await stack.generations.create(principal, { templateId, variables: {}, format: 'pdf' })).id;
  // create() marks the row without waiting; wait for the mark as a later sweep would.
  await pollUntil(
    () => stack.repositories.generations.get(parseId('generation', id)!),
    (doc) => doc?.jobPublishedAt instanceof Date,
    { timeoutMs: 5_000 },
  );
  return id;
}

const jobsFor = (id: string) => jobs.filter((j) => j.generationId === id);

describe('outbox sweeper', () => {
  it('publishes a never-published PENDING job after the grace period, with the API’s own message id', async () => {
    const id = await unpublished();
    await sweeper.sweepOnce(new Date());
    expect(jobsFor(id)).toEqual([]); // the API may still be publishing it
    await sweeper.sweepOnce(later(GRACE_MS + 1_000));
    expect(jobsFor(id)).toEqual([{ generationId: id, msgId: id }]);
    expect((await stack.repositories.generations.get(parseId('generation', id)!))?.jobPublishedAt).toBeInstanceOf(Date);
    // Marked: the next sweep leaves it alone until the job could have been lost.
    await sweeper.sweepOnce(later(GRACE_MS + 2_000));
    expect(jobsFor(id)).toHaveLength(1);
  });

  it('leaves published PENDING jobs alone until they may have been lost, then republishes under a new id', async () => {
    const id = await published();
    await sweeper.sweepOnce(later(GRACE_MS + 1_000));
    expect(jobsFor(id)).toEqual([]);
    await sweeper.sweepOnce(later(REPUBLISH_AFTER_MS + 1_000));
    expect(jobsFor(id)).toHaveLength(1);
    expect(jobsFor(id)[0]!.msgId).not.toBe(id);
  });

  it('republishes a PROCESSING generation whose worker’s lease ran out, not one still leased', async () => {
    const dead = await published();
    const alive = await published();
    const { generations } = stack.repositories;
    await generations.claim(parseId('generation', dead)!, 'dead-worker', 1_000);
    await generations.claim(parseId('generation', alive)!, 'live-worker', 10 * 60_000);
    const at = later(GRACE_MS + 2_000);
    await sweeper.sweepOnce(at);
    expect(jobsFor(dead)).toEqual([{ generationId: dead, msgId: `${dead}:1:${at.getTime()}` }]);
    expect(jobsFor(alive)).toEqual([]);
  });

  it('publishes a final event that never left, exactly once', async () => {
    const id = await published();
    const oid = parseId('generation', id)!;
    const { generations } = stack.repositories;
    await generations.claim(oid, 'crashed-after-complete', 30_000);
    await generations.complete(oid, 'crashed-after-complete', 'workspaces/w/generations/g.pdf', 1);
    await sweeper.sweepOnce(new Date());
    expect(events.for(id)).toEqual([]); // within the grace, the worker may still publish it
    await sweeper.sweepOnce(later(GRACE_MS + 1_000));
    await sweeper.sweepOnce(later(GRACE_MS + 2_000));
    expect(events.for(id).map((e) => e.event)).toEqual(['generation.completed']);
    expect((await generations.get(oid))?.eventPublished).toBe(true);
  });

  it('runs on its timer until stopped, and a failing sweep does not stop the loop', async () => {
    let sweeps = 0;
    const failing = new OutboxSweeper({
      generations: stack.repositories.generations,
      publishJob: async () => {},
      publishEvent: async () => {},
      intervalMs: 10,
      publishGraceMs: GRACE_MS,
      republishAfterMs: REPUBLISH_AFTER_MS,
      onError: () => sweeps++,
    });
    failing.sweepOnce = async () => {
      throw new Error('database unavailable');
    };
    failing.start();
    await pollUntil(
      () => sweeps,
      (n) => n >= 3,
      { timeoutMs: 10_000 },
    );
    await failing.stop();
    const after = sweeps;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sweeps).toBe(after);
  });
});
