// What the data layer may rely on, checked against the database the tests use: the MongoDB
// stand-in of `docgen dev` (CongoDB) or a real MongoDB (DOCGEN_TEST_MONGODB_URL).
//
// "relied on" tests must pass on both. "CongoDB gap" tests run only on the stand-in and pin
// what it gets wrong, so the data layer avoids it (and so an upgrade that fixes a gap shows):
//   - unique secondary indexes and TTL indexes: accepted, not enforced
//   - transactions: accepted, no isolation and no rollback (abort keeps the writes)
//   - change streams, aggregation-pipeline updates: refused
//   - arrayFilters and the positional `$` operator: silently do nothing
//   - $setOnInsert with a dotted path: stores a literal "a.b" key
//   - an upsert whose insert collides on _id: error code 1, not 11000
//   - conflicting update operators on one path, changing _id: accepted instead of refused
//   - non-ObjectId _id values: refused (with code 11000)
//   - a nested exclusion projection ({'a.b': 0}) deletes the field from the stored document
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Binary, Decimal128, Long, ObjectId, type Db, type Document } from 'mongodb';
import { connectMongo, isDuplicateKeyError, type MongoConnection } from '../../src/store/mongo.ts';
import { startMongo, type TestMongo } from '../harness/dependencies.ts';

let mongo: TestMongo;
let conn: MongoConnection;
let db: Db;

beforeAll(async () => {
  mongo = await startMongo();
  conn = await connectMongo({ url: mongo.url, database: mongo.database });
  db = conn.db;
});

afterAll(async () => {
  await conn?.close();
  await mongo?.stop();
});

const fresh = <T extends Document = Document>() => db.collection<T>(`c_${new ObjectId().toHexString()}`);
const onCongo = () => mongo.kind === 'congodb';

