// The object-store adapter (minio client) against s3rver, which checks signatures: put,
// presign on the public endpoint, plain-HTTP GET of the bytes, and refusal of tampered,
// unsigned and expired URLs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentDisposition, createObjectStore, type ObjectStore } from '../../src/storage/object-store.ts';
import { startEmbeddedS3 } from '../../src/dev/embedded-s3.ts';
import { freePort } from '../harness/free-port.ts';
import { startS3, uniqueRunDir, type TestS3 } from '../harness/dependencies.ts';

let s3: TestS3;
let store: ObjectStore;

// Minimal but real PDF bytes (the test is about bytes, not rendering).
const PDF = Buffer.concat([
  Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1'),
  Buffer.alloc(4096, 7),
  Buffer.from('\n%%EOF\n'),
]);

function storeFor(publicEndpoint: string, bucket = s3.bucket): ObjectStore {
  return createObjectStore({
    endpoint: new URL(s3.endpoint),
    publicEndpoint: new URL(publicEndpoint),
    accessKey: s3.accessKey,
    secretKey: s3.secretKey,
    bucket,
    region: s3.region,
  });
}

beforeAll(async () => {
  s3 = await startS3();
  store = storeFor(s3.endpoint);
  await store.ensureBucket();
});

afterAll(async () => {
  await s3?.stop();
});

/** Changes one character of the X-Amz-Signature query parameter. */
function tamperSignature(url: string): string {
  const u = new URL(url);
  const signature = u.searchParams.get('X-Amz-Signature')!;
  const flipped = (signature[0] === 'a' ? 'b' : 'a') + signature.slice(1);
  u.searchParams.set('X-Amz-Signature', flipped);
  return u.toString();
}

