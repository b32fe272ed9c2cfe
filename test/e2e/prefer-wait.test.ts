// `Prefer: wait=N` on create (docs/interface.md#waiting-for-the-result), end to end on a real
// stack (api and render roles, NATS, S3, the Mongo stand-in): the 201 carries the final
// generation when it is final within N s, else the generation as it stands after about N s;
// `Preference-Applied` says the wait happened. The same over gRPC, where an RPC deadline
// shorter than the wait is respected. Stopping the API answers waiting requests at once.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleInvoiceContent, sampleInvoiceValues } from '../../src/dev/dev-seed.ts';
import { GenerationService, GenerationStatus } from '../../src/gen/docgen/v1/generation_pb.js';
import { uniqueRunDir } from '../harness/dependencies.ts';
import { bearer, postJson, request, startApiStack, type ApiStack } from './api-stack.ts';
import { loadOpenApi } from './api-openapi.ts';
import { GREETING, SLOW, storeTemplate } from './template-fixtures.ts';

const openapi = loadOpenApi();

let stack: ApiStack;
let key: string;
let workspaceId: string;
let invoice: string;
let greeting: string;
let slow: string;
let grpc: Client<typeof GenerationService>;

beforeAll(async () => {
  stack = await startApiStack({
    env: {
      DOCGEN_ROLES: 'api,render',
      DOCGEN_RENDER_CONCURRENCY: '2',
      // The slow template loops until the Liquid time-out: PROCESSING for about this long.
      DOCGEN_LIQUID_TIMEOUT_MS: '8000',
      // Shorter than a wait: it bounds receiving a request, not answering it.
      DOCGEN_HTTP_REQUEST_TIMEOUT_MS: '3000',
    },
  });
  workspaceId = await stack.workspace('prefer wait');
  key = (await stack.key(workspaceId)).secret;
  [invoice, greeting, slow] = await Promise.all([
    storeTemplate(stack.app, workspaceId, sampleInvoiceContent(), 'Invoice'),
    storeTemplate(stack.app, workspaceId, GREETING),
    storeTemplate(stack.app, workspaceId, SLOW),
  ]);
  grpc = createClient(GenerationService, createGrpcTransport({ baseUrl: stack.baseUrl }));
  // One render first, so the browser is up before anything is timed.
  const warm = await postJson(stack.baseUrl, key, { templateId: greeting }, { Prefer: 'wait=30' });
  expect(warm.body.status, warm.text).toBe('COMPLETED');
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

async function timedCreate(body: unknown, headers: Record<string, string> = {}) {
  const started = performance.now();
  const res = await postJson(stack.baseUrl, key, body, headers);
  const ms = performance.now() - started;
  // Every answer, waited for or not, is the one docs/openapi.yaml describes.
  openapi.check({ method: 'POST', path: '/v1/generations', status: res.status, headers: res.headers, body: res.body });
  return { res, ms };
}

async function generationCount(): Promise<number> {
  const res = await request(stack.baseUrl, { path: '/v1/generations?pageSize=100', headers: bearer(key) });
  expect(res.status).toBe(200);
  return res.body.generations.length;
}

describe('Prefer: wait over REST', () => {
  it('wait=10 answers the sample invoice COMPLETED, with an outputUrl that downloads the PDF', async () => {
    const { res } = await timedCreate(
      { templateId: invoice, variables: sampleInvoiceValues() },
      { Prefer: 'wait=10', 'Idempotency-Key': 'invoice-42' },
    );
    expect(res.status, res.text).toBe(201);
    expect(res.headers['preference-applied']).toBe('wait=10');
    expect(res.body.status, res.body.error ?? '').toBe('COMPLETED');
    expect(Object.keys(res.body)).toHaveLength(11);
    const pdf = await fetch(res.body.outputUrl);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const file = path.join(uniqueRunDir('prefer-wait'), 'invoice.pdf');
    writeFileSync(file, Buffer.from(await pdf.arrayBuffer()));
    const text = execFileSync('pdftotext', ['-enc', 'UTF-8', file, '-'], { encoding: 'utf8' });
    expect(text).toContain('INV-2026-00042');
    expect(text).toContain('Müller & Söhne KG');

    // The same Idempotency-Key again: the same generation, final at once.
    const again = await timedCreate(
      { templateId: invoice, variables: sampleInvoiceValues() },
      { Prefer: 'wait=10', 'Idempotency-Key': 'invoice-42' },
    );
    expect(again.res.body.id).toBe(res.body.id);
    expect(again.res.body.status).toBe('COMPLETED');
    expect(again.res.headers['preference-applied']).toBe('wait=10');
    expect(again.ms).toBeLessThan(5_000);
  });

  it('answers a generation that fails FAILED, with its error', async () => {
    const { res } = await timedCreate({ templateId: 'tpl_0123456789abcdef01234567' }, { Prefer: 'wait=10' });
    expect(res.status, res.text).toBe(201);
    expect(res.headers['preference-applied']).toBe('wait=10');
    expect(res.body.status).toBe('FAILED');
    expect(res.body.error).toMatch(/does not exist/);
    expect(res.body.outputUrl).toBeNull();
  });

  it('a 2 s wait on a slow render answers PENDING or PROCESSING after about 2 s', async () => {
    const { res, ms } = await timedCreate({ templateId: slow }, { Prefer: 'wait=2' });
    expect(res.status, res.text).toBe(201);
    expect(res.headers['preference-applied']).toBe('wait=2');
    expect(['PENDING', 'PROCESSING']).toContain(res.body.status);
    expect(ms).toBeGreaterThanOrEqual(1_950);
    expect(ms).toBeLessThan(2_000 + 6_000); // generous: the machine is shared
  });

  it('a wait longer than the request time-out (DOCGEN_HTTP_REQUEST_TIMEOUT_MS, 3 s here) is answered', async () => {
    const { res, ms } = await timedCreate({ templateId: slow }, { Prefer: 'wait=5' });
    expect(res.status, res.text).toBe(201);
    expect(res.headers['preference-applied']).toBe('wait=5');
    expect(['PENDING', 'PROCESSING'], res.text).toContain(res.body.status);
    expect(ms, res.text).toBeGreaterThanOrEqual(4_950);
  });

  it('without the preference (or with wait=0) the answer is at once, PENDING, with no Preference-Applied', async () => {
    for (const headers of [{}, { Prefer: 'wait=0' }, { Prefer: 'respond-async' }] as Record<string, string>[]) {
      const { res } = await timedCreate({ templateId: greeting }, headers);
      expect(res.status, res.text).toBe(201);
      expect(res.body.status).toBe('PENDING');
      expect(res.headers['preference-applied']).toBeUndefined();
    }
  });

  it('a wait over 30 s is lowered to 30 (and says so)', async () => {
    const { res } = await timedCreate({ templateId: greeting, variables: { name: 'Ada' } }, { Prefer: 'wait=300' });
    expect(res.headers['preference-applied']).toBe('wait=30');
    expect(res.body.status).toBe('COMPLETED');
  });

  it('a malformed wait is a 422 naming the header, and creates nothing', async () => {
    const before = await generationCount();
    const { res } = await timedCreate({ templateId: greeting }, { Prefer: 'wait=soon' });
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'Prefer: wait must be a whole number of seconds, 0 to 30',
      details: [{ field: 'Prefer', issue: 'wait must be a whole number of seconds, 0 to 30' }],
    });
    expect(await generationCount()).toBe(before);
  });
});

