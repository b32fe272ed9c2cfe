// `npm run bench:stand-in`: how the MongoDB stand-in of `docgen dev` (CongoDB, which answers
// a query by scanning the whole collection unless it names its documents by _id) slows down
// as a collection grows. Inserts generation-like rows (a few KB of variables each) in steps
// and times, through the MongoDB driver at each size, a get-by-id (the query behind
// GET /v1/generations/{id}, read without a scan) and a query by another field (a scan).
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
    const byId: number[] = [];
    const scan: number[] = [];
    for (let n = 0; n < GETS; n++) {
      const i = Math.floor(Math.random() * ids.length);
      let started = performance.now();
      const found = await collection.findOne({ _id: ids[i]! });
      byId.push(performance.now() - started);
      if (!found) throw new Error(`row ${ids[i]!.toHexString()} not found`);
      started = performance.now();
      const scanned = await collection.findOne({ outputKey: found.outputKey });
      scan.push(performance.now() - started);
      if (!scanned) throw new Error(`row ${String(found.outputKey)} not found by outputKey`);
    }
    const ms = (times: number[], p: number) =>
      percentile(
        [...times].sort((a, b) => a - b),
        p,
      ).toFixed(1);
    rows.push([String(size), ms(byId, 50), ms(byId, 95), ms(scan, 50), ms(scan, 95)]);
    console.error(`stand-in: ${size} rows measured`);
  }
  console.log('MongoDB stand-in (CongoDB): through the driver, one collection');
  console.log(
    formatTable(['rows', 'by _id p50 ms', 'by _id p95 ms', 'by outputKey p50 ms', 'by outputKey p95 ms'], rows),
  );
} finally {
  await client.close();
  await mongo.stop();
}
