// Both client SDKs against a running docgen (test/e2e/sdk-fixture.ts): the TypeScript SDK
// (sdk/typescript) here, the Python client (sdk/python) through its own unittest suite run
// with the machine's python3; then the packages as users get them: `npm pack` installed in a
// clean folder, the Python folder installed with pip (or imported from PYTHONPATH when pip
// has no index), and each README's quick start pasted into a new project and run.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Code, ConnectError } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DocgenClient,
  DocgenError,
  GenerationTimeoutError,
  VERSION,
  WebhookVerificationError,
  type Generation,
} from '../../sdk/typescript/src/index.ts';
import { createGenerationClient, GenerationStatus, preferWait } from '../../sdk/typescript/src/connect.ts';
import { uniqueRunDir } from '../harness/dependencies.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { BATCHES_EXIST, MANY, REPO_ROOT, startSdkStack, unknownKey, type SdkStack } from './sdk-fixture.ts';

const execFileAsync = promisify(execFile);

let sdk: SdkStack;
let client: DocgenClient;

beforeAll(async () => {
  sdk = await startSdkStack();
  client = new DocgenClient({ baseUrl: sdk.fixture.baseUrl, apiKey: sdk.fixture.keys.main });
}, 180_000);

afterAll(async () => {
  await sdk?.close();
});

/** A fetch that records what went over the wire. */
function recordingFetch() {
  const calls: { method: string; url: string; status: number | 'no answer'; headers: Headers }[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const url = String(input);
    const method = init?.method ?? 'GET';
    const headers = new Headers(init?.headers);
    try {
      const res = await fetch(input, init);
      calls.push({ method, url, status: res.status, headers });
      return res;
    } catch (err) {
      calls.push({ method, url, status: 'no answer', headers });
      throw err;
    }
  };
  return { calls, fetch: wrapped };
}

function pdfText(bytes: Uint8Array): string {
  const file = path.join(uniqueRunDir('sdk-pdf'), 'out.pdf');
  writeFileSync(file, bytes);
  return execFileSync('pdftotext', ['-enc', 'UTF-8', file, '-'], { encoding: 'utf8' });
}

async function thrown<E extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => E): Promise<E> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof type)) throw new Error(`expected a ${type.name}, got ${String(err)}`);
  return err;
}

async function count(baseUrl: string, apiKey: string): Promise<number> {
  let n = 0;
  for await (const _ of new DocgenClient({ baseUrl, apiKey }).generations.list({ pageSize: 100 })) n++;
  return n;
}

