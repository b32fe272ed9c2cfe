// The render pipeline when MongoDB fails over between storing a PDF and recording it: the
// generation ends COMPLETED with that PDF, never FAILED, even on its last attempt. The real
// pipeline and repositories reach the stand-in through the fault proxy; PDFs go to a real S3
// (s3rver) with the object store docgen uses; only the renderer is scripted (no Chromium).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoClient, ObjectId } from 'mongodb';
import { formatId } from '../../src/domain/ids.ts';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import { outputKeyFor, RenderPipeline, TEMPLATE_VERSION_METADATA } from '../../src/render/render-pipeline.ts';
import type { ObjectStore } from '../../src/storage/object-store.ts';
import { COLLECTIONS, ensureIndexes, type GenerationDoc } from '../../src/store/documents.ts';
import { GenerationsRepository } from '../../src/store/generations-repository.ts';
import { TemplatesRepository } from '../../src/store/templates-repository.ts';
import { objectStoreOn, startMongo, startS3, type TestMongo, type TestS3 } from '../harness/dependencies.ts';
import { startMongoFaultProxy, type MongoFaultProxy } from '../harness/mongo-fault-proxy.ts';
import { MemoryEventStream, RecordingJobControl, ScriptedRenderer } from '../harness/render-fakes.ts';
import { TEMPLATES_TEST_KEY } from '../harness/test-config.ts';

const PDF = Buffer.from('%PDF-1.7\n% stored before the failover\n');

let mongo: TestMongo;
let s3: TestS3;
let proxy: MongoFaultProxy;
let client: MongoClient;
let objects: ObjectStore;
let generations: GenerationsRepository;
let templates: TemplatesRepository;
let workspaceId: ObjectId;
let templateId: ObjectId;

beforeAll(async () => {
  [mongo, s3] = await Promise.all([startMongo(), startS3()]);
  proxy = await startMongoFaultProxy({ upstreamUrl: mongo.url });
  // Sized as docgen sizes them: an operation waits out an election.
  client = new MongoClient(proxy.url, { serverSelectionTimeoutMS: 30_000, heartbeatFrequencyMS: 5_000 });
  await client.connect();
  const db = client.db(mongo.database);
  await ensureIndexes(db);
  generations = new GenerationsRepository(db);
  templates = new TemplatesRepository(db, TEMPLATES_TEST_KEY);
  objects = objectStoreOn(s3);
  workspaceId = new ObjectId();
  const { template } = await templates.create(workspaceId, 'Letter', {
    body: '<p>Hello</p>',
    css: '',
    partials: {},
    variables: [],
    pdfOptions: DEFAULT_PDF_OPTIONS,
  });
  templateId = template._id;
  await templates.publish(templateId, 1);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await proxy?.stop();
  await Promise.allSettled([mongo?.stop(), s3?.stop()]);
});

function pipeline(renderer: ScriptedRenderer, events: MemoryEventStream) {
  const outcomes: string[] = [];
  const worker = new RenderPipeline({
    generations,
    templates,
    renderer,
    store: objects,
    events,
    maxAttempts: 3,
    leaseMs: 6_000,
    completeRetryBudgetMs: 2_000,
    onOutcome: (outcome) => outcomes.push(outcome),
  });
  return { worker, outcomes };
}

/** A generation whose earlier attempts already ran (the next claim is attempt `attemptsBefore + 1`). */
async function generation(attemptsBefore: number): Promise<GenerationDoc> {
  const doc = generations.newDoc({
    workspaceId,
    templateId,
    templateRef: formatId('template', templateId),
    templateName: 'Letter',
    data: {},
  });
  doc.attempts = attemptsBefore;
  if (attemptsBefore > 0) {
    doc.status = 'PROCESSING';
    doc.lastError = 'an earlier attempt failed';
  }
  await generations.insert(doc);
  return doc;
}

const completing = (command: Record<string, unknown>) =>
  command.findAndModify === COLLECTIONS.generations &&
  (command.update as { $set?: { status?: string } } | undefined)?.$set?.status === 'COMPLETED';

describe('a stored PDF survives a failover', () => {
  it('on the last attempt, recording the PDF fails for longer than the retries: not FAILED; the next delivery records it', async () => {
    const doc = await generation(2);
    const events = new MemoryEventStream();
    const renderer = new ScriptedRenderer(PDF);
    const { worker, outcomes } = pipeline(renderer, events);
    const job = { generationId: formatId('generation', doc._id) };
    // The primary steps down after the upload and stays away past the pipeline's retries.
    const stepDown = proxy.inject({
      commands: ['findAndModify'],
      match: completing,
      action: { kind: 'error', code: 10107, codeName: 'NotWritablePrimary', labels: ['RetryableWriteError'] },
    });
    const first = new RecordingJobControl();
    try {
      await worker.process(job, first);
    } finally {
      stepDown.remove();
    }
    expect(stepDown.applied).toBeGreaterThanOrEqual(2);
    expect(first.calls).toEqual([expect.stringMatching(/^nak /)]);
    expect(outcomes).toEqual(['retried']);
    const afterFirst = (await generations.get(doc._id))!;
    expect(afterFirst.status).toBe('PROCESSING');
    expect(afterFirst.attempts).toBe(3);
    const key = outputKeyFor(doc);
    expect(await objects.pdfMetadata(key)).toMatchObject({ [TEMPLATE_VERSION_METADATA]: '1' });

    // The job comes back (its nak delay, or the sweeper). Attempts are used up, the PDF is stored:
    // it is recorded, without rendering again.
    const second = new RecordingJobControl();
    await worker.process(job, second);
    expect(second.calls).toEqual(['ack']);
    const done = (await generations.get(doc._id))!;
    expect(done).toMatchObject({ status: 'COMPLETED', outputKey: key, templateVersion: 1, error: null });
    expect(renderer.calls).toHaveLength(1);
    expect(events.for(job.generationId).map((e) => e.event)).toEqual(['generation.completed']);
    expect(outcomes).toEqual(['retried', 'completed']);
  }, 30_000);

  it('a 12 s election right after the upload: complete() waits for the new primary and the generation ends COMPLETED', async () => {
    const doc = await generation(0);
    const events = new MemoryEventStream();
    let election: Promise<void> | undefined;
    const renderer = new ScriptedRenderer(async () => {
      // The render finishes as the primary goes away; the upload (S3) is unaffected.
      election = proxy.electionWindow(12_000);
      return { pdf: PDF };
    });
    const { worker, outcomes } = pipeline(renderer, events);
    const started = performance.now();
    const control = new RecordingJobControl();
    await worker.process({ generationId: formatId('generation', doc._id) }, control);
    await election;
    expect(performance.now() - started).toBeGreaterThanOrEqual(11_000);
    expect(control.calls).toEqual(['ack']);
    expect(outcomes).toEqual(['completed']);
    expect(await generations.get(doc._id)).toMatchObject({ status: 'COMPLETED', templateVersion: 1 });
    expect(events.for(formatId('generation', doc._id))).toHaveLength(1);
  }, 60_000);
});
