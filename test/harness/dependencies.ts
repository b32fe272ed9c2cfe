// Real dependencies for integration tests, one set per test file (start them in beforeAll,
// stop them in afterAll). All data goes under the run directory of global-setup.ts, so the
// teardown can prove nothing outlived the run.
//
// By default each is the embedded one of `docgen dev`. Environment switches point the tests
// at real servers instead (CI does, .github/workflows/ci.yml), each test file still with data
// of its own (a database, a stream prefix, a bucket):
//   DOCGEN_TEST_MONGODB_URL    a MongoDB 7+ replica set
//   DOCGEN_TEST_NATS_URL       a NATS 2.10+ server with JetStream (tests that kill and restart
//                              NATS keep an embedded one: startNats({ control: true }))
//   DOCGEN_TEST_S3_ENDPOINT    MinIO or another S3, with DOCGEN_TEST_S3_ACCESS_KEY,
//                              DOCGEN_TEST_S3_SECRET_KEY and optionally DOCGEN_TEST_S3_REGION
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { Client as MinioClient } from 'minio';
import { MongoClient } from 'mongodb';
import { startEmbeddedMongo } from '../../src/dev/embedded-mongo.ts';
import { startEmbeddedNats, type EmbeddedNats } from '../../src/dev/embedded-nats.ts';
import { startEmbeddedS3, type EmbeddedS3 } from '../../src/dev/embedded-s3.ts';
import { isExecutable } from '../../src/render/chromium/launch-options.ts';
import { createObjectStore, type ObjectStore } from '../../src/storage/object-store.ts';
import { RUN_DIR_ENV } from './run-dir-processes.ts';

function uniqueName(label: string): string {
  return `${label}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/**
 * The run directory, or a directory under it (created). Use it for every temporary path a
 * test needs, Chromium --user-data-dir included, so leaked processes are found at teardown.
 */
export function runDir(sub?: string): string {
  let root = process.env[RUN_DIR_ENV];
  if (root === undefined || root === '') {
    try {
      root = inject('docgenTestRunDir');
    } catch {
      root = undefined;
    }
  }
  if (root === undefined || root === '') {
    throw new Error(`${RUN_DIR_ENV} is not set: run tests through vitest (vitest.config.ts globalSetup creates it).`);
  }
  const dir = sub === undefined ? root : join(root, sub);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A fresh directory under the run directory, e.g. uniqueRunDir('chromium-profile'). */
export function uniqueRunDir(label: string): string {
  return runDir(uniqueName(label));
}

// ---------------------------------------------------------------------------------------------

/** The value of a DOCGEN_TEST_* switch, or undefined when unset or empty. */
export function testSwitch(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * nats-server -js on a free port with its own store, or the server named by
 * DOCGEN_TEST_NATS_URL (each test file uses a stream prefix of its own, see dependencyEnv).
 * Tests that kill or restart NATS pass `control: true` and always get an embedded server.
 * stop() it in afterAll.
 */
export function startNats(options: { control?: boolean } = {}): Promise<EmbeddedNats> {
  const external = testSwitch('DOCGEN_TEST_NATS_URL');
  if (external !== undefined && !options.control) return Promise.resolve(externalNats(external));
  return startEmbeddedNats({ storeDir: uniqueRunDir('nats') });
}

function externalNats(url: string): EmbeddedNats {
  const parsed = new URL(url);
  const refuse = async (): Promise<never> => {
    throw new Error(
      `NATS at ${url} (DOCGEN_TEST_NATS_URL) is not this test's to stop: start it with startNats({ control: true }).`,
    );
  };
  return {
    url,
    host: parsed.hostname,
    port: Number(parsed.port || 4222),
    storeDir: '',
    pid: undefined,
    running: true,
    // The server outlives the file; its streams carry the file's own prefix.
    stop: async () => {},
    kill: refuse,
    restart: refuse,
    recentLog: () => [],
  };
}

export interface TestMongo {
  /** Connection string for the driver. */
  url: string;
  /** A database of this test file's own. */
  database: string;
  kind: 'congodb' | 'mongodb';
  /** Stops the stand-in, or drops the database on a real MongoDB. */
  stop(): Promise<void>;
}

/**
 * The MongoDB stand-in (CongoDB, in process), or the real MongoDB named by
 * DOCGEN_TEST_MONGODB_URL with a database of this file's own (dropped by stop()).
 */
export async function startMongo(): Promise<TestMongo> {
  const database = uniqueName('docgen_test').replace(/-/g, '_');
  const realUrl = testSwitch('DOCGEN_TEST_MONGODB_URL');
  if (realUrl !== undefined) {
    return {
      url: realUrl,
      database,
      kind: 'mongodb',
      async stop() {
        const client = new MongoClient(realUrl, { serverSelectionTimeoutMS: 5_000 });
        try {
          await client.db(database).dropDatabase();
        } finally {
          await client.close();
        }
      },
    };
  }
  // In memory only: no test restarts the stand-in, and its snapshot (the whole database
  // serialised without yielding, `docgen dev`'s persistence) blocks this process's event loop,
  // and with it the API and the test, for up to a quarter of the time once collections are
  // large: a 1.1 s render and a 0.65 s wait for a pull in the fair-share scenario were that.
  const mongo = await startEmbeddedMongo({});
  return { url: mongo.url, database, kind: 'congodb', stop: () => mongo.stop() };
}

export interface TestS3 extends EmbeddedS3 {
  /** A bucket created for this test file. */
  bucket: string;
}