describe('relied on', () => {
  it('findOneAndUpdate returns the document after or before the update, null when nothing matches', async () => {
    const c = fresh();
    const _id = new ObjectId();
    await c.insertOne({ _id, status: 'PENDING', n: 1 });
    expect(
      await c.findOneAndUpdate(
        { _id, status: 'PENDING' },
        { $set: { status: 'PROCESSING' }, $inc: { n: 1 } },
        { returnDocument: 'after' },
      ),
    ).toEqual({
      _id,
      status: 'PROCESSING',
      n: 2,
    });
    expect(
      await c.findOneAndUpdate({ _id }, { $set: { status: 'COMPLETED' } }, { returnDocument: 'before' }),
    ).toMatchObject({ status: 'PROCESSING' });
    expect(
      await c.findOneAndUpdate({ _id, status: 'PENDING' }, { $set: { status: 'FAILED' } }, { returnDocument: 'after' }),
    ).toBeNull();
    expect(
      await c.findOneAndUpdate({ _id }, { $set: { x: 1 } }, { returnDocument: 'after', projection: { x: 1 } }),
    ).toEqual({ _id, x: 1 });
  });

  it('findOneAndUpdate with sort claims the oldest match', async () => {
    const c = fresh();
    await c.insertMany(
      [3, 1, 2].map((s) => ({ _id: new ObjectId(), status: 'PENDING', createdAt: new Date(s * 1000) })),
    );
    const claimed = await c.findOneAndUpdate(
      { status: 'PENDING' },
      { $set: { status: 'CLAIMED' } },
      { sort: { createdAt: 1 }, returnDocument: 'after' },
    );
    expect(claimed?.createdAt).toEqual(new Date(1000));
  });

  it('upserts with $setOnInsert (top-level fields) and $set/$inc, by _id or by other fields', async () => {
    const c = fresh();
    const _id = new ObjectId();
    const first = await c.updateOne(
      { _id },
      { $setOnInsert: { createdAt: new Date(0), status: 'NEW' }, $set: { touched: 1 }, $inc: { hits: 1 } },
      { upsert: true },
    );
    expect(first).toMatchObject({ upsertedCount: 1, upsertedId: _id, matchedCount: 0 });
    const second = await c.updateOne(
      { _id },
      { $setOnInsert: { createdAt: new Date(5), status: 'OTHER' }, $set: { touched: 2 }, $inc: { hits: 1 } },
      { upsert: true },
    );
    expect(second).toMatchObject({ upsertedCount: 0, matchedCount: 1, modifiedCount: 1 });
    expect(await c.findOne({ _id })).toEqual({ _id, createdAt: new Date(0), status: 'NEW', touched: 2, hits: 2 });

    const viaFind = await c.findOneAndUpdate(
      { _id: new ObjectId() },
      { $setOnInsert: { a: 1 } },
      { upsert: true, returnDocument: 'after' },
    );
    expect(viaFind).toMatchObject({ a: 1 });

    await c.updateOne({ key: 'k1', workspace: 'w' }, { $setOnInsert: { v: 1 } }, { upsert: true });
    await c.updateOne({ key: 'k1', workspace: 'w' }, { $setOnInsert: { v: 2 } }, { upsert: true });
    expect(await c.find({ key: 'k1' }, { projection: { _id: 0 } }).toArray()).toEqual([
      { key: 'k1', workspace: 'w', v: 1 },
    ]);
  });

  it('concurrent upserts of one _id create one document', async () => {
    const c = fresh();
    const _id = new ObjectId();
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        c.findOneAndUpdate({ _id }, { $setOnInsert: { first: i } }, { upsert: true, returnDocument: 'after' }),
      ),
    );
    // Real MongoDB may fail a racing upsert with E11000 (the caller retries); never two documents.
    for (const r of results) if (r.status === 'rejected') expect(isDuplicateKeyError(r.reason)).toBe(true);
    expect(await c.countDocuments({ _id })).toBe(1);
  });

  it('update operators: $inc, $set (dotted), $unset, $push ($each/$slice/$sort/$position), $pull, $addToSet, $pop, $min/$max, $mul, $rename, $currentDate', async () => {
    const c = fresh();
    const _id = new ObjectId();
    await c.insertOne({ _id, n: 1, arr: [1, 2], nested: { a: 1 }, gone: true, old: 'x' });
    await c.updateOne({ _id }, { $inc: { n: 5, 'stats.count': 1 }, $set: { 'nested.b': 2 }, $unset: { gone: '' } });
    await c.updateOne({ _id }, { $push: { arr: { $each: [3, 4, 5], $slice: -3 } } as never });
    await c.updateOne(
      { _id },
      { $push: { log: { $each: [{ t: 3 }, { t: 1 }, { t: 2 }], $sort: { t: 1 }, $slice: -2 } } as never },
    );
    await c.updateOne({ _id }, { $push: { arr: { $each: [0], $position: 0 } } as never });
    await c.updateOne({ _id }, { $pull: { arr: 4 } as never, $addToSet: { tags: 'a' } as never });
    await c.updateOne({ _id }, { $addToSet: { tags: 'a' } as never });
    await c.updateOne(
      { _id },
      {
        $max: { n: 100 },
        $min: { low: 3 },
        $mul: { 'stats.count': 10 },
        $rename: { old: 'renamed' },
        $currentDate: { updatedAt: true },
      },
    );
    await c.updateOne({ _id }, { $pop: { arr: -1 } as never });
    const doc = await c.findOne({ _id });
    expect(doc).toMatchObject({
      n: 100,
      stats: { count: 10 },
      nested: { a: 1, b: 2 },
      arr: [3, 5],
      log: [{ t: 2 }, { t: 3 }],
      tags: ['a'],
      low: 3,
      renamed: 'x',
    });
    expect(doc).not.toHaveProperty('gone');
    expect(doc).not.toHaveProperty('old');
    expect(doc?.updatedAt).toBeInstanceOf(Date);
  });

  it('updateOne/updateMany/replaceOne/deleteOne/deleteMany/findOneAndDelete/bulkWrite report counts', async () => {
    const c = fresh();
    const ids: [ObjectId, ObjectId, ObjectId] = [new ObjectId(), new ObjectId(), new ObjectId()];
    await c.insertMany(ids.map((_id, i) => ({ _id, i, status: 'PENDING' })));
    expect(await c.updateOne({ _id: ids[0], status: 'PENDING' }, { $set: { status: 'PENDING' } })).toMatchObject({
      matchedCount: 1,
      modifiedCount: 0,
    });
    expect(await c.updateMany({ status: 'PENDING' }, { $set: { status: 'DONE' } })).toMatchObject({
      matchedCount: 3,
      modifiedCount: 3,
    });
    await c.replaceOne({ _id: ids[0] }, { replaced: true });
    expect(await c.findOne({ _id: ids[0] })).toEqual({ _id: ids[0], replaced: true });
    expect(await c.findOneAndDelete({ _id: ids[1] })).toMatchObject({ i: 1 });
    expect(await c.deleteOne({ _id: ids[1] })).toMatchObject({ deletedCount: 0 });
    const bulk = await c.bulkWrite([
      { insertOne: { document: { _id: new ObjectId(), i: 9 } } },
      { updateOne: { filter: { i: 9 }, update: { $set: { j: 1 } } } },
      { deleteOne: { filter: { _id: ids[2] } } },
    ]);
    expect(bulk).toMatchObject({ insertedCount: 1, modifiedCount: 1, deletedCount: 1 });
    expect(await c.deleteMany({})).toMatchObject({ deletedCount: 2 });
  });

  it('queries: comparison on dates and ObjectIds, $in/$nin, $or/$and, $exists, null, $regex, $elemMatch, $size/$all, dotted paths, $expr', async () => {
    const c = fresh();
    const ids = Array.from({ length: 6 }, () => new ObjectId());
    await c.insertMany(
      ids.map((_id, i) => ({
        _id,
        i,
        at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
        kind: i % 2 ? 'odd' : 'even',
        tags: i === 0 ? ['x', 'y'] : ['x'],
        attempts: [{ ok: i > 3 }],
        meta: { depth: { v: i } },
        ...(i === 5 ? {} : { maybe: i === 4 ? null : i }),
      })),
    );
    expect(
      await c.countDocuments({
        at: { $gte: new Date(Date.UTC(2026, 0, 1, 0, 0, 2)), $lt: new Date(Date.UTC(2026, 0, 1, 0, 0, 4)) },
      }),
    ).toBe(2);
    expect(await c.countDocuments({ _id: { $gt: ids[3] } })).toBe(2);
    expect(await c.countDocuments({ _id: { $in: [ids[0]!, ids[1]!] } })).toBe(2);
    expect(await c.countDocuments({ kind: { $nin: ['odd'] } })).toBe(3);
    expect(await c.countDocuments({ $and: [{ $or: [{ i: 0 }, { i: 1 }] }, { kind: 'even' }] })).toBe(1);
    expect(await c.countDocuments({ maybe: { $exists: false } })).toBe(1);
    expect(await c.countDocuments({ maybe: null })).toBe(2);
    expect(await c.countDocuments({ kind: { $regex: '^ev' } })).toBe(3);
    expect(await c.countDocuments({ attempts: { $elemMatch: { ok: true } } })).toBe(2);
    expect(await c.countDocuments({ tags: { $size: 2 } })).toBe(1);
    expect(await c.countDocuments({ tags: { $all: ['x'] } })).toBe(6);
    expect(await c.countDocuments({ tags: 'y' })).toBe(1);
    expect(await c.countDocuments({ 'meta.depth.v': { $gte: 4 } })).toBe(2);
    expect(await c.countDocuments({ $expr: { $gt: ['$i', 3] } })).toBe(2);
  });

  it('find: sort on several keys (nulls first), skip, limit, projection, getMore past the first batch', async () => {
    const c = fresh();
    await c.insertMany(
      Array.from({ length: 250 }, (_, i) => ({ _id: new ObjectId(), i, g: i % 3, ...(i < 2 ? {} : { v: i % 7 }) })),
    );
    expect((await c.find({}).toArray()).length).toBe(250);
    expect((await c.find({}).batchSize(10).toArray()).length).toBe(250);
    expect(await c.find({}).sort({ i: 1 }).skip(10).limit(3).project({ _id: 0, i: 1 }).toArray()).toEqual([
      { i: 10 },
      { i: 11 },
      { i: 12 },
    ]);
    const byG = await c.find({}).sort({ g: -1, i: 1 }).limit(3).toArray();
    expect(byG.map((d) => [d.g, d.i])).toEqual([
      [2, 2],
      [2, 5],
      [2, 8],
    ]);
    const byV = await c.find({}).sort({ v: 1, i: 1 }).limit(3).toArray();
    expect(byV.map((d) => d.i)).toEqual([0, 1, 7]);
    expect(Object.keys((await c.findOne({ i: 0 }, { projection: { g: 0 } })) ?? {}).sort()).toEqual(['_id', 'i']);
    expect(await c.findOne({}, { sort: { i: -1 } })).toMatchObject({ i: 249 });
  });

  it('counts and aggregates: countDocuments (filter, limit), estimatedDocumentCount, distinct, $match/$group/$sort/$limit/$project/$count/$unwind/$lookup/$facet', async () => {
    const c = fresh();
    const other = fresh();
    await c.insertMany(
      Array.from({ length: 20 }, (_, i) => ({
        _id: new ObjectId(),
        i,
        ws: i % 2 ? 'a' : 'b',
        tags: ['t1', 't2'],
        at: new Date(i * 1000),
      })),
    );
    await other.insertOne({ _id: new ObjectId(), ws: 'a', name: 'Workspace A' });
    expect(await c.countDocuments({ ws: 'a' })).toBe(10);
    expect(await c.countDocuments({ ws: 'a' }, { limit: 3 })).toBe(3);
    expect(await c.estimatedDocumentCount()).toBe(20);
    expect((await c.distinct('ws')).sort()).toEqual(['a', 'b']);
    expect(
      await c
        .aggregate([
          { $match: { i: { $lt: 10 } } },
          { $group: { _id: '$ws', n: { $sum: 1 }, last: { $max: '$at' } } },
          { $sort: { _id: 1 } },
        ])
        .toArray(),
    ).toEqual([
      { _id: 'a', n: 5, last: new Date(9000) },
      { _id: 'b', n: 5, last: new Date(8000) },
    ]);
    expect(await c.aggregate([{ $match: { ws: 'a' } }, { $count: 'n' }]).toArray()).toEqual([{ n: 10 }]);
    expect(await c.aggregate([{ $sort: { i: -1 } }, { $limit: 2 }, { $project: { _id: 0, i: 1 } }]).toArray()).toEqual([
      { i: 19 },
      { i: 18 },
    ]);
    expect(
      await c.aggregate([{ $match: { i: 0 } }, { $unwind: '$tags' }, { $project: { _id: 0, tags: 1 } }]).toArray(),
    ).toEqual([{ tags: 't1' }, { tags: 't2' }]);
    const joined = await c
      .aggregate([
        { $match: { i: 1 } },
        { $lookup: { from: other.collectionName, localField: 'ws', foreignField: 'ws', as: 'workspace' } },
      ])
      .toArray();
    expect(joined[0]?.workspace).toMatchObject([{ name: 'Workspace A' }]);
    expect(await c.aggregate([{ $facet: { total: [{ $count: 'n' }] } }]).toArray()).toEqual([{ total: [{ n: 20 }] }]);
  });

  it('duplicate _id on insert is error 11000', async () => {
    const c = fresh();
    const _id = new ObjectId();
    await c.insertOne({ _id });
    await expect(c.insertOne({ _id })).rejects.toMatchObject({ code: 11000 });
    await expect(c.insertMany([{ _id: new ObjectId() }, { _id }])).rejects.toMatchObject({ code: 11000 });
    const unordered = await c
      .insertMany([{ _id }, { _id: new ObjectId(), z: 1 }], { ordered: false })
      .catch((e: unknown) => e);
    expect(isDuplicateKeyError(unordered)).toBe(true);
    expect(await c.countDocuments({ z: 1 })).toBe(1);
  });

  it('round-trips BSON types: Date, ObjectId, Binary, Long, Decimal128, null, nested arrays', async () => {
    const c = fresh();
    const doc = {
      _id: new ObjectId(),
      at: new Date('2026-11-21T08:00:00.123Z'),
      ref: new ObjectId(),
      bytes: new Binary(Buffer.from([0, 1, 2, 255])),
      big: Long.fromString('9007199254740993'),
      money: Decimal128.fromString('12.50'),
      nothing: null,
      matrix: [[1, 2], [{ k: 'v' }]],
    };
    await c.insertOne(doc);
    const back = await c.findOne({ _id: doc._id });
    expect(back?.at).toEqual(doc.at);
    expect(back?.ref).toBeInstanceOf(ObjectId);
    expect(back?.ref.equals(doc.ref)).toBe(true);
    expect(Buffer.from((back?.bytes as Binary).buffer)).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(String(back?.big)).toBe('9007199254740993');
    expect(String(back?.money)).toBe('12.50');
    expect(back?.nothing).toBeNull();
    expect(back?.matrix).toEqual([[1, 2], [{ k: 'v' }]]);
  });

  it('arrays of keyed entries (the queue counters): conditional on an entry field, $elemMatch projection, $pull by field, $pullAll of exact entries', async () => {
    const c = fresh<{ _id: ObjectId; n: number; applied: Array<{ k: string; to: string }> }>();
    const _id = new ObjectId();
    await c.insertOne({ _id, n: 0, applied: [] });
    const apply = (k: string) =>
      c.updateOne({ _id, 'applied.k': { $ne: k } }, { $inc: { n: 1 }, $push: { applied: { k, to: 'P' } } });
    expect((await apply('a')).modifiedCount).toBe(1);
    expect((await apply('a')).modifiedCount).toBe(0);
    expect((await apply('b')).modifiedCount).toBe(1);
    await apply('c');
    const entry = await c.findOne({ _id, 'applied.k': 'b' }, { projection: { applied: { $elemMatch: { k: 'b' } } } });
    // The stand-in's $elemMatch projection returns the whole array: read the entry by its key.
    expect((entry?.applied as Array<{ k: string }>).find((e) => e.k === 'b')).toEqual({ k: 'b', to: 'P' });
    await c.updateOne({ _id }, { $pull: { applied: { k: 'a' } } });
    await c.updateOne({ _id }, { $pullAll: { applied: [{ k: 'c', to: 'P' }] } });
    expect(await c.findOne({ _id })).toEqual({ _id, n: 3, applied: [{ k: 'b', to: 'P' }] });
  });

  it('createIndex, listIndexes, drop and dropDatabase work (indexes exist, whether or not enforced)', async () => {
    const c = fresh();
    await c.createIndex({ workspaceId: 1, createdAt: -1, _id: -1 }, { name: 'by_workspace_created' });
    expect((await c.listIndexes().toArray()).map((i) => i.name)).toContain('by_workspace_created');
    await c.insertOne({ _id: new ObjectId() });
    expect(await c.drop()).toBe(true);
  });
});