describe('TypeScript SDK: generations', () => {
  it('createAndWait returns a COMPLETED generation; download gives its PDF', async () => {
    const generation = await client.generations.createAndWait({
      templateId: sdk.fixture.templates.greeting,
      variables: { name: 'TypeScript SDK' },
    });
    expect(generation.status).toBe('COMPLETED');
    expect(Object.keys(generation).sort()).toEqual(
      [
        'createdAt',
        'data',
        'error',
        'format',
        'id',
        'outputUrl',
        'status',
        'templateId',
        'templateName',
        'updatedAt',
        'workspaceId',
      ].sort(),
    );
    expect(pdfText(await client.generations.download(generation))).toContain('Hello TypeScript SDK');
    expect(pdfText(await client.generations.download(generation.id))).toContain('Hello TypeScript SDK');
  });

  it('works with a test key: the PDF says TEST, and the live key of the workspace gets 404 for it', async () => {
    const tester = new DocgenClient({ baseUrl: sdk.fixture.baseUrl, apiKey: sdk.fixture.keys.test });
    const generation = await tester.generations.createAndWait({
      templateId: sdk.fixture.templates.greeting,
      variables: { name: 'test mode' },
    });
    expect(generation.status).toBe('COMPLETED');
    const text = pdfText(await tester.generations.download(generation));
    expect(text).toContain('Hello test mode');
    expect(text).toMatch(/\bTEST\b/);
    expect((await tester.generations.get(generation.id)).id).toBe(generation.id);
    const err = await thrown(client.generations.get(generation.id), DocgenError);
    expect([err.status, err.code]).toEqual([404, 'NOT_FOUND']);
  });

  it('createAndWait returns a FAILED generation with its error (not an exception)', async () => {
    const generation = await client.generations.createAndWait({
      templateId: sdk.fixture.templates.missingVariable,
      variables: {},
    });
    expect(generation.status).toBe('FAILED');
    expect(generation.error).toMatch(/customer/);
    const err = await thrown(client.generations.download(generation), DocgenError);
    expect(err.code).toBe('GENERATION_FAILED');
  });

  it('createAndWait gives up after timeoutMs with GenerationTimeoutError, carrying the last state', async () => {
    const started = performance.now();
    const err = await thrown(
      client.generations.createAndWait({ templateId: sdk.fixture.templates.slow }, { timeoutMs: 2_500 }),
      GenerationTimeoutError,
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(2_400);
    expect(err.code).toBe('TIMEOUT');
    expect(['PENDING', 'PROCESSING']).toContain(err.generation.status);
    expect(err).toBeInstanceOf(DocgenError);
  });

  it('create with wait sends Prefer: wait and an Idempotency-Key, and can answer final', async () => {
    const recorded = recordingFetch();
    const waiting = new DocgenClient({ baseUrl: sdk.fixture.baseUrl, apiKey: sdk.fixture.keys.main, ...recorded });
    const generation = await waiting.generations.create(
      { templateId: sdk.fixture.templates.greeting, variables: { name: 'wait' } },
      { wait: 20 },
    );
    expect(generation.status).toBe('COMPLETED');
    expect(recorded.calls).toHaveLength(1);
    expect(recorded.calls[0]!.headers.get('prefer')).toBe('wait=20');
    expect(recorded.calls[0]!.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    expect(recorded.calls[0]!.headers.get('user-agent')).toBe(`docgen-client-typescript/${VERSION}`);

    // The same idempotency key twice: the same generation.
    const again = await client.generations.create(
      { templateId: sdk.fixture.templates.greeting, variables: { name: 'wait' } },
      { idempotencyKey: recorded.calls[0]!.headers.get('idempotency-key')! },
    );
    expect(again.id).toBe(generation.id);
  });

  it(`list iterates every page: all ${MANY} generations, once each`, async () => {
    for (const [pageSize, pages] of [
      [undefined, Math.ceil(MANY / 20)],
      [100, 2],
    ] as const) {
      const recorded = recordingFetch();
      const many = new DocgenClient({ baseUrl: sdk.fixture.baseUrl, apiKey: sdk.fixture.keys.many, ...recorded });
      const seen: string[] = [];
      for await (const g of many.generations.list(pageSize === undefined ? {} : { pageSize })) seen.push(g.id);
      expect(seen).toHaveLength(MANY);
      expect(new Set(seen)).toEqual(new Set(sdk.fixture.manyIds));
      expect(recorded.calls).toHaveLength(pages);
    }
    // Filters go to the server; a Date becomes RFC 3339.
    const many = new DocgenClient({ baseUrl: sdk.fixture.baseUrl, apiKey: sdk.fixture.keys.many });
    // The render role fails each of them (an unknown template) after its pull: wait for all.
    const waitStarted = Date.now();
    await pollUntil(
      async () => {
        let final = 0;
        for await (const g of many.generations.list({ status: 'FAILED' })) if (g.id) final++;
        return final;
      },
      (final) => final === MANY,
      { timeoutMs: 60_000, intervalMs: 250, description: `${MANY} generations FAILED` },
    );
    console.log(`sdk: ${MANY} generations of an unknown template FAILED ${Date.now() - waitStarted} ms into the wait`);
    let failed = 0;
    for await (const g of many.generations.list({ status: 'FAILED', createdAfter: new Date(0) })) {
      expect(g.status).toBe('FAILED');
      failed++;
    }
    expect(failed).toBe(MANY);
    // A filter the server does not know is its 422, not silently ignored.
    const typo = await thrown(many.generations.list({ templateid: 'x' } as never).next(), DocgenError);
    expect(typo.status).toBe(422);
    expect(typo.details[0]?.field).toBe('templateid');
  });

  it('download after the outputUrl expired reads the generation again for a fresh URL', async () => {
    const recorded = recordingFetch();
    const shortLived = new DocgenClient({
      baseUrl: sdk.fixture.shortTtlUrl,
      apiKey: sdk.fixture.keys.main,
      ...recorded,
    });
    const generation = await shortLived.generations.get(sdk.fixture.completedId);
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const stale = await fetch(generation.outputUrl!);
    expect(stale.status).toBe(403); // the presigned URL has expired
    await stale.body?.cancel();

    const bytes = await shortLived.generations.download(generation);
    expect(pdfText(bytes)).toContain('Hello Webhook');
    const after = recorded.calls.slice(1).map((c) => `${c.method} ${new URL(c.url).pathname} ${c.status}`);
    expect(after).toHaveLength(3);
    expect(after[0]).toMatch(/^GET \/.*\.pdf 403$/);
    expect(after[1]).toBe(`GET /v1/generations/${generation.id} 200`);
    expect(after[2]).toMatch(/^GET \/.*\.pdf 200$/);
    // The API key never goes to the object store.
    for (const c of recorded.calls.filter((c) => c.url.includes('.pdf')))
      expect(c.headers.has('authorization')).toBe(false);
  });

  it('a 429 is retried after Retry-After; each create makes exactly one generation', async () => {
    const { keys, limitedTemplate, baseUrl } = sdk.fixture;
    const before = await count(baseUrl, keys.limitedReader);
    const recorded = recordingFetch();
    const limited = new DocgenClient({ baseUrl, apiKey: keys.limited, ...recorded });
    const first = await limited.generations.create({ templateId: limitedTemplate });
    const second = await limited.generations.create({ templateId: limitedTemplate });
    expect(second.id).not.toBe(first.id);
    const statuses = recorded.calls.map((c) => c.status);
    expect(statuses).toContain(429);
    expect(statuses.filter((s) => s === 201)).toHaveLength(2);
    // Every attempt of one create carries the same Idempotency-Key.
    const keysSent = recorded.calls.slice(1).map((c) => c.headers.get('idempotency-key'));
    expect(new Set(keysSent).size).toBe(1);
    expect(await count(baseUrl, keys.limitedReader)).toBe(before + 2);

    // Without retries the 429 is a typed error that says how long to wait.
    const impatient = new DocgenClient({ baseUrl, apiKey: keys.limited, maxRetries: 0 });
    await impatient.generations.create({ templateId: limitedTemplate }).catch(() => undefined);
    const err = await thrown(impatient.generations.create({ templateId: limitedTemplate }), DocgenError);
    expect(err).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(err.retryAfter).toBeGreaterThanOrEqual(1);
    expect(err.requestId).toBeTruthy();
  });

  it('a connection lost after docgen created the generation is retried with the same key: one generation', async () => {
    const { keys, proxiedTemplate, baseUrl, proxyUrl } = sdk.fixture;
    const before = await count(baseUrl, keys.proxied);
    const recorded = recordingFetch();
    const viaProxy = new DocgenClient({ baseUrl: proxyUrl, apiKey: keys.proxied, ...recorded });
    const generation = await viaProxy.generations.create({ templateId: proxiedTemplate, variables: { name: 'once' } });
    expect(recorded.calls.map((c) => c.status)).toEqual(['no answer', 201]);
    expect(sdk.proxy.attempts.get(recorded.calls[0]!.headers.get('idempotency-key')!)).toBe(2);
    expect(await count(baseUrl, keys.proxied)).toBe(before + 1);
    expect(generation.templateId).toBe(proxiedTemplate);
  });

  it('errors are typed: 401, 403, 404 and 422 with status, code, message and request id', async () => {
    const { baseUrl, keys, templates } = sdk.fixture;
    const cases: [() => Promise<unknown>, number, string][] = [
      [
        () => new DocgenClient({ baseUrl, apiKey: unknownKey() }).generations.get('gen_0123456789abcdef01234567'),
        401,
        'API_KEY_INVALID',
      ],
      [
        () => new DocgenClient({ baseUrl, apiKey: 'not-a-key' }).generations.get('gen_0123456789abcdef01234567'),
        401,
        'UNAUTHORIZED',
      ],
      [
        () =>
          new DocgenClient({ baseUrl, apiKey: keys.readOnly }).generations.create({ templateId: templates.greeting }),
        403,
        'FORBIDDEN',
      ],
      [() => client.generations.get('gen_0123456789abcdef01234567'), 404, 'NOT_FOUND'],
      [() => client.generations.create({ templateId: '' }), 422, 'VALIDATION_ERROR'],
    ];
    for (const [call, status, code] of cases) {
      const err = await thrown(call(), DocgenError);
      expect(err, code).toMatchObject({ status, code, name: 'DocgenError' });
      expect(err.message.length).toBeGreaterThan(0);
      expect(err.requestId).toMatch(/^[0-9a-f-]{36}$/);
    }
    const invalid = await thrown(client.generations.create({ templateId: '' }), DocgenError);
    expect(invalid.details).toEqual([{ field: 'templateId', issue: 'must be at least 1 character' }]);
  });

  it('refuses arguments that would call another endpoint or a malformed wait, before any request', async () => {
    await expect(client.generations.get('')).rejects.toThrow(TypeError);
    await expect(client.generations.create({ templateId: 'x' }, { wait: 1.5 })).rejects.toThrow(RangeError);
    expect(() => new DocgenClient({ baseUrl: 'localhost:8080', apiKey: 'k' })).toThrow(/baseUrl/);
  });
});

describe('TypeScript SDK: webhooks.verify', () => {
  const delivery = () => sdk.fixture.delivery;

  it('accepts a real delivery and returns its event (Node headers or a Headers object)', () => {
    const { body, headers, secret, generationId } = delivery();
    const event = client.webhooks.verify(Buffer.from(body), headers, secret);
    expect(event).toMatchObject({ event: 'generation.completed', payload: { generationId } });
    expect(client.webhooks.verify(body, new Headers(headers), secret).event).toBe('generation.completed');
  });

  it('rejects a tampered body, a wrong secret and an old timestamp', () => {
    const { body, headers, secret, generationId } = delivery();
    const tampered = body.replace(generationId, 'gen_0123456789abcdef01234567');
    expect(() => client.webhooks.verify(tampered, headers, secret)).toThrow(WebhookVerificationError);
    expect(() => client.webhooks.verify(tampered, headers, secret)).toThrow(/does not match/);
    const otherSecret = `whsec_${Buffer.from('another endpoint secret 32 bytes').toString('base64')}`;
    expect(() => client.webhooks.verify(body, headers, otherSecret)).toThrow(/does not match/);

    // A correctly signed request whose timestamp is 10 minutes old (a replay).
    const id = headers['webhook-id']!;
    const old = Math.floor(Date.now() / 1000) - 600;
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const signature = 'v1,' + createHmac('sha256', key).update(`${id}.${old}.${body}`).digest('base64');
    const replayed = { ...headers, 'webhook-timestamp': String(old), 'webhook-signature': signature };
    expect(() => client.webhooks.verify(body, replayed, secret)).toThrow(/600 s old/);
    // The same delivery checked 10 minutes later.
    expect(() => client.webhooks.verify(body, headers, secret, { now: new Date(Date.now() + 600_000) })).toThrow(
      /old or replayed/,
    );
  });

  it('X-Service-Signature alone is accepted only with the timestamp check turned off', () => {
    const { body, headers, secret } = delivery();
    const onlyService = { 'X-Service-Signature': headers['X-Service-Signature']! };
    expect(() => client.webhooks.verify(body, onlyService, secret)).toThrow(/no webhook-timestamp/);
    expect(client.webhooks.verify(body, onlyService, secret, { toleranceSeconds: null }).event).toBe(
      'generation.completed',
    );
    expect(() => client.webhooks.verify(body + ' ', onlyService, secret, { toleranceSeconds: null })).toThrow(
      /X-Service-Signature does not match/,
    );
    expect(() => client.webhooks.verify(body, {}, secret)).toThrow(/no signature/);
  });
});

describe('TypeScript SDK: @docgen/client/connect', () => {
  it('creates over gRPC with Prefer: wait and reads back; errors are Connect codes', async () => {
    const rpc = createGenerationClient({ baseUrl: sdk.fixture.baseUrl, apiKey: sdk.fixture.keys.main });
    let applied: string | null = null;
    const created = await rpc.createGeneration(
      { templateId: sdk.fixture.templates.greeting, variables: { name: 'gRPC' } },
      { headers: preferWait(10), onHeader: (h) => (applied = h.get('preference-applied')) },
    );
    expect(created.generation!.status).toBe(GenerationStatus.COMPLETED);
    expect(applied).toBe('wait=10');
    const read = await rpc.getGeneration({ id: created.generation!.id });
    expect(read.generation!.outputUrl).toMatch(/^http/);

    const outsider = createGenerationClient({
      baseUrl: sdk.fixture.baseUrl,
      apiKey: unknownKey(),
      protocol: 'connect',
    });
    const err = await thrown(outsider.getGeneration({ id: created.generation!.id }), ConnectError);
    expect(err.code).toBe(Code.Unauthenticated);
  });
});

describe.skipIf(!BATCHES_EXIST)('TypeScript SDK: batches (issue #25)', () => {
  it('creates a batch, reads it until COMPLETED and lists its generations', async () => {
    const items = [1, 2, 3].map((n) => ({
      templateId: sdk.fixture.templates.greeting,
      variables: { name: `item ${n}` },
    }));
    const batch = await client.batches.create({ items });
    expect(batch).toMatchObject({ status: expect.stringMatching(/PENDING|PROCESSING/), total: 3, outputUrl: null });
    expect(batch.id).toMatch(/^bat_/);
    let current = batch;
    for (let i = 0; i < 60 && current.status !== 'COMPLETED'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      current = await client.batches.get(batch.id);
    }
    expect(current).toMatchObject({ status: 'COMPLETED', total: 3, completed: 3, failed: 0 });
    const generations: Generation[] = [];
    for await (const g of client.batches.generations(batch.id)) generations.push(g);
    expect(generations.map((g) => g.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    const invalid = await thrown(client.batches.create({ items: [{ templateId: '' }] }), DocgenError);
    expect(invalid.details[0]?.field).toBe('items[0].templateId');
  });
});

// ---- the Python client and the packages --------------------------------------------------

const SDK_TS = path.join(REPO_ROOT, 'sdk/typescript');
const SDK_PY = path.join(REPO_ROOT, 'sdk/python');

/** Runs a command without blocking this process (docgen answers from it); rejects with its output on failure. */
async function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execFileAsync(command, args, {
      cwd: options.cwd,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...options.env },
      timeout: options.timeoutMs ?? 120_000,
      maxBuffer: 16 * 1024 * 1024,
      encoding: 'utf8',
    });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`, {
      cause: err,
    });
  }
}

/**
 * The Node a user's machine has (the first `node` on PATH outside node_modules: Node 20 on CI),
 * so that the package is shown to work there; this repository's own Node 24 otherwise.
 */
function userNode(): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '' || dir.includes('node_modules')) continue;
    const candidate = path.join(dir, 'node');
    const version = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
    if (version.status === 0 && Number(/^v(\d+)/.exec(version.stdout)?.[1]) >= 20) return candidate;
  }
  return process.execPath;
}

/** The first fenced block of `language` under the README's "## Quick start" heading. */
function quickStart(readme: string, language: string): string {
  const section = readme.split(/^## Quick start$/m)[1]?.split(/^## /m)[0] ?? '';
  const block = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(section)?.[1];
  if (!block) throw new Error(`no ${language} block under "## Quick start"`);
  return block;
}

function newProject(label: string): string {
  const dir = uniqueRunDir(label);
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: label, private: true, type: 'module' }));
  return dir;
}

function quickStartEnv(): Record<string, string> {
  return {
    DOCGEN_URL: sdk.fixture.baseUrl,
    DOCGEN_API_KEY: sdk.fixture.keys.main,
    DOCGEN_TEMPLATE_ID: sdk.fixture.templates.invoice,
  };
}

/** The invoice the quick start wrote shows the values its snippet sent. */
function expectInvoice(dir: string, snippet: string): void {
  const text = execFileSync('pdftotext', ['-enc', 'UTF-8', path.join(dir, 'invoice.pdf'), '-'], { encoding: 'utf8' });
  const number = /invoiceNumber['"]?: ['"]([^'"]+)['"]/.exec(snippet)?.[1];
  expect(number).toBeTruthy();
  expect(text).toContain(number!);
  expect(text).toContain('Ada Lovelace');
}

describe('Python client (sdk/python)', () => {
  it('its unittest suite passes against the stack', async () => {
    const fixtureFile = path.join(uniqueRunDir('sdk-python'), 'fixture.json');
    writeFileSync(fixtureFile, JSON.stringify(sdk.fixture));
    const attemptsBefore = [...sdk.proxy.attempts.values()].filter((n) => n === 2).length;
    const { stderr } = await run('python3', ['-m', 'unittest', 'discover', '-s', 'tests', '-v'], {
      cwd: SDK_PY,
      env: { DOCGEN_SDK_FIXTURE: fixtureFile },
      timeoutMs: 240_000,
    });
    expect(stderr).toMatch(/^Ran \d+ tests in/m);
    expect(stderr).not.toMatch(/\.\.\. (FAIL|ERROR)$/m);
    // Every live test ran; only the batch test may skip, where batches are not built yet.
    expect(stderr).toMatch(BATCHES_EXIST ? /^OK$/m : /^OK \(skipped=1\)$/m);
    expect(stderr).toMatch(BATCHES_EXIST ? /test_batches .* ok$/m : /test_batches .* skipped 'batches/m);
    // The proxy cut the Python create's first attempt and saw its retry with the same key.
    expect([...sdk.proxy.attempts.values()].filter((n) => n === 2).length).toBe(attemptsBefore + 1);
  }, 300_000);
});

describe('the packages as users get them', () => {
  let project: string;

  it('npm pack gives a package that installs in a clean folder and imports on the Node users have', async () => {
    const out = uniqueRunDir('sdk-pack');
    await run('npm', ['pack', '--pack-destination', out, '--silent'], { cwd: SDK_TS });
    const tarball = readdirSync(out).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBe(`docgen-client-${VERSION}.tgz`);
    const files = execFileSync('tar', ['tzf', path.join(out, tarball!)], { encoding: 'utf8' }).split('\n');
    for (const f of ['index.js', 'index.d.ts', 'connect.js', 'connect.d.ts', 'gen/generation_pb.js'])
      expect(files).toContain(`package/dist/${f}`);
    expect(files.filter((f) => f.startsWith('package/src/'))).toEqual([]);
    const manifest = JSON.parse(readFileSync(path.join(SDK_TS, 'package.json'), 'utf8'));
    expect(manifest.version).toBe(VERSION);
    expect(manifest.dependencies ?? {}).toEqual({});

    project = newProject('sdk-consumer');
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', path.join(out, tarball!)], { cwd: project });
    const { stdout } = await run(
      userNode(),
      [
        '--input-type=module',
        '-e',
        "import * as m from '@docgen/client'; console.log(m.VERSION, typeof m.DocgenClient)",
      ],
      { cwd: project },
    );
    expect(stdout.trim()).toBe(`${VERSION} function`);

    // Its declarations type-check a consumer (strict, Node module resolution).
    writeFileSync(
      path.join(project, 'consumer.ts'),
      [
        "import { DocgenClient, DocgenError, type Generation, type WebhookEvent } from '@docgen/client';",
        "const client = new DocgenClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: 'svc_live_x' });",
        "export async function first(): Promise<Generation | undefined> { for await (const g of client.generations.list({ status: 'FAILED' })) return g; return undefined; }",
        'export const code = (e: unknown) => (e instanceof DocgenError ? e.retryAfter : undefined);',
        "export const id = (e: WebhookEvent) => (e.event === 'batch.completed' ? e.payload.batchId : e.payload.generationId);",
        '',
      ].join('\n'),
    );
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          typeRoots: [path.join(REPO_ROOT, 'node_modules/@types')],
          types: ['node'],
        },
        files: ['consumer.ts'],
      }),
    );
    await run(process.execPath, [path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', project], {
      cwd: project,
    });
  }, 180_000);

  it('the README quick start, pasted into that project and run, writes the invoice', async () => {
    const snippet = quickStart(readFileSync(path.join(SDK_TS, 'README.md'), 'utf8'), 'js');
    writeFileSync(path.join(project, 'quickstart.mjs'), snippet);
    const { stdout } = await run(userNode(), ['quickstart.mjs'], { cwd: project, env: quickStartEnv() });
    expect(stdout).toMatch(/^invoice\.pdf written \(gen_[0-9a-f]{24}\)$/m);
    expectInvoice(project, snippet);
  }, 120_000);

  it('@docgen/client/connect from the package, with its peers installed, creates over gRPC', async () => {
    const modules = path.join(project, 'node_modules');
    mkdirSync(path.join(modules, '@connectrpc'), { recursive: true });
    mkdirSync(path.join(modules, '@bufbuild'), { recursive: true });
    for (const peer of ['@connectrpc/connect', '@connectrpc/connect-node', '@bufbuild/protobuf'])
      symlinkSync(path.join(REPO_ROOT, 'node_modules', peer), path.join(modules, peer));
    writeFileSync(
      path.join(project, 'rpc.mjs'),
      [
        "import { createGenerationClient, preferWait, GenerationStatus } from '@docgen/client/connect';",
        'const rpc = createGenerationClient({ baseUrl: process.env.DOCGEN_URL, apiKey: process.env.DOCGEN_API_KEY });',
        "const { generation } = await rpc.createGeneration({ templateId: process.env.DOCGEN_TEMPLATE_ID, variables: { name: 'packaged' } }, { headers: preferWait(10) });",
        'console.log(GenerationStatus[generation.status]);',
        '',
      ].join('\n'),
    );
    const { stdout } = await run(userNode(), ['rpc.mjs'], {
      cwd: project,
      env: { ...quickStartEnv(), DOCGEN_TEMPLATE_ID: sdk.fixture.templates.greeting },
    });
    expect(stdout.trim()).toBe('COMPLETED');
  }, 120_000);

  it('the Python folder installs with pip and no index (or imports from PYTHONPATH without pip); its quick start writes the invoice', async () => {
    const hasPip = spawnSync('python3', ['-m', 'pip', '--version']).status === 0;
    let pythonPath = SDK_PY;
    if (hasPip) {
      pythonPath = uniqueRunDir('sdk-python-site');
      await run(
        'python3',
        ['-m', 'pip', 'install', '--no-index', '--no-deps', '--quiet', '--target', pythonPath, SDK_PY],
        {
          cwd: uniqueRunDir('sdk-python-pip'),
        },
      );
      expect(readdirSync(pythonPath)).toContain('docgen_client-0.1.0.dist-info');
    }
    const dir = uniqueRunDir('sdk-python-quickstart');
    const where = await run('python3', ['-c', 'import docgen_client; print(docgen_client.__file__)'], {
      cwd: dir,
      env: { PYTHONPATH: pythonPath },
    });
    expect(where.stdout.trim()).toBe(path.join(pythonPath, 'docgen_client', '__init__.py'));

    const snippet = quickStart(readFileSync(path.join(SDK_PY, 'README.md'), 'utf8'), 'python');
    writeFileSync(path.join(dir, 'quickstart.py'), snippet);
    const { stdout } = await run('python3', ['quickstart.py'], {
      cwd: dir,
      env: { ...quickStartEnv(), PYTHONPATH: pythonPath },
    });
    expect(stdout).toMatch(/^invoice\.pdf written \(gen_[0-9a-f]{24}\)$/m);
    expectInvoice(dir, snippet);
  }, 180_000);
});
