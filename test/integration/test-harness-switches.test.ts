// The harness's switches to real services (test/harness/dependencies.ts), exercised here
// against embedded servers standing in for the real ones: DOCGEN_TEST_S3_ENDPOINT gives each
// test file a fresh bucket on that server and removes it afterwards; DOCGEN_TEST_NATS_URL
// hands out that server (never stopped or killed by a test), except to tests that need
// control of NATS, which get an embedded one.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client as MinioClient } from 'minio';
import { startEmbeddedNats, type EmbeddedNats } from '../../src/dev/embedded-nats.ts';
import { startEmbeddedS3, type EmbeddedS3 } from '../../src/dev/embedded-s3.ts';
import { createObjectStore } from '../../src/storage/object-store.ts';
import { startNats, startS3, uniqueRunDir } from '../harness/dependencies.ts';

const SWITCHES = [
  'DOCGEN_TEST_S3_ENDPOINT',
  'DOCGEN_TEST_S3_ACCESS_KEY',
  'DOCGEN_TEST_S3_SECRET_KEY',
  'DOCGEN_TEST_S3_REGION',
  'DOCGEN_TEST_NATS_URL',
];
const saved = Object.fromEntries(SWITCHES.map((n) => [n, process.env[n]]));
let s3: EmbeddedS3;
let nats: EmbeddedNats;

beforeAll(async () => {
  [s3, nats] = await Promise.all([
    startEmbeddedS3({ directory: uniqueRunDir('s3-switch') }),
    startEmbeddedNats({ storeDir: uniqueRunDir('nats-switch') }),
  ]);
});

afterEach(() => {
  for (const n of SWITCHES) {
    if (saved[n] === undefined) delete process.env[n];
    else process.env[n] = saved[n];
  }
});

afterAll(async () => {
  await Promise.all([s3?.stop(), nats?.stop()]);
});

describe('DOCGEN_TEST_S3_ENDPOINT', () => {
  it('gives the file a bucket of its own on that server and removes it, objects and all, at stop', async () => {
    Object.assign(process.env, {
      DOCGEN_TEST_S3_ENDPOINT: s3.endpoint,
      DOCGEN_TEST_S3_ACCESS_KEY: s3.accessKey,
      DOCGEN_TEST_S3_SECRET_KEY: s3.secretKey,
      DOCGEN_TEST_S3_REGION: s3.region,
    });
    const [a, b] = await Promise.all([startS3(), startS3()]);
    expect(a.endpoint).toBe(s3.endpoint);
    expect(a.bucket).toMatch(/^docgen-test-[a-z0-9-]+$/);
    expect(a.bucket).not.toBe(b.bucket);
    const store = createObjectStore({
      endpoint: new URL(a.endpoint),
      accessKey: a.accessKey,
      secretKey: a.secretKey,
      bucket: a.bucket,
      region: a.region,
    });
    await store.putPdf('workspaces/w/generations/g.pdf', Buffer.from('%PDF-1.7'), { downloadFilename: 'g.pdf' });
    expect(await store.exists('workspaces/w/generations/g.pdf')).toBe(true);

    const admin = new MinioClient({
      endPoint: s3.host,
      port: s3.port,
      useSSL: false,
      accessKey: s3.accessKey,
      secretKey: s3.secretKey,
      region: s3.region,
      pathStyle: true,
    });
    await a.stop();
    expect(await admin.bucketExists(a.bucket)).toBe(false);
    expect(await admin.bucketExists(b.bucket)).toBe(true);
    await b.stop();
  });

  it('says what is missing when only the endpoint is set', async () => {
    process.env.DOCGEN_TEST_S3_ENDPOINT = s3.endpoint;
    delete process.env.DOCGEN_TEST_S3_ACCESS_KEY;
    await expect(startS3()).rejects.toThrow(/set DOCGEN_TEST_S3_ACCESS_KEY and DOCGEN_TEST_S3_SECRET_KEY too/);
  });
});

describe('DOCGEN_TEST_NATS_URL', () => {
  it('hands out that server, which a test cannot stop or kill; tests that need control get an embedded one', async () => {
    process.env.DOCGEN_TEST_NATS_URL = nats.url;
    const external = await startNats();
    expect(external.url).toBe(nats.url);
    await expect(external.kill()).rejects.toThrow(/startNats\(\{ control: true \}\)/);
    await external.stop();
    expect(nats.running).toBe(true);

    const own = await startNats({ control: true });
    try {
      expect(own.url).not.toBe(nats.url);
      expect(own.pid).toEqual(expect.any(Number));
    } finally {
      await own.stop();
    }
  });
});
