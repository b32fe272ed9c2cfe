// The MongoDB adapter through the real driver, against the stand-in (or DOCGEN_TEST_MONGODB_URL):
// the operations docgen's data layer is built on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectId, type Collection } from 'mongodb';
import { connectMongo, isDuplicateKeyError, redactMongoUrl, type MongoConnection } from '../../src/store/mongo.ts';
import { freePort } from '../harness/free-port.ts';
import { startMongo, type TestMongo } from '../harness/dependencies.ts';

interface GenerationRow {
  _id: ObjectId;
  workspaceId: ObjectId;
  status: 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED';
  createdAt: Date;
  worker?: string;
}

let mongo: TestMongo;
let conn: MongoConnection;

beforeAll(async () => {
  mongo = await startMongo();
  conn = await connectMongo({ url: mongo.url, database: mongo.database });
});

afterAll(async () => {
  await conn?.close();
  await mongo?.stop();
});

function collection(name: string): Collection<GenerationRow> {
  return conn.db.collection<GenerationRow>(`${name}_${new ObjectId().toHexString()}`);
}

describe('connectMongo', () => {
  it('connects to the named database', async () => {
    expect(conn.db.databaseName).toBe(mongo.database);
    expect(await conn.db.command({ ping: 1 })).toMatchObject({ ok: 1 });
  });

  it('fails fast with UNAVAILABLE naming the server when nothing listens', async () => {
    const port = await freePort();
    const started = Date.now();
    const attempt = connectMongo({
      url: `mongodb://docgen:s3cret@127.0.0.1:${port}/?directConnection=true`,
      database: 'x',
      driverOptions: { serverSelectionTimeoutMS: 1_000 },
    });
    await expect(attempt).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    const error = (await attempt.catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(`127.0.0.1:${port}`);
    expect(error.message).not.toContain('s3cret');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('redacts the password of a connection string', () => {
    expect(redactMongoUrl('mongodb://user:pw@host:27017/db')).toBe('mongodb://user:***@host:27017/db');
    expect(redactMongoUrl('mongodb+srv://user:pw@cluster/db')).toBe('mongodb+srv://user:***@cluster/db');
    expect(redactMongoUrl('mongodb://host:27017')).toBe('mongodb://host:27017');
  });
});

describe('rows', () => {
  it('inserts and reads back with types intact', async () => {
    const rows = collection('insert');
    const row: GenerationRow = {
      _id: new ObjectId(),
      workspaceId: new ObjectId(),
      status: 'PENDING',
      createdAt: new Date('2026-11-21T08:00:00.123Z'),
    };
    await rows.insertOne(row);
    expect(await rows.findOne({ _id: row._id })).toEqual(row);
    expect(await rows.findOne({ workspaceId: row.workspaceId })).toEqual(row);
  });

  it('reports a second insert of the same _id as a duplicate key', async () => {
    const rows = collection('dup');
    const row: GenerationRow = {
      _id: new ObjectId(),
      workspaceId: new ObjectId(),
      status: 'PENDING',
      createdAt: new Date(),
    };
    await rows.insertOne(row);
    const error = await rows.insertOne({ ...row }).catch((e: unknown) => e);
    expect(isDuplicateKeyError(error)).toBe(true);
    const bulkError = await rows.insertMany([{ ...row, _id: new ObjectId() }, { ...row }]).catch((e: unknown) => e);
    expect(isDuplicateKeyError(bulkError)).toBe(true);
    expect(isDuplicateKeyError(new Error('Duplicate key'))).toBe(false);
  });

  it('lets exactly one conditional update win, also when they race', async () => {
    const rows = collection('claim');
    const id = new ObjectId();
    await rows.insertOne({ _id: id, workspaceId: new ObjectId(), status: 'PENDING', createdAt: new Date() });

    const first = await rows.updateOne({ _id: id, status: 'PENDING' }, { $set: { status: 'PROCESSING', worker: 'a' } });
    const second = await rows.updateOne(
      { _id: id, status: 'PENDING' },
      { $set: { status: 'PROCESSING', worker: 'b' } },
    );
    expect([first.modifiedCount, second.modifiedCount]).toEqual([1, 0]);
    expect((await rows.findOne({ _id: id }))?.worker).toBe('a');

    for (let round = 0; round < 5; round++) {
      const raceId = new ObjectId();
      await rows.insertOne({ _id: raceId, workspaceId: new ObjectId(), status: 'PENDING', createdAt: new Date() });
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          rows.findOneAndUpdate(
            { _id: raceId, status: 'PENDING' },
            { $set: { status: 'PROCESSING', worker: `w${i}` } },
            { returnDocument: 'after' },
          ),
        ),
      );
      const winners = results.filter((doc) => doc !== null);
      expect(winners).toHaveLength(1);
      expect((await rows.findOne({ _id: raceId }))?.worker).toBe(winners[0]!.worker);
    }
  });

  it('pages newest first by (createdAt desc, _id desc) with keyset pages, stable under inserts', async () => {
    const rows = collection('pages');
    const workspaceId = new ObjectId();
    const otherWorkspace = new ObjectId();
    const base = Date.parse('2026-11-21T08:00:00.000Z');
    // Several rows share a createdAt: only the _id tie-break keeps the order total.
    const all: GenerationRow[] = Array.from({ length: 47 }, (_, i) => ({
      _id: new ObjectId(),
      workspaceId: i % 5 === 0 ? otherWorkspace : workspaceId,
      status: 'PENDING',
      createdAt: new Date(base + Math.floor(i / 4) * 1000),
    }));
    await rows.insertMany(all);
    const expected = all
      .filter((r) => r.workspaceId.equals(workspaceId))
      .sort(
        (a, b) =>
          b.createdAt.getTime() - a.createdAt.getTime() || b._id.toHexString().localeCompare(a._id.toHexString()),
      )
      .map((r) => r._id.toHexString());

    const pageSize = 7;
    const seen: string[] = [];
    let after: { createdAt: Date; _id: ObjectId } | undefined;
    for (let page = 0; page < 20; page++) {
      const filter =
        after === undefined
          ? { workspaceId }
          : {
              workspaceId,
              $or: [{ createdAt: { $lt: after.createdAt } }, { createdAt: after.createdAt, _id: { $lt: after._id } }],
            };
      const batch = await rows.find(filter).sort({ createdAt: -1, _id: -1 }).limit(pageSize).toArray();
      seen.push(...batch.map((r) => r._id.toHexString()));
      if (page === 1) {
        // Newer rows arriving mid-walk land before the cursor: the walk neither repeats nor skips.
        await rows.insertOne({
          _id: new ObjectId(),
          workspaceId,
          status: 'PENDING',
          createdAt: new Date(base + 3_600_000),
        });
      }
      if (batch.length < pageSize) break;
      const last = batch[batch.length - 1]!;
      after = { createdAt: last.createdAt, _id: last._id };
    }
    expect(seen).toEqual(expected);
    expect(await rows.countDocuments({ workspaceId })).toBe(expected.length + 1);
  });
});