describe.runIf(process.env.DOCGEN_TEST_MONGODB_URL === undefined || process.env.DOCGEN_TEST_MONGODB_URL === '')(
  'CongoDB gap (avoid in the data layer)',
  () => {
    it('does not enforce unique secondary indexes', async () => {
      expect(onCongo()).toBe(true);
      const c = fresh();
      await c.createIndex({ email: 1 }, { unique: true });
      await c.insertOne({ email: 'a@example.com' });
      await c.insertOne({ email: 'a@example.com' });
      expect(await c.countDocuments({ email: 'a@example.com' })).toBe(2);
    });

    it('does not expire documents by TTL index', async () => {
      const c = fresh();
      await c.createIndex({ at: 1 }, { expireAfterSeconds: 1 });
      await c.insertOne({ at: new Date(0) });
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      expect(await c.countDocuments()).toBe(1);
    });

    it('keeps the writes of an aborted transaction', async () => {
      const c = fresh();
      const session = conn.client.startSession();
      try {
        session.startTransaction();
        await c.insertOne({ tx: 'aborted' }, { session });
        await session.abortTransaction();
      } finally {
        await session.endSession();
      }
      expect(await c.countDocuments({ tx: 'aborted' })).toBe(1);
    });

    it('refuses change streams and pipeline updates', async () => {
      const c = fresh();
      const _id = new ObjectId();
      await c.insertOne({ _id, a: 1 });
      const stream = c.watch();
      await expect(stream.tryNext()).rejects.toThrow(/changeStream/);
      await stream.close();
      await expect(c.updateOne({ _id }, [{ $set: { b: { $add: ['$a', 1] } } }])).rejects.toThrow(
        /pipeline updates are not yet supported/,
      );
    });

    it('ignores arrayFilters and the positional $ operator', async () => {
      const c = fresh();
      const _id = new ObjectId();
      const items = [
        { k: 1, v: 0 },
        { k: 2, v: 0 },
      ];
      await c.insertOne({ _id, items });
      await c.updateOne({ _id }, { $set: { 'items.$[e].v': 9 } }, { arrayFilters: [{ 'e.k': 2 }] });
      await c.updateOne({ _id, 'items.k': 1 }, { $set: { 'items.$.v': 7 } });
      expect((await c.findOne({ _id }))?.items).toEqual(items);
    });

    it('stores $setOnInsert dotted paths as literal keys', async () => {
      const c = fresh();
      const _id = new ObjectId();
      await c.updateOne({ _id }, { $setOnInsert: { 'meta.created': 1 } }, { upsert: true });
      expect(await c.findOne({ _id })).toEqual({ _id, 'meta.created': 1 });
    });

    it('reports an upsert colliding with an existing _id as code 1 (isDuplicateKeyError still says true)', async () => {
      const c = fresh();
      const _id = new ObjectId();
      await c.insertOne({ _id, status: 'DONE' });
      const error = await c
        .updateOne({ _id, status: 'PENDING' }, { $set: { status: 'PENDING' } }, { upsert: true })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 1 });
      expect(isDuplicateKeyError(error)).toBe(true);
    });

    it('applies a nested exclusion projection to the stored document (the field is gone for good)', async () => {
      const c = fresh();
      const _id = new ObjectId();
      await c.insertOne({ _id, top: 1, content: { body: 'B', keep: 'K' } });
      expect(await c.findOne({ _id }, { projection: { 'content.body': 0 } })).toEqual({
        _id,
        top: 1,
        content: { keep: 'K' },
      });
      // MongoDB would still have content.body; the stand-in has lost it. docgen projects by
      // inclusion only, which leaves the stored document alone:
      expect(await c.findOne({ _id })).toEqual({ _id, top: 1, content: { keep: 'K' } });
      await c.updateOne({ _id }, { $set: { 'content.body': 'B' } });
      expect(await c.findOne({ _id }, { projection: { top: 1, 'content.keep': 1 } })).toEqual({
        _id,
        top: 1,
        content: { keep: 'K' },
      });
      expect(await c.findOne({ _id })).toEqual({ _id, top: 1, content: { body: 'B', keep: 'K' } });
    });

    it('accepts conflicting operators on one path and changes to _id', async () => {
      const c = fresh();
      const _id = new ObjectId();
      await c.insertOne({ _id, a: 1 });
      await expect(c.updateOne({ _id }, { $set: { a: 5 }, $inc: { a: 1 } })).resolves.toMatchObject({
        modifiedCount: 1,
      });
    });

    it('refuses non-ObjectId _id values, with code 11000', async () => {
      const c = db.collection<{ _id: string }>(`c_${new ObjectId().toHexString()}`);
      await expect(c.insertOne({ _id: 'idem:abc' })).rejects.toMatchObject({ code: 11000 });
    });
  },
);
