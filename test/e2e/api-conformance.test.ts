// Conformance of the public API with docs/interface.md, on real parts (nats-
// server, CongoDB or DOCGEN_TEST_MONGODB_URL, s3rver, docgen's api role on loopback).
// The same table of cases runs over REST, Connect, gRPC and gRPC-web; every REST answer is
// also checked against docs/openapi.yaml (status documented, headers, body schema).
import { randomBytes } from 'node:crypto';
import http2 from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, createClient, type CallOptions, type Client, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { ObjectId } from 'mongodb';
import { parseId } from '../../src/domain/ids.ts';
import { WorkspaceService } from '../../src/gen/docgen/admin/v1/workspace_pb.js';
import {
  DocumentFormat,
  GenerationService,
  GenerationStatus,
  type Generation,
} from '../../src/gen/docgen/v1/generation_pb.js';
import { loadOpenApi, type OpenApi } from './api-openapi.ts';
import { bearer, publishedTemplate, request, startApiStack, type ApiStack, type HttpAnswer } from './api-stack.ts';

// ---- the tables of docs/interface.md#errors ------------------------------------------------------------

const HTTP_STATUS: Record<string, number> = {
  UNAUTHORIZED: 401,
  API_KEY_INVALID: 401,
  API_KEY_REVOKED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_ERROR: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
};

const RPC_CODE: Record<string, Code> = {
  UNAUTHORIZED: Code.Unauthenticated,
  API_KEY_INVALID: Code.Unauthenticated,
  API_KEY_REVOKED: Code.Unauthenticated,
  FORBIDDEN: Code.PermissionDenied,
  NOT_FOUND: Code.NotFound,
  VALIDATION_ERROR: Code.InvalidArgument,
  IDEMPOTENCY_KEY_REUSED: Code.InvalidArgument,
  RATE_LIMITED: Code.ResourceExhausted,
};

const ELEVEN = [
  'id',
  'workspaceId',
  'templateId',
  'templateName',
  'format',
  'status',
  'data',
  'outputUrl',
  'error',
  'createdAt',
  'updatedAt',
];
const MS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// ---- one client interface over four transports -------------------------------------------

interface GenerationJson {
  id: string;
  workspaceId: string;
  templateId: string;
  templateName: string;
  format: string;
  status: string;
  data: Record<string, unknown>;
  outputUrl: string | null;
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

interface Page {
  generations: GenerationJson[];
  nextPageToken: string | null;
}

type Outcome<T> =
  | { ok: true; value: T; header(name: string): string | undefined }
  | {
      ok: false;
      code: string | undefined;
      message: string;
      details: { field: string; issue: string }[];
      header(name: string): string | undefined;
    };

interface CreateBody {
  templateId: string;
  variables?: Record<string, unknown>;
  /** 'pdf' or something invalid (REST: that string; RPC: an unknown enum value). */
  format?: string;
}

interface ListQuery {
  pageSize?: number;
  pageToken?: string;
  status?: string;
  templateId?: string;
  createdAfter?: string;
  createdBefore?: string;
}

interface ApiClient {
  name: string;
  create(
    auth: string | undefined,
    body: CreateBody,
    headers?: Record<string, string>,
  ): Promise<Outcome<GenerationJson>>;
  get(auth: string | undefined, id: string): Promise<Outcome<GenerationJson>>;
  list(auth: string | undefined, query?: ListQuery): Promise<Outcome<Page>>;
}

let stack: ApiStack;
let openapi: OpenApi;

/** One REST call; every answer is checked against the OpenAPI description and the tables. */
async function rest(
  method: string,
  path: string,
  options: { auth?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.auth !== undefined) headers.Authorization = options.auth;
  if (options.body !== undefined) headers['Content-Type'] ??= 'application/json';
  const answer = await request(stack.baseUrl, { method, path, headers, body: options.body });
  openapi.check({ method, path, status: answer.status, headers: answer.headers, body: answer.body });
  expect(answer.headers['x-request-id'], 'X-Request-Id on every response').toBeTruthy();
  for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
    expect(answer.headers[name], `${name} on every response (${method} ${path} ${answer.status})`).toMatch(/^\d+$/);
  }
  if (answer.status >= 400 && method !== 'HEAD') {
    const code = answer.body?.error?.code as string;
    expect(HTTP_STATUS[code], `status of ${code}`).toBe(answer.status);
  }
  if (answer.status === 429) expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  return answer;
}

function restOutcome<T>(answer: HttpAnswer, success: number): Outcome<T> {
  const header = (name: string) => {
    const v = answer.headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  };
  if (answer.status === success) return { ok: true, value: answer.body as T, header };
  return {
    ok: false,
    code: answer.body?.error?.code,
    message: answer.body?.error?.message ?? '',
    details: answer.body?.error?.details ?? [],
    header,
  };
}

function restClient(): ApiClient {
  return {
    name: 'REST',
    async create(auth, body, headers) {
      const json: Record<string, unknown> = { templateId: body.templateId };
      if (body.variables !== undefined) json.variables = body.variables;
      if (body.format !== undefined) json.format = body.format;
      return restOutcome(await rest('POST', '/v1/generations', { auth, body: JSON.stringify(json), headers }), 201);
    },
    async get(auth, id) {
      return restOutcome(await rest('GET', `/v1/generations/${encodeURIComponent(id)}`, { auth }), 200);
    },
    async list(auth, query = {}) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
      const qs = params.toString();
      return restOutcome(await rest('GET', `/v1/generations${qs ? `?${qs}` : ''}`, { auth }), 200);
    },
  };
}

