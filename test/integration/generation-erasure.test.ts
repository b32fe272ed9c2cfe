// Right to erasure against the real data layer (MongoDB stand-in or DOCGEN_TEST_MONGODB_URL)
// and S3 (s3rver): the row, the PDF and the deliveries go; other generations' things stay;
// a render that finishes after the erasure leaves no PDF behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectId } from 'mongodb';
import { formatId } from '../../src/domain/ids.ts';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import { eraseGeneration, generationObjectKey } from '../../src/generations/generation-erasure.ts';
import { RenderPipeline } from '../../src/render/render-pipeline.ts';
import type { ObjectStore } from '../../src/storage/object-store.ts';
import { DeliveriesRepository } from '../../src/store/deliveries-repository.ts';
import type { GenerationDoc } from '../../src/store/documents.ts';
import { GenerationsRepository } from '../../src/store/generations-repository.ts';
import { connectMongo, type MongoConnection } from '../../src/store/mongo.ts';
import { TemplatesRepository } from '../../src/store/templates-repository.ts';
import { newDeliveryDoc } from '../../src/webhooks/delivery-dispatcher.ts';
import { objectStoreOn, startMongo, startS3, type TestMongo, type TestS3 } from '../harness/dependencies.ts';
import { TEMPLATES_TEST_KEY } from '../harness/test-config.ts';

let mongo: TestMongo;
let s3: TestS3;
let conn: MongoConnection;
let objects: ObjectStore;
let generations: GenerationsRepository;
let deliveries: DeliveriesRepository;
let templates: TemplatesRepository;

const PDF = Buffer.from('%PDF-1.4\n%%EOF\n');

beforeAll(async () => {
  [mongo, s3] = await Promise.all([startMongo(), startS3()]);
  conn = await connectMongo({ url: mongo.url, database: mongo.database });
  objects = objectStoreOn(s3);
  await objects.ensureBucket();
  generations = new GenerationsRepository(conn.db);
  deliveries = new DeliveriesRepository(conn.db);
  templates = new TemplatesRepository(conn.db, TEMPLATES_TEST_KEY);
});

afterAll(async () => {
  await conn?.close();
  await Promise.all([mongo?.stop(), s3?.stop()]);
});

async function completedGeneration(workspaceId: ObjectId): Promise<GenerationDoc> {
  const doc = generations.newDoc({
    workspaceId,
    templateId: null,
    templateRef: 'tpl_x',
    templateName: 'x',
    data: { customer: 'Ada' },
  });
  const key = generationObjectKey(doc);
  Object.assign(doc, { status: 'COMPLETED', outputKey: key, eventPublished: true });
  await generations.insert(doc);
  await objects.putPdf(key, PDF, { downloadFilename: 'x.pdf' });
  return doc;
}

async function deliveryFor(doc: GenerationDoc, endpointId = new ObjectId()): Promise<ObjectId> {
  const event = {
    eventId: formatId('event', new ObjectId()),
    event: 'generation.completed' as const,
    generationId: formatId('generation', doc._id),
    workspaceId: formatId('workspace', doc.workspaceId),
    timestamp: 1,
  };
  const delivery = newDeliveryDoc(event, endpointId, new Date());
  await deliveries.insertOnce(delivery);
  return delivery._id;
}

describe('eraseGeneration', () => {
  it('removes the row, the PDF and every delivery of the generation, and nothing else', async () => {
    const workspaceId = new ObjectId();
    const doomed = await completedGeneration(workspaceId);
    const kept = await completedGeneration(workspaceId);
    const doomedDeliveries = [await deliveryFor(doomed), await deliveryFor(doomed)];
    const keptDelivery = await deliveryFor(kept);

    const erased = await eraseGeneration({ generations, deliveries, objects }, doomed._id);

    expect(erased).toMatchObject({
      generationId: formatId('generation', doomed._id),
      rowDeleted: true,
      deliveriesDeleted: 2,
    });
    expect(await generations.get(doomed._id)).toBeNull();
    expect(await objects.exists(doomed.outputKey!)).toBe(false);
    for (const id of doomedDeliveries) expect(await deliveries.get(id)).toBeNull();
    expect(await generations.get(kept._id)).not.toBeNull();
    expect(await objects.exists(kept.outputKey!)).toBe(true);
    expect(await deliveries.get(keptDelivery)).not.toBeNull();

    // A second erasure finds nothing to do.
    expect(await eraseGeneration({ generations, deliveries, objects }, doomed._id)).toBeNull();
  });

  it('erases a generation that never produced a PDF', async () => {
    const doc = generations.newDoc({
      workspaceId: new ObjectId(),
      templateId: null,
      templateRef: 'tpl_y',
      templateName: '',
      data: {},
    });
    await generations.insert(doc);
    const erased = await eraseGeneration({ generations, deliveries, objects }, doc);
    expect(erased).toMatchObject({ rowDeleted: true, deliveriesDeleted: 0, objectKey: generationObjectKey(doc) });
    expect(await generations.get(doc._id)).toBeNull();
  });

  it('a render that finishes after the erasure removes the PDF it stored', async () => {
    const workspaceId = new ObjectId();
    const { template } = await templates.create(workspaceId, 'erase-mid-render', {
      body: '<p>hi</p>',
      css: '',
      partials: {},
      variables: [],
      pdfOptions: { ...DEFAULT_PDF_OPTIONS },
    });
    await templates.publish(template._id, 1);
    const doc = generations.newDoc({
      workspaceId,
      templateId: template._id,
      templateRef: formatId('template', template._id),
      templateName: template.name,
      data: {},
    });
    await generations.insert(doc);
    const pipeline = new RenderPipeline({
      generations,
      templates,
      // The renderer is where time passes in a real render: the erasure lands during it.
      renderer: {
        async render() {
          await eraseGeneration({ generations, deliveries, objects }, doc._id);
          return { pdf: PDF };
        },
      },
      store: objects,
      events: { publishFinalEvent: async () => {} },
      maxAttempts: 3,
      leaseMs: 30_000,
    });
    let settled = '';
    await pipeline.process(
      { generationId: formatId('generation', doc._id) },
      {
        working() {},
        ack: () => void (settled = 'ack'),
        nak: () => void (settled = 'nak'),
        term: () => void (settled = 'term'),
      },
    );
    expect(settled).toBe('ack');
    expect(await generations.get(doc._id)).toBeNull();
    expect(await objects.exists(generationObjectKey(doc))).toBe(false);
  });
});
