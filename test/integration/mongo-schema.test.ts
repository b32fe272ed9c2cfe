// Indexes through numbered schema steps (src/store/schema.ts), and what a refusal does: on a
// real MongoDB (simulated: the fault proxy makes the stand-in look like one and refuses the
// index as MongoDB would) the process does not start serving and readiness names the index and
// the fix; on the stand-in its known gaps are warnings. Also `docgen migrate`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoClient } from 'mongodb';
import { buildApp } from '../../src/app/build-app.ts';
import { runMigrate } from '../../src/cli/migrate-command.ts';
import { loadConfig } from '../../src/config/config.ts';
import { silentLogger } from '../../src/ops/logger.ts';
import { COLLECTIONS, INDEX_STEPS, type IndexStep } from '../../src/store/documents.ts';
import { describeServer, migrateSchema } from '../../src/store/schema.ts';
import { freePort } from '../harness/free-port.ts';
import { startMongoFaultProxy, type MongoFaultProxy } from '../harness/mongo-fault-proxy.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { startDeps, type Deps } from '../e2e/api-stack.ts';
import { randomBytes } from 'node:crypto';

let deps: Deps;
let disguised: MongoFaultProxy;

beforeAll(async () => {
  deps = await startDeps();
  disguised = await startMongoFaultProxy({ upstreamUrl: deps.mongo.url, disguise: true });
}, 60_000);

afterAll(async () => {
  await disguised?.stop();
  await deps?.stop();
});

async function database(url: string, name = `schema_${randomBytes(4).toString('hex')}`) {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5_000 });
  await client.connect();
  return { client, db: client.db(name), name };
}

const conflict = (collection: string, index: string) => ({
  commands: ['createIndexes'],
  collection,
  match: (command: Record<string, unknown>) =>
    (command.indexes as Array<{ name?: string }>).some((i) => i.name === index),
  action: {
    kind: 'error' as const,
    code: 85,
    codeName: 'IndexOptionsConflict',
    errmsg: `An existing index has the same name as the requested index. Requested index: { name: "${index}" }`,
  },
});

function captured() {
  let text = '';
  return { write: (chunk: string) => void (text += chunk), text: () => text };
}

describe('schema steps', () => {
  it('on the stand-in: applies and records every step once, and reports its index gaps as warnings only', async () => {
    const { client, db } = await database(deps.mongo.url);
    try {
      expect(await describeServer(db)).toMatchObject({ kind: 'stand-in' });
      const first = await migrateSchema(db, { appliedBy: 'test' });
      expect(first.problems).toEqual([]);
      expect(first.newlyApplied).toEqual(INDEX_STEPS.map((s) => `${s.version} ${s.name}`));
      expect(first.applied).toEqual(
        INDEX_STEPS.map((s) => expect.objectContaining({ version: s.version, name: s.name, appliedBy: 'test' })),
      );
      expect(first.applied[0]).toMatchObject({ version: 1, name: 'initial-indexes' });
      expect(first.warnings).toContain('api_keys.hash: unique, not enforced by the stand-in');
      expect(first.warnings).toContain('rate_limits.ttl: TTL, nothing expires on the stand-in');
      expect(first.warnings).toContain('generations.outbox_events: the stand-in dropped its partial filter');
      const second = await migrateSchema(db, { appliedBy: 'another replica' });
      expect(second.newlyApplied).toEqual([]);
      expect(second.applied).toHaveLength(INDEX_STEPS.length);
    } finally {
      await client.close();
    }
  });

  it('a later step replaces an index under a new name, creating the new one and dropping the old', async () => {
    const { client, db } = await database(deps.mongo.url);
    try {
      // After the highest step (steps of parallel branches may leave a number free until merged).
      const next = Math.max(...INDEX_STEPS.map((s) => s.version)) + 1;
      const step2: IndexStep = {
        version: next,
        name: 'deliveries-by-endpoint-and-status',
        create: { [COLLECTIONS.deliveries]: [{ key: { endpointId: 1, status: 1, _id: -1 }, name: 'endpoint_status' }] },
        drop: { [COLLECTIONS.deliveries]: ['endpoint'] },
      };
      await migrateSchema(db, { appliedBy: 'v1', steps: INDEX_STEPS });
      const report = await migrateSchema(db, { appliedBy: 'v2', steps: [...INDEX_STEPS, step2] });
      expect(report.newlyApplied).toEqual([`${next} deliveries-by-endpoint-and-status`]);
      const names = (await db.collection(COLLECTIONS.deliveries).listIndexes().toArray()).map((i) => i.name);
      expect(names).toContain('endpoint_status');
      expect(names).not.toContain('endpoint');
      // Applied steps are not applied again, and the declared set no longer has the old index.
      const again = await migrateSchema(db, { appliedBy: 'v2 replica', steps: [...INDEX_STEPS, step2] });
      expect(again.newlyApplied).toEqual([]);
      expect((await db.collection(COLLECTIONS.deliveries).listIndexes().toArray()).map((i) => i.name)).not.toContain(
        'endpoint',
      );
    } finally {
      await client.close();
    }
  });

  it('on a real MongoDB a refusal is a problem naming the index and the fix, and nothing is recorded', async () => {
    const { client, db } = await database(disguised.url);
    const refusal = disguised.inject(conflict(COLLECTIONS.generations, 'workspace_created'));
    const duplicates = disguised.inject({
      commands: ['createIndexes'],
      collection: COLLECTIONS.apiKeys,
      match: (command) => (command.indexes as Array<{ name?: string }>).some((i) => i.name === 'hash'),
      action: {
        kind: 'error',
        code: 11000,
        codeName: 'DuplicateKey',
        errmsg: 'Index build failed: E11000 duplicate key error collection: docgen.api_keys index: hash dup key',
      },
    });
    try {
      expect(await describeServer(db)).toMatchObject({ kind: 'mongodb' });
      const report = await migrateSchema(db, { appliedBy: 'test' });
      expect(report.problems).toHaveLength(2);
      expect(report.problems[0]).toMatch(/^MongoDB refused index api_keys\.hash: DuplicateKey \(11000\)/);
      expect(report.problems[0]).toMatch(/Remove the duplicate documents/);
      expect(report.problems[1]).toMatch(
        /^MongoDB refused index generations\.workspace_created: IndexOptionsConflict \(85\)/,
      );
      expect(report.problems[1]).toContain('db.generations.dropIndex("workspace_created")');
      expect(report.warnings).toEqual([]);
      expect(report.applied).toEqual([]);
    } finally {
      refusal.remove();
      duplicates.remove();
      await client.close();
    }
  });

  it('an index build that outlasts the operation time-out says the server may still be building it', async () => {
    const client = new MongoClient(disguised.url, { socketTimeoutMS: 1_000, serverSelectionTimeoutMS: 5_000 });
    await client.connect();
    const slow = disguised.inject({
      commands: ['createIndexes'],
      collection: COLLECTIONS.templates,
      times: 1,
      action: { kind: 'delay', ms: 3_000 },
    });
    try {
      const report = await migrateSchema(client.db(`schema_${randomBytes(4).toString('hex')}`), { appliedBy: 'test' });
      expect(report.problems).toHaveLength(1);
      expect(report.problems[0]).toMatch(
        /^building index templates\.workspace outlasted DOCGEN_MONGODB_OPERATION_TIMEOUT_MS/,
      );
      expect(report.problems[0]).toContain('docgen migrate');
    } finally {
      slow.remove();
      await client.close();
    }
  });
});