const STATUS_NAMES: Record<number, string> = {
  [GenerationStatus.PENDING]: 'PENDING',
  [GenerationStatus.PROCESSING]: 'PROCESSING',
  [GenerationStatus.COMPLETED]: 'COMPLETED',
  [GenerationStatus.FAILED]: 'FAILED',
};
const STATUS_VALUES: Record<string, GenerationStatus> = {
  PENDING: GenerationStatus.PENDING,
  PROCESSING: GenerationStatus.PROCESSING,
  COMPLETED: GenerationStatus.COMPLETED,
  FAILED: GenerationStatus.FAILED,
};

/** The proto Generation in the REST shape, checking the proto side's own invariants. */
function fromProto(g: Generation | undefined): GenerationJson {
  expect(g, 'generation in the response').toBeDefined();
  const m = g!;
  expect(m.format).toBe(DocumentFormat.PDF);
  expect(m.createdAt && m.updatedAt, 'timestamps set').toBeTruthy();
  return {
    id: m.id,
    workspaceId: m.workspaceId,
    templateId: m.templateId,
    templateName: m.templateName,
    format: m.format === DocumentFormat.PDF ? 'PDF' : String(m.format),
    status: STATUS_NAMES[m.status] ?? `unknown ${m.status}`,
    data: (m.data ?? {}) as Record<string, unknown>,
    outputUrl: m.outputUrl ?? null,
    error: m.error ?? null,
    createdAt: timestampDate(m.createdAt!).toISOString(),
    updatedAt: timestampDate(m.updatedAt!).toISOString(),
  };
}

async function rpc<T>(
  call: (options: CallOptions) => Promise<T>,
  auth: string | undefined,
  extra: Record<string, string> = {},
): Promise<Outcome<T>> {
  const received = new Headers();
  const headers: Record<string, string> = { ...extra };
  if (auth !== undefined) headers.authorization = auth;
  try {
    const value = await call({
      headers,
      onHeader: (h) => h.forEach((v, k) => received.set(k, v)),
      onTrailer: (h) => h.forEach((v, k) => received.set(k, v)),
    });
    return { ok: true, value, header: (name) => received.get(name) ?? undefined };
  } catch (err) {
    const e = ConnectError.from(err);
    const code = e.metadata.get('docgen-error-code') ?? undefined;
    if (code !== undefined) expect(e.code, `RPC code of ${code}`).toBe(RPC_CODE[code]);
    if (code === 'RATE_LIMITED') expect(Number(e.metadata.get('retry-after'))).toBeGreaterThanOrEqual(1);
    return { ok: false, code, message: e.rawMessage, details: [], header: (name) => e.metadata.get(name) ?? undefined };
  }
}

function rpcClient(name: string, transport: Transport): ApiClient {
  const client: Client<typeof GenerationService> = createClient(GenerationService, transport);
  return {
    name,
    async create(auth, body, headers) {
      const out = await rpc(
        (o) =>
          client.createGeneration(
            {
              templateId: body.templateId,
              variables: body.variables as never,
              format:
                body.format === undefined
                  ? DocumentFormat.UNSPECIFIED
                  : body.format === 'pdf'
                    ? DocumentFormat.PDF
                    : (7 as DocumentFormat),
            },
            o,
          ),
        auth,
        headers,
      );
      return out.ok ? { ...out, value: fromProto(out.value.generation) } : out;
    },
    async get(auth, id) {
      const out = await rpc((o) => client.getGeneration({ id }, o), auth);
      return out.ok ? { ...out, value: fromProto(out.value.generation) } : out;
    },
    async list(auth, query = {}) {
      const out = await rpc(
        (o) =>
          client.listGenerations(
            {
              pageSize: query.pageSize ?? 0,
              pageToken: query.pageToken ?? '',
              status:
                query.status === undefined
                  ? GenerationStatus.UNSPECIFIED
                  : (STATUS_VALUES[query.status] ?? (99 as GenerationStatus)),
              templateId: query.templateId ?? '',
              createdAfter: query.createdAfter ? timestampFromDate(new Date(query.createdAfter)) : undefined,
              createdBefore: query.createdBefore ? timestampFromDate(new Date(query.createdBefore)) : undefined,
            },
            o,
          ),
        auth,
      );
      return out.ok
        ? {
            ...out,
            value: {
              generations: out.value.generations.map(fromProto),
              nextPageToken: out.value.nextPageToken || null,
            },
          }
        : out;
    },
  };
}

function expectOk<T>(out: Outcome<T>, what: string): T {
  if (!out.ok) throw new Error(`${what}: expected success, got ${out.code}: ${out.message}`);
  return out.value;
}

function expectError(out: Outcome<unknown>, code: string, what: string): Extract<Outcome<unknown>, { ok: false }> {
  if (out.ok) throw new Error(`${what}: expected ${code}, got success`);
  expect(out.code, `${what}: ${out.message}`).toBe(code);
  expect(out.message.length, 'an error message').toBeGreaterThan(0);
  return out;
}

function expectRateLimitHeaders(out: Outcome<unknown>, what: string): void {
  for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
    expect(out.header(name), `${what}: ${name}`).toMatch(/^\d+$/);
  }
}

function expectGeneration(
  g: GenerationJson,
  expected: { workspaceId: string; templateId: string; templateName: string; data: unknown; status?: string },
  window?: { from: number; to: number },
): void {
  expect(Object.keys(g).sort()).toEqual([...ELEVEN].sort());
  expect(g.id).toMatch(/^gen_[0-9a-f]{24}$/);
  expect(g.workspaceId).toBe(expected.workspaceId);
  expect(g.templateId).toBe(expected.templateId);
  expect(g.templateName).toBe(expected.templateName);
  expect(g.format).toBe('PDF');
  expect(g.status).toBe(expected.status ?? 'PENDING');
  expect(g.data).toEqual(expected.data);
  if ((expected.status ?? 'PENDING') !== 'COMPLETED') expect(g.outputUrl).toBeNull();
  if ((expected.status ?? 'PENDING') !== 'FAILED') expect(g.error).toBeNull();
  expect(g.createdAt).toMatch(MS_UTC);
  expect(g.updatedAt).toMatch(MS_UTC);
  if (window) {
    const t = Date.parse(g.createdAt);
    expect(t).toBeGreaterThanOrEqual(window.from - 1);
    expect(t).toBeLessThanOrEqual(window.to + 1);
  }
}

