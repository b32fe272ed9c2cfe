// `npm run bench:stand-in`: how the MongoDB stand-in of `docgen dev` (CongoDB, which answers
// every query by scanning the whole collection) slows down as a collection grows. Inserts
// generation-like rows (a few KB of variables each) in steps and times a get-by-id (the
// query behind GET /v1/generations/{id}) through the MongoDB driver at each size.
//
// Options (environment): BENCH_SIZES (comma-separated row counts, default
// 30,1000,2500,5000,10000,20000), BENCH_GETS (gets per size, default 40).
import { MongoClient, ObjectId } from 'mongodb';
import { startEmbeddedMongo } from '../src/dev/embedded-mongo.ts';
import { formatTable } from './lib/measure.ts';

const SIZES = (process.env.BENCH_SIZES ?? '30,1000,2500,5000,10000,20000').split(',').map(Number);
const GETS = Number(process.env.BENCH_GETS ?? 40);

function row(i: number) {
  const now = new Date();
  return {
    _id: new ObjectId(),
    workspaceId: new ObjectId('000000000000000000000001'),
    templateId: new ObjectId('000000000000000000000002'),
    templateRef: 'tpl_000000000000000000000002',
    templateName: 'invoice',
    format: 'PDF',
    status: 'COMPLETED',
    data: {
      customer: { name: `Customer ${i}`, street: 'Hauptstraße 1', city: 'Hamburg' },
      items: Array.from({ length: 8 }, (_, n) => ({ sku: `SKU-${n}`, qty: n, price: n * 9.5 })),
    },
    templateVersion: 1,
    outputKey: `workspaces/ws/generations/${i}.pdf`,
    error: null,
    createdAt: now,
    updatedAt: now,
    jobPublishedAt: now,
    attempts: 1,
    leaseOwner: null,
    leaseUntil: null,
    lastError: null,
    eventPublished: true,
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

const mongo = await startEmbeddedMongo();
const client = new MongoClient(mongo.url);
try {
  await client.connect();
  const collection = client.db('bench').collection('generations');
  const ids: ObjectId[] = [];
  const rows: string[][] = [];
  for (const size of SIZES) {
    while (ids.length < size) {
      const batch = Array.from({ length: Math.min(1000, size - ids.length) }, (_, k) => row(ids.length + k));
      await collection.insertMany(batch);
      ids.push(...batch.map((d) => d._id));
    }
    const times: number[] = [];
    for (let n = 0; n < GETS; n++) {
      const id = ids[Math.floor(Math.random() * ids.length)]!;
      const started = performance.now();
      const found = await collection.findOne({ _id: id });
      times.push(performance.now() - started);
      if (!found) throw new Error(`row ${id.toHexString()} not found`);
    }
    times.sort((a, b) => a - b);
    rows.push([String(size), percentile(times, 50).toFixed(1), percentile(times, 95).toFixed(1)]);
    console.error(`stand-in: ${size} rows measured`);
  }
  console.log('MongoDB stand-in (CongoDB): get-by-id through the driver, one collection');
  console.log(formatTable(['rows', 'p50 ms', 'p95 ms'], rows));
} finally {
  await client.close();
  await mongo.stop();
}
