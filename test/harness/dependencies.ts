// Real dependencies for integration tests, one set per test file (start them in beforeAll,
// stop them in afterAll). All data goes under the run directory of global-setup.ts, so the
// teardown can prove nothing outlived the run.
import { accessSync, constants as fsConstants, mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { inject } from 'vitest';
import { MongoClient } from 'mongodb';
import { startEmbeddedMongo } from '../../src/dev/embedded-mongo.ts';
import { startEmbeddedNats, type EmbeddedNats } from '../../src/dev/embedded-nats.ts';
import { startEmbeddedS3, type EmbeddedS3 } from '../../src/dev/embedded-s3.ts';
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

/** nats-server -js on a free port with its own store; stop() it in afterAll. */
export function startNats(): Promise<EmbeddedNats> {
  return startEmbeddedNats({ storeDir: uniqueRunDir('nats') });
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
  const realUrl = process.env.DOCGEN_TEST_MONGODB_URL;
  if (realUrl !== undefined && realUrl !== '') {
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
  const mongo = await startEmbeddedMongo({ dataDir: uniqueRunDir('congodb') });
  return { url: mongo.url, database, kind: 'congodb', stop: () => mongo.stop() };
}

export interface TestS3 extends EmbeddedS3 {
  /** A bucket created for this test file. */
  bucket: string;
}

/** s3rver on a free port with a bucket of its own. */
export async function startS3(): Promise<TestS3> {
  const bucket = 'docgen-test';
  const s3 = await startEmbeddedS3({ directory: uniqueRunDir('s3'), buckets: [bucket] });
  return Object.assign(s3, { bucket });
}

/** The Chromium executable: DOCGEN_CHROMIUM_PATH or the Debian package's. */
export function chromiumPath(): string {
  const candidates = [process.env.DOCGEN_CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
    (p): p is string => p !== undefined && p !== '',
  );
  for (const candidate of candidates) {
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  throw new Error(`Chromium not found (tried ${candidates.join(', ')}). Install the Debian package \`chromium\` or set DOCGEN_CHROMIUM_PATH.`);
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