describe('Prefer: wait over gRPC', () => {
  const auth = () => ({ authorization: `Bearer ${key}` });

  it('the prefer header waits for the final state; preference-applied comes back as a header', async () => {
    let applied: string | null = null;
    const res = await grpc.createGeneration(
      { templateId: greeting, variables: { name: 'over gRPC' } },
      { headers: { ...auth(), prefer: 'wait=10' }, onHeader: (h) => (applied = h.get('preference-applied')) },
    );
    expect(res.generation!.status).toBe(GenerationStatus.COMPLETED);
    expect(res.generation!.outputUrl).toMatch(/^http/);
    expect(applied).toBe('wait=10');
  });

  it('an RPC deadline shorter than the wait is kept: the answer comes before it, as it stands', async () => {
    const started = performance.now();
    const res = await grpc.createGeneration(
      { templateId: slow },
      { headers: { ...auth(), prefer: 'wait=20' }, timeoutMs: 2_500 },
    );
    expect(performance.now() - started).toBeLessThan(2_500 + 3_000);
    expect([GenerationStatus.PENDING, GenerationStatus.PROCESSING]).toContain(res.generation!.status);
  });
});

describe('stopping the API', () => {
  it('answers a waiting create at once with the state it re-reads, instead of holding the shutdown', async () => {
    const waiting = timedCreate({ templateId: slow }, { Prefer: 'wait=30' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const closing = performance.now();
    await stack.app.close();
    const closedMs = performance.now() - closing;
    const { res, ms } = await waiting;
    expect(res.status, res.text).toBe(201);
    expect(['PENDING', 'PROCESSING']).toContain(res.body.status);
    expect(res.headers['preference-applied']).toBe('wait=30');
    expect(ms).toBeLessThan(15_000);
    expect(closedMs).toBeLessThan(15_000);
  });
});
