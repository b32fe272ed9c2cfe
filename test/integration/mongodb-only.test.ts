// What only a real MongoDB does, asserted against the one named by DOCGEN_TEST_MONGODB_URL
// (CI: mongo:7 and mongo:8 replica sets). The stand-in accepts unique and TTL indexes without
// enforcing them, accepts a changed index silently and never uses an index, so here they are
// skipped with the reason printed. docgen's correctness does not depend on them (see
// docs/architecture.md#what-the-data-layer-relies-on); these tests pin that the indexes docgen
// creates exist, are enforced where declared, refuse a changed definition by name, expire what
// they should (and never a rate-limit bucket in use), and serve every list and sweeper query
// at a deep page with bounded index keys, so production behaves as designed.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectId, type Db, type Document } from 'mongodb';
import { MongoClient } from 'mongodb';
import { COLLECTIONS, ensureIndexes, INDEX_STEPS } from '../../src/store/documents.ts';
import { connectMongo, isDuplicateKeyError, type MongoConnection } from '../../src/store/mongo.ts';
import { RateLimitsRepository } from '../../src/store/rate-limits-repository.ts';
import { describeServer, migrateSchema } from '../../src/store/schema.ts';
import { startMongo, testSwitch, type TestMongo } from '../harness/dependencies.ts';
import { captureListQueries } from '../harness/list-queries.ts';
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
    expect(await describeServer(db)).toMatchObject({ kind: 'mongodb' });
    const report = await migrateSchema(db, { appliedBy: 'mongodb-only test' });
    expect(report).toMatchObject({ problems: [], warnings: [] });
    expect(report.applied.map((a) => a.name)).toEqual(INDEX_STEPS.map((s) => s.name));
    // Idempotent: a second process starting up changes nothing and refuses nothing.
    expect(await ensureIndexes(db)).toEqual([]);
    expect((await migrateSchema(db, { appliedBy: 'second replica' })).newlyApplied).toEqual([]);

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

  it('refuses a changed index by name (keys, options) and a unique build over duplicates, with the fix', async () => {
    const other = conn.client.db(`${mongo.database}_changed`);
    try {
      // Made by hand or another tool: same names, other definitions.
      await other.collection(COLLECTIONS.generations).createIndex({ workspaceId: 1 }, { name: 'workspace_created' });
      await other
        .collection(COLLECTIONS.idempotency)
        .createIndex({ expiresAt: 1 }, { name: 'ttl', expireAfterSeconds: 3600 });
      const hash = randomBytes(32).toString('hex');
      await other.collection(COLLECTIONS.apiKeys).insertMany([
        { _id: new ObjectId(), hash, workspaceId: new ObjectId() },
        { _id: new ObjectId(), hash, workspaceId: new ObjectId() },
      ]);
      const report = await migrateSchema(other, { appliedBy: 'mongodb-only test' });
      const problem = (index: string) => report.problems.find((p) => p.includes(`index ${index}:`)) ?? '';
      expect(problem('generations.workspace_created')).toMatch(
        /IndexKeySpecsConflict \(86\)|IndexOptionsConflict \(85\)/,
      );
      expect(problem('generations.workspace_created')).toContain('db.generations.dropIndex("workspace_created")');
      expect(problem('idempotency_keys.ttl')).toMatch(/IndexOptionsConflict \(85\)/);
      expect(problem('api_keys.hash')).toMatch(/DuplicateKey \(11000\)|duplicate key/i);
      expect(report.problems).toHaveLength(3);
      // Nothing recorded while the schema is not what this version needs.
      expect(report.applied).toEqual([]);
    } finally {
      await other.dropDatabase();
    }
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

  it('keeps a rate-limit bucket in use past its idle grace under the real TTL monitor (75 s)', async (ctx) => {
    await ensureIndexes(db);
    const previous = await db
      .admin()
      .command({ setParameter: 1, ttlMonitorSleepSecs: 1 })
      .catch(() => undefined);
    if (!previous) {
      ctx.skip(
        'ttlMonitorSleepSecs cannot be set on this server (start mongod with --setParameter ttlMonitorSleepSecs=1)',
      );
    }
    try {
      const limiter = new RateLimitsRepository(db);
      // Tolerance 5 s: a bucket idle since its first request would expire 65 s in.
      const policy = { perSecond: 2, burst: 10 };
      const key = new ObjectId();
      const bucket = db.collection(COLLECTIONS.rateLimits);
      const started = Date.now();
      let allowed = 0;
      let missing = 0;
      let lastCheck = 0;
      while (Date.now() - started < 75_000) {
        const decisions = await Promise.all([limiter.take(key, policy), limiter.take(key, policy)]);
        allowed += decisions.filter((d) => d.allowed).length;
        if (Date.now() - lastCheck > 1_000) {
          lastCheck = Date.now();
          if ((await bucket.countDocuments({})) === 0) missing++;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const seconds = (Date.now() - started) / 1000;
      expect(missing, 'times the busy bucket was found deleted').toBe(0);
      expect(allowed).toBeLessThanOrEqual(policy.burst + Math.ceil(seconds * policy.perSecond) + 1);
    } finally {
      await db
        .admin()
        .command({ setParameter: 1, ttlMonitorSleepSecs: previous?.was ?? 60 })
        .catch(() => {});
    }
  }, 120_000);

  it('serves every list and sweeper query from an index at a deep page: bounded keys, never a collection scan', async () => {
    const client = new MongoClient(mongo.url, { monitorCommands: true });
    await client.connect();
    const lists = client.db(`${mongo.database}_lists`);
    try {
      await ensureIndexes(lists);
      const queries = await captureListQueries(client, lists);
      const rows: string[] = [];
      const problems: string[] = [];
      for (const { what, command } of queries) {
        const explained = await lists.command({ explain: command, verbosity: 'executionStats' });
        const plan = JSON.stringify(explained.queryPlanner);
        const stats = explained.executionStats as {
          nReturned: number;
          totalKeysExamined: number;
          totalDocsExamined: number;
        };
        const bound = 2 * stats.nReturned + 10;
        rows.push(
          `${what}: returned ${stats.nReturned}, keys ${stats.totalKeysExamined}, docs ${stats.totalDocsExamined}`,
        );
        if (plan.includes('COLLSCAN')) problems.push(`${what}: a collection scan (${plan.slice(0, 300)})`);
        if (!/IXSCAN|IDHACK/.test(plan)) problems.push(`${what}: no index scan (${plan.slice(0, 300)})`);
        if (stats.totalKeysExamined > bound || stats.totalDocsExamined > bound)
          problems.push(
            `${what}: examined ${stats.totalKeysExamined} keys and ${stats.totalDocsExamined} documents for ${stats.nReturned} (unbounded index keys?): ${JSON.stringify(command.filter)}`,
          );
      }
      console.log(`explain of ${queries.length} list and sweeper queries:\n  ${rows.join('\n  ')}`);
      expect(queries.length).toBeGreaterThanOrEqual(25);
      expect(problems).toEqual([]);
    } finally {
      await lists.dropDatabase().catch(() => {});
      await client.close();
    }
  }, 120_000);

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
      // DeleteTemplate counts a template's generations (TemplateAdmin.delete).
      ['generations of a template', COLLECTIONS.generations, { workspaceId, templateId: new ObjectId() }],
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

describe.runIf(!realMongo)('the list and sweeper queries the explain check covers (captured on the stand-in)', () => {
  it('every one is captured as sent, at its deep page', async () => {
    const standIn = await startMongo();
    const client = new MongoClient(standIn.url, { monitorCommands: true });
    await client.connect();
    try {
      const queries = await captureListQueries(client, client.db(standIn.database));
      expect(queries.length).toBeGreaterThanOrEqual(25);
      for (const { what, command } of queries) {
        expect(command.find, what).toEqual(expect.any(String));
        expect(command.filter, what).toEqual(expect.any(Object));
      }
      // The public list's deep page carries its keyset cursor.
      const deepList = queries.find((q) => q.what.startsWith('ListGenerations, page'))!;
      expect(JSON.stringify(deepList.command.filter)).toContain('createdAt');
      expect(deepList.command.limit).toBe(11);
    } finally {
      await client.close();
      await standIn.stop();
    }
  }, 120_000);
});
