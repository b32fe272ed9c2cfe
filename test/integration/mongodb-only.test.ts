// What only a real MongoDB does, asserted against the one named by DOCGEN_TEST_MONGODB_URL
// (CI: mongo:7 and mongo:8 replica sets). The stand-in accepts unique and TTL indexes without
// enforcing them and never uses an index, so here they are skipped with the reason printed.
// docgen's correctness does not depend on them (see docs/architecture.md); these tests pin
// that the indexes docgen creates exist, are enforced where declared, expire what they should
// and serve the hot queries, so production behaves as designed.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectId, type Db, type Document } from 'mongodb';
import { COLLECTIONS, ensureIndexes } from '../../src/store/documents.ts';
import { connectMongo, isDuplicateKeyError, type MongoConnection } from '../../src/store/mongo.ts';
import { startMongo, testSwitch, type TestMongo } from '../harness/dependencies.ts';
import { pollUntil } from '../harness/poll-until.ts';

const realMongo = testSwitch('DOCGEN_TEST_MONGODB_URL') !== undefined;
if (!realMongo) {
  console.log(
    'skipped test/integration/mongodb-only.test.ts: DOCGEN_TEST_MONGODB_URL is not set. These tests need a real MongoDB 7+ replica set ' +
      '(the embedded stand-in has no enforced unique or TTL indexes and scans instead of using indexes); CI runs them against mongo:7 and mongo:8.',
  );
}

let mongo: TestMongo;
let conn: MongoConnection;
let db: Db;