describe('a docgen process on a MongoDB that refuses an index', () => {
  it('does not start serving: readiness names the index and the fix, until the index is fixed', async () => {
    const opsPort = await freePort();
    const refusal = disguised.inject(conflict(COLLECTIONS.generations, 'workspace_created'));
    const abort = new AbortController();
    const env = {
      ...deps.env,
      DOCGEN_MONGODB_URL: disguised.url,
      DOCGEN_MONGODB_DATABASE: `refusing_${randomBytes(4).toString('hex')}`,
      DOCGEN_OPS_ADDR: `127.0.0.1:${opsPort}`,
    };
    const starting = buildApp(loadConfig(env), { logger: silentLogger, signal: abort.signal });
    starting.catch(() => {});
    try {
      const readyz = async () => {
        const res = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
        return { status: res.status, text: await res.text() };
      };
      const refused = await pollUntil(readyz, (r) => r.text.includes('workspace_created'), {
        timeoutMs: 20_000,
        description: 'readiness to name the refused index',
      });
      expect(refused.status).toBe(503);
      expect(refused.text).toContain('MongoDB refused index generations.workspace_created: IndexOptionsConflict (85)');
      expect(refused.text).toContain('dropIndex(\\"workspace_created\\")');
      // Not serving: start-up is still waiting for the indexes.
      const stillStarting = await Promise.race([
        starting.then(() => 'started'),
        new Promise((resolve) => setTimeout(() => resolve('waiting'), 500)),
      ]);
      expect(stillStarting).toBe('waiting');

      // The operator fixes the index: the next retry (within 5 s) succeeds and the process starts.
      refusal.remove();
      const app = await starting;
      try {
        expect((await readyz()).status).toBe(200);
      } finally {
        await app.close();
      }
    } finally {
      refusal.remove();
      abort.abort();
    }
  }, 60_000);
});

describe('docgen migrate', () => {
  it('applies the steps and lists them; exits 1 naming a refused index on MongoDB', async () => {
    const name = `migrate_${randomBytes(4).toString('hex')}`;
    const out = captured();
    const err = captured();
    const code = await runMigrate([], {
      env: { DOCGEN_MONGODB_URL: deps.mongo.url, DOCGEN_MONGODB_DATABASE: name },
      stdout: out,
      stderr: err,
    });
    expect(err.text()).toBe('');
    expect(code).toBe(0);
    expect(out.text()).toMatch(/database migrate_\w+ \(embedded stand-in/);
    expect(out.text()).toMatch(/step 1 initial-indexes: applied \S+ by docgen migrate/);

    const refusal = disguised.inject(conflict(COLLECTIONS.deliveries, 'due'));
    try {
      const failing = captured();
      const refusedCode = await runMigrate([], {
        env: { DOCGEN_MONGODB_URL: disguised.url, DOCGEN_MONGODB_DATABASE: `${name}_real` },
        stdout: captured(),
        stderr: failing,
      });
      expect(refusedCode).toBe(1);
      expect(failing.text()).toContain('MongoDB refused index deliveries.due');
    } finally {
      refusal.remove();
    }
    const usage = captured();
    expect(await runMigrate(['--force'], { env: {}, stdout: captured(), stderr: usage })).toBe(2);
    expect(usage.text()).toContain('unknown argument "--force"');
  });
});