// ---- fixtures -------------------------------------------------------------------------------

let wsA: string;
let wsB: string;
let full: string;
let readOnly: string;
let triggerOnly: string;
let otherWorkspaceKey: string;
let revoked: string;
let unknownKey: string;
let templateA: string;
let foreignGeneration: string;
let clients: ApiClient[];

beforeAll(async () => {
  stack = await startApiStack();
  openapi = loadOpenApi();
  wsA = await stack.workspace('conformance A');
  wsB = await stack.workspace('conformance B');
  full = `Bearer ${(await stack.key(wsA)).secret}`;
  readOnly = `Bearer ${(await stack.key(wsA, ['generations:read'])).secret}`;
  triggerOnly = `Bearer ${(await stack.key(wsA, ['generations:trigger'])).secret}`;
  const b = await stack.key(wsB);
  otherWorkspaceKey = `Bearer ${b.secret}`;
  const r = await stack.key(wsA);
  await stack.admin.apiKeys.revokeApiKey({ id: r.id });
  revoked = `Bearer ${r.secret}`;
  unknownKey = `Bearer svc_live_${'Q'.repeat(40)}`;
  templateA = await publishedTemplate(stack.admin, wsA, 'conformance template');
  const foreign = await rest('POST', '/v1/generations', {
    auth: otherWorkspaceKey,
    body: JSON.stringify({ templateId: 'tpl_whatever' }),
  });
  foreignGeneration = foreign.body.id;

  const base = `http://127.0.0.1:${stack.publicPort}`;
  clients = [
    restClient(),
    rpcClient('Connect', createConnectTransport({ baseUrl: base, httpVersion: '1.1' })),
    rpcClient('gRPC', createGrpcTransport({ baseUrl: base })),
    rpcClient('gRPC-web', createGrpcWebTransport({ baseUrl: base, httpVersion: '1.1' })),
  ];
});

afterAll(async () => {
  await stack?.close();
});

// ---- the cases, once per transport --------------------------------------------------------

const TRANSPORTS = ['REST', 'Connect', 'gRPC', 'gRPC-web'];
const client = (name: string) => clients.find((c) => c.name === name)!;