describe('object store', () => {
  it('creates its bucket idempotently', async () => {
    const other = storeFor(s3.endpoint, 'docgen-created-here');
    await other.ensureBucket();
    await other.ensureBucket();
    await other.putPdf('x.pdf', PDF, { downloadFilename: 'x.pdf' });
    expect(await other.exists('x.pdf')).toBe(true);
  });

  it('stores a PDF that a presigned URL serves over plain HTTP with its type and file name', async () => {
    const key = 'ws_1/gen_abc.pdf';
    await store.putPdf(key, PDF, { downloadFilename: 'Rechnung März.pdf' });
    expect(await store.exists(key)).toBe(true);

    const url = await store.presignGet(key, 3600);
    expect(url.startsWith(`${s3.endpoint}/${s3.bucket}/ws_1/gen_abc.pdf?`)).toBe(true);
    expect(new URL(url).searchParams.get('X-Amz-Expires')).toBe('3600');
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="Rechnung M_rz.pdf"; filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf`,
    );
    expect(Buffer.from(await response.arrayBuffer())).toEqual(PDF);
  });

  it('refuses a presigned URL whose signature, key or expiry was changed, or that is not signed', async () => {
    const key = 'ws_1/gen_secret.pdf';
    await store.putPdf(key, PDF, { downloadFilename: 'secret.pdf' });
    await store.putPdf('ws_2/gen_other.pdf', PDF, { downloadFilename: 'other.pdf' });
    const url = await store.presignGet(key, 60);
    expect((await fetch(url)).status).toBe(200);

    expect((await fetch(tamperSignature(url))).status).toBe(403);
    expect((await fetch(url.replace('ws_1/gen_secret.pdf', 'ws_2/gen_other.pdf'))).status).toBe(403);
    expect((await fetch(url.replace('X-Amz-Expires=60', 'X-Amz-Expires=600'))).status).toBe(403);
    const unsigned = new URL(url);
    unsigned.search = '';
    expect((await fetch(unsigned)).status).toBe(403);
  });

  it('refuses a presigned URL after it expired', async () => {
    const key = 'ws_1/gen_short.pdf';
    await store.putPdf(key, PDF, { downloadFilename: 'short.pdf' });
    const url = await store.presignGet(key, 1);
    expect((await fetch(url)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect((await fetch(url)).status).toBe(403);
  });

  it('signs for the public endpoint: the URL names that host and only works through it', async () => {
    // Same server, reached under another name: the signature covers the Host header.
    const publicStore = storeFor(`http://localhost:${s3.port}`);
    const key = 'ws_1/gen_public.pdf';
    await publicStore.putPdf(key, PDF, { downloadFilename: 'public.pdf' });
    const url = await publicStore.presignGet(key, 300);
    expect(new URL(url).host).toBe(`localhost:${s3.port}`);
    const viaPublicName = await fetch(url);
    expect(viaPublicName.status).toBe(200);
    expect(Buffer.from(await viaPublicName.arrayBuffer())).toEqual(PDF);
    expect((await fetch(url.replace(`localhost:${s3.port}`, `127.0.0.1:${s3.port}`))).status).toBe(403);
  });

  it('presigns without any network call, even when the public host does not resolve', async () => {
    const offline = storeFor('https://downloads.docgen.invalid');
    const url = await offline.presignGet('ws_1/gen_abc.pdf', 3600);
    expect(
      url.startsWith(`https://downloads.docgen.invalid/${s3.bucket}/ws_1/gen_abc.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256`),
    ).toBe(true);
  });

  it('keeps objects across an S3 server restart on the same directory', async () => {
    const directory = uniqueRunDir('s3-restart');
    const first = await startEmbeddedS3({ directory, buckets: ['keep'] });
    const storeOn = (endpoint: string) =>
      createObjectStore({
        endpoint: new URL(endpoint),
        accessKey: first.accessKey,
        secretKey: first.secretKey,
        bucket: 'keep',
        region: first.region,
      });
    await storeOn(first.endpoint).putPdf('a/b.pdf', PDF, { downloadFilename: 'b.pdf' });
    await first.stop();
    const second = await startEmbeddedS3({ directory, buckets: ['keep'] });
    try {
      const again = storeOn(second.endpoint);
      expect(await again.exists('a/b.pdf')).toBe(true);
      expect(Buffer.from(await (await fetch(await again.presignGet('a/b.pdf', 60))).arrayBuffer())).toEqual(PDF);
    } finally {
      await second.stop();
    }
  });

  it('reports missing objects and removes idempotently', async () => {
    const key = 'ws_1/gen_gone.pdf';
    expect(await store.exists(key)).toBe(false);
    await store.putPdf(key, PDF, { downloadFilename: 'gone.pdf' });
    await store.remove(key);
    expect(await store.exists(key)).toBe(false);
    await store.remove(key);
  });

  it('fails with UNAVAILABLE when the S3 server is down', async () => {
    const port = await freePort();
    const down = createObjectStore({
      endpoint: new URL(`http://127.0.0.1:${port}`),
      accessKey: s3.accessKey,
      secretKey: s3.secretKey,
      bucket: s3.bucket,
      region: s3.region,
      requestTimeoutMs: 2_000,
    });
    await expect(down.putPdf('a.pdf', PDF, { downloadFilename: 'a.pdf' })).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
    await expect(down.exists('a.pdf')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  it('rejects endpoints with a path and out-of-range expiry', async () => {
    expect(() => storeFor('http://127.0.0.1:9000/prefix')).toThrow(/has a path/);
    await expect(store.presignGet('a.pdf', 0)).rejects.toThrow(RangeError);
    await expect(store.presignGet('a.pdf', 604_801)).rejects.toThrow(RangeError);
  });

  it('builds RFC 6266 Content-Disposition values', () => {
    expect(contentDisposition('invoice.pdf')).toBe(`attachment; filename="invoice.pdf"; filename*=UTF-8''invoice.pdf`);
    expect(contentDisposition('a "quoted" name.pdf', 'inline')).toBe(
      `inline; filename="a _quoted_ name.pdf"; filename*=UTF-8''a%20%22quoted%22%20name.pdf`,
    );
  });
});