describe.runIf(realMongo)('on a real MongoDB (DOCGEN_TEST_MONGODB_URL)', () => {
  beforeAll(async () => {
    mongo = await startMongo();
    conn = await connectMongo({ url: mongo.url, database: mongo.database });
    db = conn.db;
  });

  afterAll(async () => {
    await conn?.close();
    await mongo?.stop();
  });

  it('is a replica set member of version 7 or newer, and accepts every index docgen declares', async () => {
    const hello = await db.admin().command({ hello: 1 });
    expect(hello.setName, 'docgen expects a replica set (replicaSet= in the connection string)').toEqual(
      expect.any(String),
    );
    const { version } = await db.admin().command({ buildInfo: 1 });
    expect(Number(String(version).split('.')[0])).toBeGreaterThanOrEqual(7);
    expect(await ensureIndexes(db)).toEqual([]);
    // Idempotent: a second process starting up changes nothing and refuses nothing.
    expect(await ensureIndexes(db)).toEqual([]);

    const indexes = async (collection: string) =>
      Object.fromEntries((await db.collection(collection).listIndexes().toArray()).map((i) => [i.name, i]));
    expect((await indexes(COLLECTIONS.apiKeys)).hash).toMatchObject({ key: { hash: 1 }, unique: true });
    expect((await indexes(COLLECTIONS.templateVersions)).template_version).toMatchObject({ unique: true });
    expect((await indexes(COLLECTIONS.idempotency)).ttl).toMatchObject({
      key: { expiresAt: 1 },
      expireAfterSeconds: 0,
    });
    expect((await indexes(COLLECTIONS.rateLimits)).ttl).toMatchObject({ key: { expiresAt: 1 }, expireAfterSeconds: 0 });
    expect((await indexes(COLLECTIONS.generations)).outbox_events).toMatchObject({
      partialFilterExpression: { eventPublished: false },
    });
    expect((await indexes(COLLECTIONS.workspaces)).retention).toMatchObject({ sparse: true });
  });

  it('enforces the unique indexes: one API key per hash, one template version per number', async () => {
    await ensureIndexes(db);
    const hash = randomBytes(32).toString('hex');
    const keys = db.collection(COLLECTIONS.apiKeys);
    await keys.insertOne({ _id: new ObjectId(), hash, workspaceId: new ObjectId() });
    const second = await keys
      .insertOne({ _id: new ObjectId(), hash, workspaceId: new ObjectId() })
      .catch((err: unknown) => err);
    expect(isDuplicateKeyError(second), String(second)).toBe(true);
    expect(await keys.countDocuments({ hash })).toBe(1);

    const versions = db.collection(COLLECTIONS.templateVersions);
    const templateId = new ObjectId();
    await versions.insertOne({ _id: new ObjectId(), templateId, version: 1 });
    const clash = await versions
      .insertOne({ _id: new ObjectId(), templateId, version: 1 })
      .catch((err: unknown) => err);
    expect(isDuplicateKeyError(clash), String(clash)).toBe(true);
    await versions.insertOne({ _id: new ObjectId(), templateId, version: 2 });
    expect(await versions.countDocuments({ templateId })).toBe(2);
  });

  it('expires idempotency records and idle rate-limit buckets by their TTL index', async () => {
    await ensureIndexes(db);
    // The TTL monitor runs every 60 s by default; ask for every second where allowed.
    const previous = await db
      .admin()
      .command({ setParameter: 1, ttlMonitorSleepSecs: 1 })
      .catch(() => undefined);
    try {
      const expired: Document = { _id: new ObjectId(), expiresAt: new Date(Date.now() - 1000) };
      const alive: Document = { _id: new ObjectId(), expiresAt: new Date(Date.now() + 3_600_000) };
      for (const name of [COLLECTIONS.idempotency, COLLECTIONS.rateLimits])
        await db.collection(name).insertMany([{ ...expired }, { ...alive }]);
      for (const name of [COLLECTIONS.idempotency, COLLECTIONS.rateLimits]) {
        await pollUntil(
          () => db.collection(name).countDocuments({ _id: expired._id }),
          (n) => n === 0,
          {
            timeoutMs: previous ? 20_000 : 150_000,
            intervalMs: 500,
            description: `the TTL monitor to remove an expired document from ${name}`,
          },
        );
        expect(await db.collection(name).countDocuments({ _id: alive._id })).toBe(1);
      }
    } finally {
      if (previous)
        await db
          .admin()
          .command({ setParameter: 1, ttlMonitorSleepSecs: previous.was ?? 60 })
          .catch(() => {});
    }
  }, 180_000);

  it('serves the hot queries from indexes, never a collection scan', async () => {
    await ensureIndexes(db);
    const workspaceId = new ObjectId();
    const plan = async (collection: string, filter: Document, sort?: Document) => {
      const cursor = db.collection(collection).find(filter);
      if (sort) cursor.sort(sort);
      return JSON.stringify((await cursor.explain('queryPlanner')).queryPlanner);
    };
    const cases: [string, string, Document, Document?][] = [
      [
        'generations of a workspace, newest first',
        COLLECTIONS.generations,
        { workspaceId },
        { createdAt: -1, _id: -1 },
      ],
      [
        'generations of a workspace by status',
        COLLECTIONS.generations,
        { workspaceId, status: 'COMPLETED' },
        { createdAt: -1, _id: -1 },
      ],
      [
        'expired generations (retention)',
        COLLECTIONS.generations,
        { workspaceId, status: { $in: ['COMPLETED', 'FAILED'] }, createdAt: { $lt: new Date() } },
        { createdAt: 1 },
      ],
      [
        'unpublished final events (outbox)',
        COLLECTIONS.generations,
        { eventPublished: false, updatedAt: { $lt: new Date() } },
      ],
      ['API key by hash', COLLECTIONS.apiKeys, { hash: 'x' }],
      ['deliveries of a generation', COLLECTIONS.deliveries, { generationId: new ObjectId() }, { _id: -1 }],
      [
        'overdue deliveries (sweeper)',
        COLLECTIONS.deliveries,
        { status: 'PENDING', nextAttemptAt: { $lt: new Date() } },
      ],
      ['workspaces with a retention', COLLECTIONS.workspaces, { retentionSeconds: { $gt: 0 } }],
    ];
    for (const [what, collection, filter, sort] of cases) {
      const text = await plan(collection, filter, sort);
      expect(text, what).toContain('IXSCAN');
      expect(text, what).not.toContain('COLLSCAN');
    }
  });
});