describe.each(TRANSPORTS)('%s', (name) => {
  it('create answers 201/OK with all eleven fields, PENDING, data echoing variables', async () => {
    const api = client(name);
    const variables = { name: 'Ada', n: 42, ok: true, nested: { list: [1, 'two', null, { x: 1.5 }] }, nothing: null };
    const from = Date.now();
    const created = expectOk(await api.create(full, { templateId: templateA, variables, format: 'pdf' }), 'create');
    const to = Date.now();
    expectGeneration(
      created,
      { workspaceId: wsA, templateId: templateA, templateName: 'conformance template', data: variables },
      { from, to },
    );
    expect(created.createdAt).toBe(created.updatedAt);

    // format and variables are optional: data is {} then.
    const bare = expectOk(await api.create(full, { templateId: templateA }), 'create without variables');
    expectGeneration(bare, { workspaceId: wsA, templateId: templateA, templateName: 'conformance template', data: {} });

    // The template is checked at render time (docs/interface.md#failures): any non-empty id is accepted.
    const unknown = expectOk(await api.create(full, { templateId: 'tpl_does_not_exist' }), 'unknown template');
    expectGeneration(unknown, { workspaceId: wsA, templateId: 'tpl_does_not_exist', templateName: '', data: {} });

    // GET returns the same generation, also through another transport.
    for (const other of clients) {
      const got = expectOk(await other.get(readOnly, created.id), `${other.name} get`);
      expect(got).toEqual(created);
    }
  });

  it("get: 200; unknown id, malformed id and another workspace's id are NOT_FOUND", async () => {
    const api = client(name);
    const created = expectOk(await api.create(triggerOnly, { templateId: templateA }), 'create');
    const got = await api.get(readOnly, created.id);
    expectRateLimitHeaders(got, 'get');
    expect(expectOk(got, 'get').id).toBe(created.id);
    expectError(await api.get(full, `gen_${new ObjectId().toHexString()}`), 'NOT_FOUND', 'unknown id');
    expectError(await api.get(full, 'not-an-id'), 'NOT_FOUND', 'malformed id');
    expectError(await api.get(full, foreignGeneration), 'NOT_FOUND', 'other workspace');
    expectError(await api.get(otherWorkspaceKey, created.id), 'NOT_FOUND', 'other workspace, the other way');
  });

  it('authentication: the four 401/403 cases of the interface on every operation', async () => {
    const api = client(name);
    const malformed: (string | undefined)[] = [
      undefined,
      '',
      `Basic ${Buffer.from('a:b').toString('base64')}`,
      'Bearer',
      `Bearer${full.slice('Bearer '.length)}`,
      `Token ${full.slice('Bearer '.length)}`,
      'Bearer svc_live_short',
      // svc_test_ is a mode of its own (test mode): another prefix is malformed.
      `Bearer svc_prod_${'a'.repeat(40)}`,
      'Bearer svc_test_short',
      `Bearer svc_live_${'a'.repeat(129)}`,
      `Bearer svc_live_${'a'.repeat(30)}-_`,
      `Bearer ${full.slice('Bearer '.length)} extra`,
    ];
    const operations: [string, (auth: string | undefined) => Promise<Outcome<unknown>>][] = [
      ['create', (auth) => api.create(auth, { templateId: templateA })],
      ['get', (auth) => api.get(auth, foreignGeneration)],
      ['list', (auth) => api.list(auth)],
    ];
    for (const [op, call] of operations) {
      for (const auth of malformed) {
        const out = expectError(await call(auth), 'UNAUTHORIZED', `${op} with Authorization ${JSON.stringify(auth)}`);
        expectRateLimitHeaders(out, `${op} 401`);
      }
      expectError(await call(unknownKey), 'API_KEY_INVALID', `${op} with an unknown key`);
      expectError(await call(revoked), 'API_KEY_REVOKED', `${op} with a revoked key`);
    }
    // The scheme is case-insensitive (RFC 9110); the key is not.
    expectOk(await api.list(`bearer ${full.slice('Bearer '.length)}`), 'lower-case scheme');
    expectError(
      await api.list(`Bearer ${full.slice('Bearer '.length).toUpperCase()}`),
      'UNAUTHORIZED',
      'upper-cased key prefix',
    );

    // Scopes: 403 FORBIDDEN, checked after authentication, for each endpoint.
    const noTrigger = expectError(
      await api.create(readOnly, { templateId: templateA }),
      'FORBIDDEN',
      'create with a read-only key',
    );
    expectRateLimitHeaders(noTrigger, 'create 403');
    expectError(await api.get(triggerOnly, foreignGeneration), 'FORBIDDEN', 'get with a trigger-only key');
    expectError(await api.list(triggerOnly), 'FORBIDDEN', 'list with a trigger-only key');
    // Scope before validation: an invalid body with the wrong scope is still 403.
    expectError(await api.create(readOnly, { templateId: '' }), 'FORBIDDEN', 'invalid body, wrong scope');
    // Authentication before everything: an invalid body without a key is 401.
    expectError(await api.create(undefined, { templateId: '' }), 'UNAUTHORIZED', 'invalid body, no key');
  });

  it('validation: VALIDATION_ERROR naming the field', async () => {
    const api = client(name);
    const empty = expectError(await api.create(full, { templateId: '' }), 'VALIDATION_ERROR', 'empty templateId');
    expectRateLimitHeaders(empty, '422');
    if (name === 'REST')
      expect(empty.details).toEqual([{ field: 'templateId', issue: 'must be at least 1 character' }]);
    else expect(empty.message).toContain('templateId');
    const long = expectError(
      await api.create(full, { templateId: 'x'.repeat(257) }),
      'VALIDATION_ERROR',
      'long templateId',
    );
    expect(name === 'REST' ? long.details[0]?.field : long.message).toContain('templateId');
    const format = expectError(
      await api.create(full, { templateId: templateA, format: 'docx' }),
      'VALIDATION_ERROR',
      'bad format',
    );
    expect(name === 'REST' ? format.details.map((d) => d.field) : format.message).toContain('format');
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 40; i++) deep = { deeper: deep };
    expectError(
      await api.create(full, { templateId: templateA, variables: deep }),
      'VALIDATION_ERROR',
      'variables nested too deep',
    );
    const key = expectError(
      await api.create(full, { templateId: templateA }, { 'Idempotency-Key': 'k'.repeat(256) }),
      'VALIDATION_ERROR',
      'long Idempotency-Key',
    );
    expect(name === 'REST' ? key.details[0]?.field : key.message).toContain('Idempotency-Key');
  });

  it('rate limit: RATE_LIMITED with Retry-After and RateLimit-* once the burst is spent', async () => {
    const api = client(name);
    const limited = await stack.key(wsA, ['generations:read', 'generations:trigger'], { perSecond: 0.5, burst: 2 });
    const auth = `Bearer ${limited.secret}`;
    const first = await api.list(auth);
    expectOk(first, 'first');
    expect(first.header('ratelimit-limit')).toBe('2');
    expect(first.header('ratelimit-remaining')).toBe('1');
    const second = await api.list(auth);
    expect(second.header('ratelimit-remaining')).toBe('0');
    const third = expectError(await api.list(auth), 'RATE_LIMITED', 'third request');
    expect(Number(third.header('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(third.header('retry-after'))).toBeLessThanOrEqual(2);
    expectRateLimitHeaders(third, '429');
    expect(third.header('ratelimit-remaining')).toBe('0');
    // The limit comes before validation: an invalid body is refused as RATE_LIMITED.
    expectError(await api.create(auth, { templateId: '' }), 'RATE_LIMITED', 'invalid body over the limit');
    // The key's own limit, not the default, is shown on its 403s too.
    const own = await stack.key(wsA, ['generations:read'], { perSecond: 3, burst: 7 });
    const forbidden = expectError(
      await api.create(`Bearer ${own.secret}`, { templateId: templateA }),
      'FORBIDDEN',
      'forbidden',
    );
    expect(forbidden.header('ratelimit-limit')).toBe('7');
  });

  it('X-Request-Id: echoed when given, generated otherwise', async () => {
    if (name === 'REST') {
      const echoed = await rest('GET', '/v1/generations', { auth: full, headers: { 'X-Request-Id': 'req-123.abc' } });
      expect(echoed.headers['x-request-id']).toBe('req-123.abc');
      const generated = await rest('GET', '/v1/nowhere', { auth: full });
      expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      const replaced = await rest('GET', '/v1/generations', { auth: full, headers: { 'X-Request-Id': 'has space' } });
      expect(replaced.headers['x-request-id']).not.toBe('has space');
      return;
    }
    const api = client(name);
    const ok = await rpc((o) => createClient(GenerationService, transportOf(name)).listGenerations({}, o), full, {
      'x-request-id': 'rpc-req-1',
    });
    expect(ok.header('x-request-id')).toBe('rpc-req-1');
    const failed = await api.get(full, 'gen_missing');
    expect(failed.header('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('list: page sizes, filters, newest first, tokens bound to the query', async () => {
    const api = client(name);
    const ws = await stack.workspace(`list ${name}`);
    const key = `Bearer ${(await stack.key(ws)).secret}`;
    const t1 = await publishedTemplate(stack.admin, ws, 'one');
    const t2 = await publishedTemplate(stack.admin, ws, 'two');
    const ids: string[] = [];
    for (let i = 0; i < 25; i++)
      ids.push(expectOk(await api.create(key, { templateId: i % 5 === 0 ? t2 : t1, variables: { i } }), 'create').id);
    const failedIds = ids.slice(0, 3);
    for (const id of failedIds)
      await stack.app.infrastructure.repositories.generations.fail(
        parseId('generation', id)!,
        null,
        'made to fail by the test',
      );

    const first = expectOk(await api.list(key), 'list');
    expect(first.generations).toHaveLength(20);
    expect(first.nextPageToken).toEqual(expect.any(String));
    expect(expectOk(await api.list(key, { pageSize: 0 }), 'pageSize 0').generations).toHaveLength(20);

    // Newest first: createdAt desc, then id desc.
    const all = expectOk(await api.list(key, { pageSize: 100 }), 'all');
    expect(all.generations.map((g) => g.id)).toEqual([...ids].reverse());
    expect(all.nextPageToken).toBeNull();
    const big = expectOk(await api.list(key, { pageSize: 2_000_000_000 }), 'huge pageSize is lowered');
    expect(big.generations).toHaveLength(25);
    for (let i = 1; i < all.generations.length; i++) {
      const [a, b] = [all.generations[i - 1]!, all.generations[i]!];
      expect(a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id)).toBe(true);
    }

    // Walking pages returns each one exactly once.
    const walked: string[] = [];
    let token: string | null = null;
    do {
      const page: Page = expectOk(await api.list(key, { pageSize: 7, pageToken: token ?? undefined }), 'page');
      expect(page.generations.length).toBeLessThanOrEqual(7);
      walked.push(...page.generations.map((g) => g.id));
      token = page.nextPageToken;
    } while (token !== null);
    expect(walked).toEqual([...ids].reverse());

    // Filters.
    const failed = expectOk(await api.list(key, { status: 'FAILED' }), 'status FAILED');
    expect(failed.generations.map((g) => g.id).sort()).toEqual([...failedIds].sort());
    for (const g of failed.generations) expect(g.error).toBe('made to fail by the test');
    expect(expectOk(await api.list(key, { status: 'PENDING', pageSize: 100 }), 'PENDING').generations).toHaveLength(22);
    expect(expectOk(await api.list(key, { status: 'COMPLETED' }), 'COMPLETED').generations).toHaveLength(0);
    const byTemplate = expectOk(await api.list(key, { templateId: t2 }), 'templateId');
    expect(byTemplate.generations.map((g) => g.id)).toEqual(ids.filter((_, i) => i % 5 === 0).reverse());
    expect(expectOk(await api.list(key, { templateId: 'tpl_nope' }), 'unknown template').generations).toEqual([]);
    const pivot = all.generations[10]!.createdAt;
    const after = expectOk(await api.list(key, { createdAfter: pivot, pageSize: 100 }), 'createdAfter');
    expect(after.generations.map((g) => g.id)).toEqual(
      all.generations.filter((g) => g.createdAt >= pivot).map((g) => g.id),
    );
    const before = expectOk(await api.list(key, { createdBefore: pivot, pageSize: 100 }), 'createdBefore');
    expect(before.generations.map((g) => g.id)).toEqual(
      all.generations.filter((g) => g.createdAt < pivot).map((g) => g.id),
    );
    // Filters combine, and paging keeps them.
    const combined = expectOk(await api.list(key, { status: 'PENDING', templateId: t1, pageSize: 4 }), 'combined');
    const next = expectOk(
      await api.list(key, { status: 'PENDING', templateId: t1, pageSize: 4, pageToken: combined.nextPageToken! }),
      'combined page 2',
    );
    for (const g of [...combined.generations, ...next.generations])
      expect([g.status, g.templateId]).toEqual(['PENDING', t1]);

    // Another workspace sees none of them.
    const others = expectOk(await api.list(otherWorkspaceKey, { pageSize: 100 }), 'other workspace');
    expect(others.generations.some((g) => ids.includes(g.id))).toBe(false);

    // Bad parameters and tokens: VALIDATION_ERROR.
    expectError(await api.list(key, { pageSize: -1 }), 'VALIDATION_ERROR', 'pageSize -1');
    expectError(await api.list(key, { status: 'DONE' }), 'VALIDATION_ERROR', 'unknown status');
    const tampered = first.nextPageToken!.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expectError(await api.list(key, { pageToken: tampered }), 'VALIDATION_ERROR', 'tampered token');
    expectError(await api.list(key, { pageToken: 'forged' }), 'VALIDATION_ERROR', 'forged token');
    const [payload, mac] = first.nextPageToken!.split('.');
    const edited = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), t: 0 }),
    ).toString('base64url');
    expectError(await api.list(key, { pageToken: `${edited}.${mac}` }), 'VALIDATION_ERROR', 'edited payload, old MAC');
    expectError(
      await api.list(key, { pageToken: first.nextPageToken!, status: 'PENDING' }),
      'VALIDATION_ERROR',
      'token of another query',
    );
    expectError(
      await api.list(otherWorkspaceKey, { pageToken: first.nextPageToken! }),
      'VALIDATION_ERROR',
      'token of another workspace',
    );
  });
});

