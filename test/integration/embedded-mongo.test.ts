// The MongoDB stand-in of `docgen dev`: data survives a stop/start with its BSON types, the
// snapshot is written shortly after a write (not only at stop), stop releases the port, and a
// command that names its documents by _id reads only those (same answers, no scan).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Binary, Long, MongoClient, ObjectId } from 'mongodb';
import {
  LARGE_COLLECTION_DOCUMENTS,
  startEmbeddedMongo,
  type EmbeddedMongo,
  type LargeCollection,
} from '../../src/dev/embedded-mongo.ts';
import { uniqueRunDir } from '../harness/dependencies.ts';
import { pollUntil } from '../harness/poll-until.ts';

const running: EmbeddedMongo[] = [];
const clients: MongoClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(running.splice(0).map((m) => m.stop()));
});

async function start(dataDir: string, port?: number) {
  const mongo = await startEmbeddedMongo({ dataDir, port });
  running.push(mongo);
  const client = new MongoClient(mongo.url, { serverSelectionTimeoutMS: 2_000 });
  clients.push(client);
  await client.connect();
  return { mongo, db: client.db('docgen') };
}

describe('embedded MongoDB stand-in', () => {
  it('keeps every document, with its types and indexes, across stop and start', async () => {
    const dataDir = uniqueRunDir('congodb-persist');
    const first = await start(dataDir);
    const workspaceId = new ObjectId();
    const rows = Array.from({ length: 30 }, (_, i) => ({
      _id: new ObjectId(),
      workspaceId,
      status: i % 2 ? 'COMPLETED' : 'PENDING',
      createdAt: new Date(Date.UTC(2026, 10, 21, 8, 0, i, 123)),
      attempts: [{ at: new Date(i * 1000), ok: i % 3 === 0 }],
      hash: new Binary(Buffer.from(`sha-${i}`)),
      counter: Long.fromString('9007199254740993'),
      // Plain numbers as the rate limiter stores them: an epoch-ms float and a large integer.
      tat: 1795256600295.5 + i,
      wholeTat: 1795256600295 + i,
    }));
    await first.db.collection('generations').insertMany(rows);
    await first.db.collection('generations').createIndex({ workspaceId: 1, createdAt: -1 }, { name: 'by_ws' });
    await first.db.collection('generations').updateOne({ _id: rows[0]!._id }, { $set: { status: 'PROCESSING' } });
    await first.db.collection('generations').deleteOne({ _id: rows[1]!._id });
    await first.db.collection('workspaces').insertOne({ _id: workspaceId, name: 'Acme' });
    const port = first.mongo.port;
    await clients.pop()!.close();
    await running.pop()!.stop();

    const second = await start(dataDir, port);
    const generations = second.db.collection('generations');
    expect(await generations.countDocuments()).toBe(29);
    expect(await generations.findOne({ _id: rows[0]!._id })).toMatchObject({ status: 'PROCESSING' });
    expect(await generations.findOne({ _id: rows[1]!._id })).toBeNull();
    const back = await generations.findOne({ _id: rows[5]!._id });
    expect(back).toEqual({ ...rows[5], counter: back?.counter, hash: back?.hash });
    expect(back?.createdAt).toBeInstanceOf(Date);
    expect(back?.workspaceId).toBeInstanceOf(ObjectId);
    expect(Buffer.from((back?.hash as Binary).buffer).toString()).toBe('sha-5');
    expect(String(back?.counter)).toBe('9007199254740993');
    // Queries that depend on the types still match after the reload.
    expect(
      await generations.countDocuments({
        workspaceId,
        createdAt: { $gte: new Date(Date.UTC(2026, 10, 21, 8, 0, 20)) },
      }),
    ).toBe(10);
    expect(await generations.countDocuments({ tat: { $lt: 1795256600295.5 + 10 } })).toBe(9);
    expect(await generations.countDocuments({ wholeTat: { $gte: 1795256600295 + 20 } })).toBe(10);
    expect(typeof back?.wholeTat).toBe('number');
    const newest = await generations.find({ workspaceId }).sort({ createdAt: -1, _id: -1 }).limit(1).toArray();
    expect(newest[0]?._id.equals(rows[29]!._id)).toBe(true);
    expect((await generations.listIndexes().toArray()).map((i) => i.name)).toContain('by_ws');
    expect(await second.db.collection('workspaces').findOne({ _id: workspaceId })).toEqual({
      _id: workspaceId,
      name: 'Acme',
    });
  });

  it('writes the snapshot shortly after a write, not only at stop', async () => {
    const dataDir = uniqueRunDir('congodb-flush');
    const { db } = await start(dataDir);
    const _id = new ObjectId();
    await db.collection('items').insertOne({ _id, marker: 'written-before-any-stop' });
    const file = join(dataDir, 'congodb.ejson');
    await pollUntil(() => existsSync(file) && readFileSync(file, 'utf8').includes('written-before-any-stop'), Boolean, {
      timeoutMs: 3_000,
      description: 'snapshot containing the new document',
    });
    expect(readFileSync(file, 'utf8')).toContain(_id.toHexString());
  });

  it('keeps data in memory only without a data directory, and frees its port on stop', async () => {
    const mongo = await startEmbeddedMongo({});
    const client = new MongoClient(mongo.url, { serverSelectionTimeoutMS: 500 });
    await client.connect();
    await client.db('x').collection('y').insertOne({ a: 1 });
    await client.close();
    await mongo.stop();
    const again = await startEmbeddedMongo({ port: mongo.port });
    running.push(again);
    const client2 = new MongoClient(again.url, { serverSelectionTimeoutMS: 2_000 });
    clients.push(client2);
    expect(await client2.db('x').collection('y').countDocuments()).toBe(0);
  });

  it('reports a collection once it reaches the size where every query not by _id takes 5 to 20 ms or more, and again at each doubling', async () => {
    const reports: LargeCollection[] = [];
    const mongo = await startEmbeddedMongo({ onLargeCollection: (info) => reports.push(info) });
    running.push(mongo);
    const client = new MongoClient(mongo.url, { serverSelectionTimeoutMS: 2_000 });
    clients.push(client);
    const rows = client.db('docgen').collection('generations');
    const insert = async (count: number) => {
      for (let done = 0; done < count; done += 1000) {
        await rows.insertMany(
          Array.from({ length: Math.min(1000, count - done) }, (_, i) => ({ _id: new ObjectId(), n: done + i })),
        );
      }
    };
    await insert(LARGE_COLLECTION_DOCUMENTS - 1);
    await client.db('docgen').collection('small').insertOne({ _id: new ObjectId() });
    expect(reports).toEqual([]);
    await insert(1);
    expect(reports).toEqual([{ database: 'docgen', collection: 'generations', documents: LARGE_COLLECTION_DOCUMENTS }]);
    await insert(LARGE_COLLECTION_DOCUMENTS - 1);
    expect(reports).toHaveLength(1);
    await insert(1);
    expect(reports.at(-1)).toEqual({
      database: 'docgen',
      collection: 'generations',
      documents: 2 * LARGE_COLLECTION_DOCUMENTS,
    });
  });

  it('answers commands that name documents by _id as a scan would, without scanning the collection', async () => {
    const dataDir = uniqueRunDir('congodb-by-id');
    const { mongo, db } = await start(dataDir);
    const rows = db.collection<{ _id: ObjectId; ref?: ObjectId; n: number; status: string; tags?: string[] }>('rows');
    const ids: ObjectId[] = [];
    for (let done = 0; done < 10_000; done += 1000) {
      const batch = Array.from({ length: 1000 }, (_, i) => {
        const _id = new ObjectId();
        return { _id, ref: _id, n: done + i, status: 'PENDING' };
      });
      await rows.insertMany(batch);
      ids.push(...batch.map((r) => r._id));
    }
    const [a, b, c] = [ids[10]!, ids[5_000]!, ids[9_990]!];

    // Reads: the filter's other conditions still apply; an $in comes back in _id order.
    expect(await rows.findOne({ _id: b })).toMatchObject({ n: 5_000 });
    expect(await rows.findOne({ _id: b, status: 'COMPLETED' })).toBeNull();
    expect(await rows.findOne({ _id: { $eq: c }, n: { $gte: 9_990 } })).toMatchObject({ n: 9_990 });
    expect(await rows.findOne({ _id: new ObjectId() })).toBeNull();
    expect((await rows.find({ _id: { $in: [c, a, b, a] } }).toArray()).map((r) => r.n)).toEqual([10, 5_000, 9_990]);
    expect(await rows.countDocuments({ _id: { $in: [a, b] }, n: { $lt: 100 } })).toBe(1);

    // Writes: conditional updates, an upsert, several statements in one command, deletes.
    expect(
      (await rows.updateOne({ _id: a, status: 'PENDING' }, { $set: { status: 'PROCESSING' } })).modifiedCount,
    ).toBe(1);
    expect((await rows.updateOne({ _id: a, status: 'PENDING' }, { $set: { status: 'DONE' } })).matchedCount).toBe(0);
    expect(
      await rows.findOneAndUpdate(
        { _id: b, tags: { $ne: 'k1' } },
        { $push: { tags: 'k1' }, $inc: { n: 1 } },
        { returnDocument: 'after' },
      ),
    ).toMatchObject({ n: 5_001, tags: ['k1'] });
    expect(await rows.findOneAndUpdate({ _id: b, tags: { $ne: 'k1' } }, { $inc: { n: 1 } })).toBeNull();
    const fresh = new ObjectId();
    await rows.updateOne({ _id: fresh }, { $set: { n: -1, status: 'NEW' } }, { upsert: true });
    await rows.bulkWrite([
      { updateOne: { filter: { _id: a }, update: { $set: { status: 'DONE' } } } },
      { updateOne: { filter: { _id: c }, update: { $set: { status: 'DONE' } } } },
    ]);
    expect((await rows.deleteMany({ _id: { $in: [c, fresh] }, status: 'DONE' })).deletedCount).toBe(1);
    expect(await rows.find({ _id: { $in: [a, b, c, fresh] } }, { projection: { _id: 0, ref: 0 } }).toArray()).toEqual([
      { n: 10, status: 'DONE' },
      { n: 5_001, status: 'PENDING', tags: ['k1'] },
      { n: -1, status: 'NEW' },
    ]);
    // The collection as a whole is untouched by the narrowing: a scan still sees every row...
    expect(await rows.countDocuments({ status: 'PENDING' })).toBe(9_998);
    // ...and so does the snapshot that a by-id write scheduled.
    await mongo.flush();
    const snapshot = readFileSync(join(dataDir, 'congodb.ejson'), 'utf8');
    expect(snapshot).toContain(ids[9_999]!.toHexString());
    expect(snapshot).toContain(fresh.toHexString());

    // Without a scan: a get by _id among 10,000 rows takes about as long as among 10 (a scan
    // of 10,000 made it seven times as long), the two taken in turns so that the machine's load
    // weighs on both alike; medians, so that a pause of the process does not decide.
    const few = db.collection<{ _id: ObjectId; n: number }>('few');
    const fewIds = Array.from({ length: 10 }, () => new ObjectId());
    await few.insertMany(fewIds.map((_id, n) => ({ _id, n })));
    const took = async (query: () => Promise<unknown>) => {
      const started = performance.now();
      await query();
      return performance.now() - started;
    };
    const amongFew: number[] = [];
    const amongMany: number[] = [];
    for (let i = 0; i < 31; i++) {
      amongFew.push(await took(() => few.findOne({ _id: fewIds[i % 10]! })));
      amongMany.push(await took(() => rows.findOne({ _id: ids[i * 300]! })));
    }
    const median = (times: number[]) => [...times].sort((x, y) => x - y)[15]!;
    console.log(
      `stand-in, get by _id (median of 31): among 10 rows ${median(amongFew).toFixed(1)} ms, among 10,000 ${median(amongMany).toFixed(1)} ms`,
    );
    expect(median(amongMany)).toBeLessThan(3 * median(amongFew));
  });
});