/**
 * s3rver on a free port with a bucket of its own, or the S3 server named by
 * DOCGEN_TEST_S3_ENDPOINT with a fresh bucket (emptied and removed by stop()).
 */
export async function startS3(): Promise<TestS3> {
  const endpoint = testSwitch('DOCGEN_TEST_S3_ENDPOINT');
  if (endpoint !== undefined) return externalS3(endpoint);
  const bucket = 'docgen-test';
  const s3 = await startEmbeddedS3({ directory: uniqueRunDir('s3'), buckets: [bucket] });
  return Object.assign(s3, { bucket });
}

async function externalS3(endpoint: string): Promise<TestS3> {
  const accessKey = testSwitch('DOCGEN_TEST_S3_ACCESS_KEY');
  const secretKey = testSwitch('DOCGEN_TEST_S3_SECRET_KEY');
  if (accessKey === undefined || secretKey === undefined) {
    throw new Error('DOCGEN_TEST_S3_ENDPOINT is set: set DOCGEN_TEST_S3_ACCESS_KEY and DOCGEN_TEST_S3_SECRET_KEY too.');
  }
  const region = testSwitch('DOCGEN_TEST_S3_REGION') ?? 'us-east-1';
  const url = new URL(endpoint);
  const useSSL = url.protocol === 'https:';
  const client = new MinioClient({
    endPoint: url.hostname,
    port: url.port === '' ? (useSSL ? 443 : 80) : Number(url.port),
    useSSL,
    accessKey,
    secretKey,
    region,
    pathStyle: true,
  });
  const bucket = uniqueName('docgen-test').toLowerCase();
  await client.makeBucket(bucket, region);
  return {
    endpoint: url.origin,
    host: url.hostname,
    port: Number(url.port || (useSSL ? 443 : 80)),
    accessKey,
    secretKey,
    region,
    directory: '',
    bucket,
    async stop() {
      const keys: string[] = [];
      for await (const item of client.listObjectsV2(bucket, '', true)) if (item.name) keys.push(item.name);
      if (keys.length > 0) await client.removeObjects(bucket, keys);
      await client.removeBucket(bucket);
    },
  };
}

/** docgen's object store on the test S3's bucket (public endpoint: the same server). */
export function objectStoreOn(s3: TestS3): ObjectStore {
  return createObjectStore({
    endpoint: new URL(s3.endpoint),
    publicEndpoint: new URL(s3.endpoint),
    accessKey: s3.accessKey,
    secretKey: s3.secretKey,
    bucket: s3.bucket,
    region: s3.region,
  });
}

/** The Chromium executable renders are tested with: DOCGEN_CHROMIUM_PATH, else the one docgen uses
 * by default (Debian's chromium-headless-shell), else Debian's full browser. */
export function chromiumPath(): string {
  const candidates = [
    process.env.DOCGEN_CHROMIUM_PATH,
    '/usr/bin/chromium-headless-shell',
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
  ].filter((p): p is string => p !== undefined && p !== '');
  const found = candidates.find(isExecutable);
  if (found) return found;
  throw new Error(
    `Chromium not found (tried ${candidates.join(', ')}). Install the Debian package \`chromium-headless-shell\` (scripts/setup.sh does) or set DOCGEN_CHROMIUM_PATH.`,
  );
}

/** DOCGEN_* variables pointing a docgen process at these dependencies (merge into its env). */
export function dependencyEnv(deps: { nats?: EmbeddedNats; mongo?: TestMongo; s3?: TestS3 }): Record<string, string> {
  const env: Record<string, string> = {};
  if (deps.nats) {
    env.DOCGEN_NATS_URL = deps.nats.url;
    // A prefix of its own per test file, should several files share a server.
    env.DOCGEN_NATS_STREAM_PREFIX = `T${randomBytes(4).toString('hex').toUpperCase()}`;
  }
  if (deps.mongo) {
    env.DOCGEN_MONGODB_URL = deps.mongo.url;
    env.DOCGEN_MONGODB_DATABASE = deps.mongo.database;
  }
  if (deps.s3) {
    env.DOCGEN_S3_ENDPOINT = deps.s3.endpoint;
    env.DOCGEN_S3_PUBLIC_ENDPOINT = deps.s3.endpoint;
    env.DOCGEN_S3_ACCESS_KEY = deps.s3.accessKey;
    env.DOCGEN_S3_SECRET_KEY = deps.s3.secretKey;
    env.DOCGEN_S3_REGION = deps.s3.region;
    env.DOCGEN_S3_BUCKET = deps.s3.bucket;
  }
  return env;
}

/**
 * startMongo() and startS3() in a process of their own (dependencies-process.ts), as a
 * deployment has its database and object store elsewhere: their work does not wait behind this
 * process's event loop, nor this process's behind theirs.
 */
export async function startMongoAndS3Process(): Promise<{ mongo: TestMongo; s3: TestS3 }> {
  const script = fileURLToPath(new URL('./dependencies-process.ts', import.meta.url));
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, [RUN_DIR_ENV]: runDir() },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const first = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end >= 0) resolve(text.slice(0, end));
    });
    child.once('exit', (code) =>
      reject(new Error(`dependencies-process.ts exited (code ${code}) before it was ready`)),
    );
  });
  const started = JSON.parse(first) as { mongo: Omit<TestMongo, 'stop'>; s3: Omit<TestS3, 'stop'> };
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    })();
    return stopping;
  };
  return { mongo: { ...started.mongo, stop }, s3: { ...started.s3, stop } };
}