function transportOf(name: string): Transport {
  const base = `http://127.0.0.1:${stack.publicPort}`;
  if (name === 'Connect') return createConnectTransport({ baseUrl: base, httpVersion: '1.1' });
  if (name === 'gRPC') return createGrpcTransport({ baseUrl: base });
  return createGrpcWebTransport({ baseUrl: base, httpVersion: '1.1' });
}

// ---- REST-only parts of the tables ------------------------------------------------------------

describe('REST only', () => {
  it('422 VALIDATION_ERROR for each body rule, with details', async () => {
    const cases: [string, string, string][] = [
      ['{', 'body', 'not valid JSON'],
      ['[]', 'body', 'array'],
      ['"x"', 'body', 'string'],
      ['null', 'body', 'null'],
      ['{}', 'templateId', 'missing templateId'],
      ['{"templateId": 5}', 'templateId', 'templateId number'],
      ['{"templateId": null}', 'templateId', 'templateId null'],
      ['{"templateId": ""}', 'templateId', 'templateId empty'],
      ['{"templateId": "t", "variables": []}', 'variables', 'variables array'],
      ['{"templateId": "t", "variables": "x"}', 'variables', 'variables string'],
      ['{"templateId": "t", "variables": null}', 'variables', 'variables null'],
      ['{"templateId": "t", "format": "PDF"}', 'format', 'upper-case format'],
      ['{"templateId": "t", "format": null}', 'format', 'null format'],
      ['{"templateId": "t", "colour": "red"}', 'colour', 'unknown field'],
      ['', 'body', 'empty body'],
    ];
    for (const [body, field, what] of cases) {
      const answer = await rest('POST', '/v1/generations', { auth: full, body });
      expect(answer.status, what).toBe(422);
      expect(answer.body.error.code, what).toBe('VALIDATION_ERROR');
      expect(
        answer.body.error.details.map((d: { field: string }) => d.field),
        what,
      ).toContain(field);
    }
    // Every problem is listed at once.
    const many = await rest('POST', '/v1/generations', {
      auth: full,
      body: '{"variables": 1, "format": "doc", "x": 1}',
    });
    expect(many.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'format',
      'templateId',
      'variables',
      'x',
    ]);
  });

  it('422 for bad query parameters', async () => {
    const bad = [
      'pageSize=-1',
      'pageSize=1.5',
      'pageSize=1e3',
      'pageSize=abc',
      'pageSize=',
      'pageSize=%2B5',
      'pageSize=1&pageSize=2',
      'unknown=1',
      'status=pending',
      'templateId=',
      'createdAfter=yesterday',
      'createdAfter=2026-02-30T00:00:00Z',
      'createdBefore=2026-01-01',
    ];
    for (const qs of bad) {
      const answer = await rest('GET', `/v1/generations?${qs}`, { auth: full });
      expect(answer.status, qs).toBe(422);
      expect(answer.body.error.details.length, qs).toBeGreaterThan(0);
    }
    for (const qs of [
      'pageSize=100',
      'pageSize=101',
      'pageSize=0',
      'pageSize=007',
      `pageSize=${'9'.repeat(40)}`,
      'pageToken=',
      'createdAfter=2026-01-01T00:00:00.123456%2B02:00',
    ]) {
      expect((await rest('GET', `/v1/generations?${qs}`, { auth: full })).status, qs).toBe(200);
    }
  });

  it('405 METHOD_NOT_ALLOWED with Allow; 404 NOT_FOUND for unknown routes', async () => {
    for (const [method, path, allow] of [
      ['DELETE', '/v1/generations', 'GET, POST'],
      ['PUT', '/v1/generations', 'GET, POST'],
      ['PATCH', '/v1/generations', 'GET, POST'],
      ['OPTIONS', '/v1/generations', 'GET, POST'],
      ['HEAD', '/v1/generations', 'GET, POST'],
      ['POST', `/v1/generations/gen_${new ObjectId().toHexString()}`, 'GET'],
      ['DELETE', '/v1/generations/x', 'GET'],
    ] as const) {
      const answer = await rest(method, path, { auth: full });
      expect(answer.status, `${method} ${path}`).toBe(405);
      expect(answer.headers.allow).toBe(allow);
      if (method !== 'HEAD') expect(answer.body.error.code).toBe('METHOD_NOT_ALLOWED');
    }
    for (const path of [
      '/',
      '/v1',
      '/v1/',
      '/v2/generations',
      '/v1/generation',
      '/v1/generations/a/b',
      '/V1/generations',
      '//x/v1/generations',
      '/v1/generations/..%2F',
    ]) {
      const answer = await rest('GET', path, { auth: full });
      expect(answer.status, path).toBe(404);
      expect(answer.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('413 PAYLOAD_TOO_LARGE and 415 UNSUPPORTED_MEDIA_TYPE, before authentication', async () => {
    const huge = JSON.stringify({ templateId: 't', variables: { blob: 'x'.repeat(1024 * 1024) } });
    const tooLarge = await request(stack.baseUrl, {
      method: 'POST',
      path: '/v1/generations',
      headers: { 'Content-Type': 'application/json' },
      body: huge,
    });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    openapi.check({
      method: 'POST',
      path: '/v1/generations',
      status: 413,
      headers: tooLarge.headers,
      body: tooLarge.body,
    });
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonp',
    ]) {
      const answer = await rest('POST', '/v1/generations', {
        body: '{"templateId":"t"}',
        headers: { 'Content-Type': type },
      });
      expect(answer.status, type).toBe(415);
      expect(answer.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
    for (const type of ['application/json; charset=utf-8', 'APPLICATION/JSON', 'application/vnd.docgen+json']) {
      expect(
        (
          await rest('POST', '/v1/generations', {
            auth: full,
            body: '{"templateId":"t"}',
            headers: { 'Content-Type': type },
          })
        ).status,
        type,
      ).toBe(201);
    }
  });

  it('a body over the limit just below and above 1 MiB', async () => {
    const exact = (size: number) => {
      const base = JSON.stringify({ templateId: 't', variables: { blob: '' } });
      return JSON.stringify({ templateId: 't', variables: { blob: 'x'.repeat(size - base.length) } });
    };
    expect((await rest('POST', '/v1/generations', { auth: full, body: exact(1024 * 1024) })).status).toBe(201);
    const over = await request(stack.baseUrl, {
      method: 'POST',
      path: '/v1/generations',
      headers: { ...bearer(full.slice(7)), 'Content-Type': 'application/json' },
      body: exact(1024 * 1024 + 1),
    });
    expect(over.status).toBe(413);
  });

  it('a COMPLETED generation carries a fresh 1-hour presigned outputUrl that downloads the PDF; a FAILED one its error', async () => {
    const created = (
      await rest('POST', '/v1/generations', { auth: full, body: JSON.stringify({ templateId: templateA }) })
    ).body as GenerationJson;
    const { generations } = stack.app.infrastructure.repositories;
    const id = parseId('generation', created.id)!;
    // Drive the row through the real state machine as a render worker would.
    expect(await generations.claim(id, 'conformance-test', 30_000)).not.toBeNull();
    const pdf = Buffer.from('%PDF-1.4\n% conformance test\n%%EOF\n');
    const key = `test/${created.id}.pdf`;
    await stack.app.infrastructure.objects.putPdf(key, pdf, { downloadFilename: 'test.pdf' });
    expect(await generations.complete(id, 'conformance-test', key, 1)).not.toBeNull();

    for (const api of clients) {
      const got = expectOk(await api.get(readOnly, created.id), `${api.name} get COMPLETED`);
      expectGeneration(got, {
        workspaceId: wsA,
        templateId: templateA,
        templateName: 'conformance template',
        data: {},
        status: 'COMPLETED',
      });
      const url = new URL(got.outputUrl!);
      expect(url.searchParams.get('X-Amz-Expires')).toBe('3600');
      const signedAt = url.searchParams
        .get('X-Amz-Date')!
        .replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z');
      expect(Math.abs(Date.parse(signedAt) - Date.now())).toBeLessThan(10_000);
      const download = await fetch(url);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toBe('application/pdf');
      expect(Buffer.from(await download.arrayBuffer())).toEqual(pdf);
    }
    const listed = expectOk(await client('REST').list(readOnly, { status: 'COMPLETED' }), 'list COMPLETED');
    expect(listed.generations.find((g) => g.id === created.id)?.outputUrl).toMatch(/^http/);

    const failed = (
      await rest('POST', '/v1/generations', { auth: full, body: JSON.stringify({ templateId: 'tpl_x' }) })
    ).body as GenerationJson;
    await generations.fail(parseId('generation', failed.id)!, null, 'Template "tpl_x" does not exist');
    for (const api of clients) {
      const got = expectOk(await api.get(readOnly, failed.id), `${api.name} get FAILED`);
      expect(got.status).toBe('FAILED');
      expect(got.error).toBe('Template "tpl_x" does not exist');
      expect(got.outputUrl).toBeNull();
    }
  });

  it('walking all pages while generations are created returns every earlier one exactly once', async () => {
    const ws = await stack.workspace('walk');
    const key = `Bearer ${(await stack.key(ws)).secret}`;
    const existing: string[] = [];
    for (let i = 0; i < 40; i += 8) {
      const batch = await Promise.all(
        Array.from({ length: 8 }, () => rest('POST', '/v1/generations', { auth: key, body: '{"templateId":"t"}' })),
      );
      existing.push(...batch.map((a) => a.body.id as string));
    }
    let inserting = true;
    const inserted: string[] = [];
    const writer = (async () => {
      while (inserting)
        inserted.push((await rest('POST', '/v1/generations', { auth: key, body: '{"templateId":"t"}' })).body.id);
    })();
    const seen: string[] = [];
    let token: string | null = null;
    do {
      const qs: string = token === null ? 'pageSize=3' : `pageSize=3&pageToken=${encodeURIComponent(token)}`;
      const page = await rest('GET', `/v1/generations?${qs}`, { auth: key });
      expect(page.status).toBe(200);
      seen.push(...(page.body.generations as GenerationJson[]).map((g) => g.id));
      token = page.body.nextPageToken;
    } while (token !== null);
    inserting = false;
    await writer;
    expect(inserted.length, 'inserts happened during the walk').toBeGreaterThan(0);
    expect(new Set(seen).size, 'no generation twice').toBe(seen.length);
    for (const id of existing)
      expect(
        seen.filter((s) => s === id),
        id,
      ).toHaveLength(1);
  });

  it('pageSize above 100 is lowered to 100, on every transport', async () => {
    const ws = await stack.workspace('max page');
    const key = `Bearer ${(await stack.key(ws)).secret}`;
    for (let i = 0; i < 105; i += 15) {
      await Promise.all(
        Array.from({ length: Math.min(15, 105 - i) }, () =>
          rest('POST', '/v1/generations', { auth: key, body: '{"templateId":"t"}' }),
        ),
      );
    }
    for (const api of clients) {
      for (const pageSize of [101, 1000, 2_000_000_000]) {
        const page = expectOk(await api.list(key, { pageSize }), `${api.name} pageSize ${pageSize}`);
        expect(page.generations, `${api.name} pageSize ${pageSize}`).toHaveLength(100);
        const rest = expectOk(await api.list(key, { pageSize, pageToken: page.nextPageToken! }), 'second page');
        expect(rest.generations).toHaveLength(5);
        expect(rest.nextPageToken).toBeNull();
      }
      expect(expectOk(await api.list(key, { pageSize: 100 }), 'exactly 100').generations).toHaveLength(100);
    }
  });

  it('REST works over cleartext HTTP/2 too, 413 included', async () => {
    const session = http2.connect(stack.baseUrl);
    try {
      const call = (headers: http2.OutgoingHttpHeaders, body?: Buffer | string) =>
        new Promise<{ status: number; headers: http2.IncomingHttpHeaders; body: any }>((resolve, reject) => {
          const stream = session.request(headers);
          let responseHeaders: http2.IncomingHttpHeaders = {};
          const chunks: Buffer[] = [];
          stream.on('response', (h) => (responseHeaders = h));
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () =>
            resolve({
              status: Number(responseHeaders[':status']),
              headers: responseHeaders,
              body: JSON.parse(Buffer.concat(chunks).toString() || 'null'),
            }),
          );
          stream.on('error', reject);
          stream.end(body);
        });
      const created = await call(
        { ':method': 'POST', ':path': '/v1/generations', authorization: full, 'content-type': 'application/json' },
        JSON.stringify({ templateId: templateA, variables: { h2: true } }),
      );
      expect(created.status).toBe(201);
      openapi.check({
        method: 'POST',
        path: '/v1/generations',
        status: 201,
        headers: created.headers as never,
        body: created.body,
      });
      const got = await call({ ':method': 'GET', ':path': `/v1/generations/${created.body.id}`, authorization: full });
      expect(got.body).toEqual(created.body);
      const tooLarge = await call(
        { ':method': 'POST', ':path': '/v1/generations', authorization: full, 'content-type': 'application/json' },
        Buffer.alloc(2 * 1024 * 1024, 0x20),
      );
      expect(tooLarge.status).toBe(413);
      expect(
        (await call({ ':method': 'GET', ':path': '/v1/generations?pageSize=1', authorization: full })).status,
      ).toBe(200);
    } finally {
      session.close();
    }
  });

  it('admin services are not reachable through the public port', async () => {
    const answer = await request(stack.baseUrl, {
      method: 'POST',
      path: '/docgen.admin.v1.WorkspaceService/ListWorkspaces',
      headers: {
        Authorization: `Bearer ${stack.deps.adminToken}`,
        'Content-Type': 'application/json',
        'X-Request-Id': 'probe-admin-1',
      },
      body: '{}',
    });
    expect(answer.status).toBe(404);
    expect(answer.headers['x-request-id']).toBe('probe-admin-1');
    for (const transport of ['Connect', 'gRPC', 'gRPC-web']) {
      const admin = createClient(WorkspaceService, transportOf(transport));
      const err = await admin
        .listWorkspaces({}, { headers: { authorization: `Bearer ${stack.deps.adminToken}` } })
        .then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
      expect(err?.code, transport).toBe(Code.Unimplemented);
    }
    // ... while the admin port does serve them with the token.
    expect((await stack.admin.workspaces.listWorkspaces({})).workspaces.length).toBeGreaterThan(0);
    for (const path of ['/admin', '/v1/workspaces', '/v1/api-keys', '/v1/templates']) {
      expect((await rest('GET', path, { auth: `Bearer ${stack.deps.adminToken}` })).status, path).toBe(404);
    }
  });
});

describe('Idempotency-Key', () => {
  it('two concurrent creates with one key return one generation; another body is IDEMPOTENCY_KEY_REUSED', async () => {
    const ws = await stack.workspace('idempotency');
    const key = `Bearer ${(await stack.key(ws)).secret}`;
    const body = JSON.stringify({ templateId: 'tpl_same', variables: { a: 1, b: [1, 2] } });
    for (let round = 0; round < 5; round++) {
      const idem = `idem-${round}-${randomBytes(4).toString('hex')}`;
      const answers = await Promise.all(
        Array.from({ length: 4 }, () =>
          rest('POST', '/v1/generations', { auth: key, body, headers: { 'Idempotency-Key': idem } }),
        ),
      );
      for (const a of answers) expect(a.status).toBe(201);
      expect(new Set(answers.map((a) => a.body.id)).size, `round ${round}`).toBe(1);
      // Same body with other key order and spacing is the same request.
      const reordered = await rest('POST', '/v1/generations', {
        auth: key,
        body: '{ "variables": {"b":[1,2],"a":1}, "templateId":"tpl_same" }',
        headers: { 'Idempotency-Key': idem },
      });
      expect(reordered.status).toBe(201);
      expect(reordered.body.id).toBe(answers[0]!.body.id);
      const other = await rest('POST', '/v1/generations', {
        auth: key,
        body: JSON.stringify({ templateId: 'tpl_other' }),
        headers: { 'Idempotency-Key': idem },
      });
      expect(other.status).toBe(422);
      expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    }
    const listed = await rest('GET', '/v1/generations?pageSize=100', { auth: key });
    expect(listed.body.generations).toHaveLength(5);

    // Keys are scoped to the workspace: another workspace's same key makes its own generation.
    const shared = `shared-${randomBytes(4).toString('hex')}`;
    const mine = await rest('POST', '/v1/generations', { auth: key, body, headers: { 'Idempotency-Key': shared } });
    const theirs = await rest('POST', '/v1/generations', {
      auth: otherWorkspaceKey,
      body,
      headers: { 'Idempotency-Key': shared },
    });
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.body.workspaceId).not.toBe(mine.body.workspaceId);
  });

  it('is honoured over gRPC and Connect too, shared with REST', async () => {
    const idem = `rpc-${randomBytes(4).toString('hex')}`;
    const outcomes = await Promise.all(
      clients.map((c) => c.create(full, { templateId: 'tpl_rpc', variables: { x: 1 } }, { 'Idempotency-Key': idem })),
    );
    const ids = outcomes.map((o) => expectOk(o, 'create').id);
    expect(new Set(ids).size).toBe(1);
    const reused = await client('gRPC').create(
      full,
      { templateId: 'tpl_rpc', variables: { x: 2 } },
      { 'Idempotency-Key': idem },
    );
    expectError(reused, 'IDEMPOTENCY_KEY_REUSED', 'gRPC reuse');
  });
});
