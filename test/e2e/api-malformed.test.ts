// Malformed input against the public listener: only the documented 4xx answers, never a
// 500, and the process keeps serving (a plain GET works after every case). Real parts
// throughout (nats-server, CongoDB or DOCGEN_TEST_MONGODB_URL, s3rver, docgen api role).
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOpenApi, type OpenApi } from './api-openapi.ts';
import { request, startApiStack, type ApiStack, type HttpAnswer } from './api-stack.ts';

let stack: ApiStack;
let openapi: OpenApi;
let auth: string;

const CODES: Record<number, string[]> = {
  401: ['UNAUTHORIZED', 'API_KEY_INVALID', 'API_KEY_REVOKED'],
  404: ['NOT_FOUND'],
  405: ['METHOD_NOT_ALLOWED'],
  413: ['PAYLOAD_TOO_LARGE'],
  415: ['UNSUPPORTED_MEDIA_TYPE'],
  422: ['VALIDATION_ERROR', 'IDEMPOTENCY_KEY_REUSED'],
};

beforeAll(async () => {
  stack = await startApiStack();
  openapi = loadOpenApi();
  const ws = await stack.workspace('malformed');
  auth = `Bearer ${(await stack.key(ws)).secret}`;
});

afterAll(async () => {
  await stack?.close();
});

/** The answer is one of `allowed`, documented, well-formed; and the service still answers. */
async function expectDocumented(
  answer: HttpAnswer,
  allowed: number[],
  what: string,
  method = 'GET',
  path = '/v1/generations',
): Promise<void> {
  expect(answer.status, `${what}: ${answer.text.slice(0, 300)}`).not.toBe(500);
  expect(allowed, `${what}: got ${answer.status} ${answer.text.slice(0, 300)}`).toContain(answer.status);
  if (answer.status >= 400 && CODES[answer.status] && method !== 'HEAD') {
    expect(CODES[answer.status], `${what}: code`).toContain(answer.body?.error?.code);
    openapi.check({ method, path, status: answer.status, headers: answer.headers, body: answer.body });
  }
  await expectStillServing(what);
}

async function expectStillServing(what: string): Promise<void> {
  const after = await request(stack.baseUrl, { path: '/v1/generations?pageSize=1', headers: { Authorization: auth } });
  expect(after.status, `still serving after: ${what}`).toBe(200);
}

function post(body: string | Buffer, headers: Record<string, string> = {}, chunked = false): Promise<HttpAnswer> {
  return request(stack.baseUrl, {
    method: 'POST',
    path: '/v1/generations',
    headers: { Authorization: auth, 'Content-Type': 'application/json', ...headers },
    body,
    chunked,
  });
}

/** Raw bytes on a socket: for requests the Node HTTP client refuses to send. */
function raw(bytes: Buffer | string, timeoutMs = 5000): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(stack.publicPort, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      finish();
    }, timeoutMs);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, text });
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      // Done once one whole answer is in (the connection may stay open after it).
      const text = Buffer.concat(chunks).toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head))?.[1];
      if (head >= 0 && length !== undefined && text.length >= head + 4 + Number(length)) {
        socket.destroy();
        finish();
      }
    });
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', (err) => (chunks.length > 0 ? finish() : reject(err)));
    // No half-close: the HTTP server aborts requests whose client has ended its side.
    socket.write(bytes);
  });
}

describe('bodies', () => {
  it('invalid JSON and wrong types: 422 VALIDATION_ERROR', async () => {
    const bodies = [
      '{',
      '{"templateId": }',
      '{"templateId": "t",}',
      "{'templateId': 't'}",
      '{"templateId": "t"} trailing',
      '{"templateId": "t"}{"templateId": "u"}',
      '{"templateId": NaN}',
      '/* comment */ {"templateId": "t"}',
      '{"templateId": "\\x41"}',
      '{"templateId": "t", "variables": {"a": undefined}}',
      'true',
      '1',
      '"just a string"',
      '[{"templateId": "t"}]',
      '{"templateId": ["t"]}',
      '{"templateId": {"id": "t"}}',
      '{"templateId": true}',
      '{"templateId": "t", "variables": 1}',
      '{"templateId": "t", "variables": [1, 2]}',
      '{"templateId": "t", "format": 1}',
      '{"templateId": "t", "format": ["pdf"]}',
      '{"templateId": "t", "format": ""}',
      '{"templateId": "t", "__proto__": {"x": 1}}',
      '{"templateId": "t", "constructor": 1}',
      '{"TemplateId": "t"}',
      ' ',
      '\u0000',
    ];
    for (const body of bodies) {
      const answer = await post(body);
      await expectDocumented(answer, [422], `body ${JSON.stringify(body)}`, 'POST');
    }
  });

  it('odd but valid JSON is accepted and echoed', async () => {
    const cases: [string, unknown][] = [
      ['{"templateId": "t", "variables": {"$set": {"a": 1}, "a.b": 2, "$": 3}}', { $set: { a: 1 }, 'a.b': 2, $: 3 }],
      ['{"templateId": "t", "variables": {"": "empty key", " ": 1}}', { '': 'empty key', ' ': 1 }],
      [
        '{"templateId": "t", "variables": {"emoji": "😀", "nul": "a\\u0000b", "rtl": "\\u202e"}}',
        { emoji: '😀', nul: 'a\u0000b', rtl: '\u202e' },
      ],
      [
        '{"templateId": "t", "variables": {"big": 12345678901234567890, "tiny": 1e-300, "neg": -0.5}}',
        /* eslint-disable-next-line no-loss-of-precision -- the test is that a number JSON.parse
           rounds arrives rounded the same way */
        { big: 12345678901234567890, tiny: 1e-300, neg: -0.5 },
      ],
      [
        '{"templateId": "t", "variables": {"list": [[], {}, [[1]], null, false]}}',
        { list: [[], {}, [[1]], null, false] },
      ],
      ['\ufeff{"templateId": "t"}', {}],
      ['{"templateId": "t", "templateId": "u"}', {}],
      ['{"templateId": " "}', {}],
      ['{"templateId": "\\u0000"}', {}],
    ];
    for (const [body, data] of cases) {
      const answer = await post(body);
      await expectDocumented(answer, [201], `body ${JSON.stringify(body)}`, 'POST');
      expect(answer.body.data, body).toEqual(data);
      openapi.check({
        method: 'POST',
        path: '/v1/generations',
        status: 201,
        headers: answer.headers,
        body: answer.body,
      });
      // Stored as sent: a GET shows the same data.
      const got = await request(stack.baseUrl, {
        path: `/v1/generations/${answer.body.id}`,
        headers: { Authorization: auth },
      });
      expect(got.body.data, `stored ${body}`).toEqual(data);
    }
    // Lone surrogates are valid JSON escapes: accepted, never a 500.
    await expectDocumented(
      await post('{"templateId": "t", "variables": {"s": "\\ud800"}}'),
      [201, 422],
      'lone surrogate',
      'POST',
    );
    // A number beyond double range parses as Infinity: accepted or refused, never a 500.
    await expectDocumented(await post('{"templateId": "t", "variables": {"n": 1e400}}'), [201, 422], '1e400', 'POST');
  });

  it('invalid UTF-8: 422', async () => {
    const prefix = Buffer.from('{"templateId": "');
    const suffix = Buffer.from('"}');
    for (const bad of [
      [0xff],
      [0xc3, 0x28],
      [0xe2, 0x82],
      [0xed, 0xa0, 0x80],
      [0xc0, 0xaf],
      [0xf8, 0x88, 0x80, 0x80, 0x80],
      [0x80],
    ]) {
      const answer = await post(Buffer.concat([prefix, Buffer.from(bad), suffix]));
      await expectDocumented(answer, [422], `bytes ${bad.map((b) => b.toString(16)).join(' ')}`, 'POST');
      expect(answer.body.error.details[0].issue).toContain('UTF-8');
    }
  });

  it('deep nesting: 10^5 brackets and braces, and variables deeper than allowed: 422', async () => {
    for (const body of [
      '['.repeat(100_000),
      '['.repeat(100_000) + ']'.repeat(100_000),
      `{"templateId": "t", "variables": {"a": ${'['.repeat(100_000)}${']'.repeat(100_000)}}}`,
      `{"templateId": "t", "variables": ${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`,
      `{"templateId": "t", "variables": {"a": ${'['.repeat(40)}${']'.repeat(40)}}}`,
    ]) {
      const answer = await post(body);
      await expectDocumented(answer, [422], `nesting of ${body.length} bytes`, 'POST');
    }
    // Brackets inside strings do not count.
    await expectDocumented(
      await post(JSON.stringify({ templateId: 't', variables: { s: '['.repeat(100_000) } })),
      [201],
      'brackets in a string',
      'POST',
    );
    // A wide (not deep) value is fine.
    const wide = JSON.stringify({ templateId: 't', variables: { list: Array.from({ length: 200_000 }, () => 0) } });
    await expectDocumented(await post(wide), [201], 'a 200k-element array', 'POST');
  });

  it('huge bodies: 413 with or without Content-Length, and the connection is not left hanging', async () => {
    const huge = Buffer.alloc(3 * 1024 * 1024, 'x');
    await expectDocumented(await post(huge), [413], 'huge body with Content-Length', 'POST');
    await expectDocumented(await post(huge, {}, true), [413], 'huge chunked body', 'POST');
    await expectDocumented(
      await post(huge, { 'Content-Type': 'text/plain' }),
      [413],
      'huge body of another type',
      'POST',
    );
    // Declared huge, nothing sent: answered at once from the header.
    const declared = await raw(
      `POST /v1/generations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n{`,
    );
    expect(declared.status).toBe(413);
    await expectStillServing('declared 50 MiB');
    // Not JSON media type: 415, before authentication.
    await expectDocumented(
      await post('{"templateId":"t"}', { 'Content-Type': 'text/plain', Authorization: '' }),
      [415],
      'text/plain',
      'POST',
    );
    await expectDocumented(await post('<x/>', { 'Content-Type': 'application/xml' }), [415], 'xml', 'POST');
    // A GET with a body: the body is ignored.
    await expectDocumented(
      await request(stack.baseUrl, { path: '/v1/generations', headers: { Authorization: auth }, body: huge }),
      [200],
      'GET with a huge body',
    );
    // Several big requests at once.
    const parallel = await Promise.all(Array.from({ length: 8 }, (_, i) => post(huge, {}, i % 2 === 0)));
    for (const answer of parallel) expect(answer.status).toBe(413);
    await expectStillServing('parallel huge bodies');
  });

  it('headers: empty or overlong Idempotency-Key, odd Content-Type, odd Authorization', async () => {
    await expectDocumented(
      await post('{"templateId":"t"}', { 'Idempotency-Key': '' }),
      [422],
      'empty Idempotency-Key',
      'POST',
    );
    await expectDocumented(
      await post('{"templateId":"t"}', { 'Idempotency-Key': 'x'.repeat(300) }),
      [422],
      'long Idempotency-Key',
      'POST',
    );
    await expectDocumented(
      await post('{"templateId":"t"}', { 'Content-Type': 'application/json; charset=latin1' }),
      [201],
      'charset parameter',
      'POST',
    );
    await expectDocumented(
      await post('{"templateId":"t"}', { 'Content-Type': ';;;' }),
      [415],
      'garbage Content-Type',
      'POST',
    );
    for (const value of [
      'Bearer ' + 'x'.repeat(8000),
      'Bearer\tsvc_live_' + 'a'.repeat(40),
      'Bearer svc_live_' + 'a'.repeat(40) + ', Bearer x',
      'svc_live_' + 'a'.repeat(40),
    ]) {
      await expectDocumented(
        await post('{"templateId":"t"}', { Authorization: value }),
        [401],
        `Authorization ${value.slice(0, 30)}`,
        'POST',
      );
    }
    const twice = await raw(
      `GET /v1/generations HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nAuthorization: ${auth}\r\nConnection: close\r\n\r\n`,
    );
    expect([200, 401]).toContain(twice.status);
    await expectStillServing('two Authorization headers');
  });
});

describe('queries, paths and methods', () => {
  it('odd query strings: 422 (or 200 where the contract says so)', async () => {
    const bad = [
      '%zz',
      'pageSize=%zz',
      'pageSize=-1',
      'pageSize=1.5',
      'pageSize=1e3',
      'pageSize=0x10',
      'pageSize=%20%205',
      'pageSize=NaN',
      'pageSize=Infinity',
      'pageSize=1&pageSize=1',
      'status=PENDING&status=FAILED',
      'status[]=PENDING',
      'pageSize[$gt]=1',
      'templateId[$ne]=x',
      'pageSize',
      '=1',
      'a=1&b=2',
      'pageToken=%00',
      `pageToken=${'A'.repeat(10_000)}`,
      'pageToken=eyJ0IjowfQ.x',
      'createdAfter=%00',
      'createdAfter=2026-01-01T00:00:00Z&createdAfter=2026-01-02T00:00:00Z',
      'createdBefore=9999999-01-01T00:00:00Z',
      'status=%F0%9F%98%80',
      `x=${'y'.repeat(6000)}`,
    ];
    for (const qs of bad) {
      const answer = await request(stack.baseUrl, { path: `/v1/generations?${qs}`, headers: { Authorization: auth } });
      await expectDocumented(answer, [422], `?${qs.slice(0, 60)}`);
    }
    for (const qs of [
      '',
      'pageSize=99999999999999999999999999',
      'pageSize=0',
      'pageSize=00000000000000000001',
      'pageToken=',
      '&&&',
      'templateId=%F0%9F%98%80',
      'templateId=..%2F..%2F',
      'createdAfter=1970-01-01T00:00:00Z',
      'createdBefore=2999-12-31T23:59:59.999Z',
    ]) {
      const answer = await request(stack.baseUrl, { path: `/v1/generations?${qs}`, headers: { Authorization: auth } });
      await expectDocumented(answer, [200], `?${qs.slice(0, 60)}`);
      openapi.check({
        method: 'GET',
        path: '/v1/generations',
        status: 200,
        headers: answer.headers,
        body: answer.body,
      });
    }
  });

  it('odd paths: 404 NOT_FOUND; the id part is never trusted', async () => {
    const paths = [
      '/v1/generations/%zz',
      '/v1/generations/%00',
      '/v1/generations/..',
      '/v1/generations/%2e%2e',
      '/v1/generations/gen_',
      `/v1/generations/gen_${'a'.repeat(5000)}`,
      '/v1/generations/gen_ZZZZZZZZZZZZZZZZZZZZZZZZ',
      '/v1/generations/GEN_0123456789abcdef01234567',
      '/v1/generations/gen_0123456789abcdef01234567?pageSize=x',
      '/v1/generations/%7B%22%24ne%22%3A1%7D',
      '/v1/generations/%F0%9F%98%80',
    ];
    for (const path of paths) {
      const answer = await request(stack.baseUrl, { path, headers: { Authorization: auth } });
      await expectDocumented(answer, [404], path.slice(0, 60), 'GET', path);
    }
    for (const path of [
      '/v1//generations',
      '/v1/generations//x',
      '/v1/generations/x/',
      '/%76%31/generations',
      '/v1/generations;x',
      '/docgen.v1.GenerationService/Nope',
      '/docgen.',
      `/${'a'.repeat(5000)}`,
    ]) {
      const answer = await request(stack.baseUrl, { path, headers: { Authorization: auth } });
      expect(answer.status, path.slice(0, 60)).toBe(404);
      await expectStillServing(path);
    }
  });

  it('HEAD, OPTIONS, PUT, PATCH, DELETE, TRACE and unknown methods: 405 with Allow (or 400 from the HTTP parser)', async () => {
    for (const method of ['HEAD', 'OPTIONS', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'PROPFIND', 'PURGE']) {
      for (const path of ['/v1/generations', '/v1/generations/gen_0123456789abcdef01234567']) {
        const answer = await request(stack.baseUrl, { method, path, headers: { Authorization: auth } });
        await expectDocumented(answer, [405], `${method} ${path}`, method, path);
        expect(answer.headers.allow).toMatch(/^GET(, POST)?$/);
      }
    }
    const unknown = await raw('BREW /v1/generations HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect([400, 405]).toContain(unknown.status);
    const star = await raw('OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect([400, 404]).toContain(star.status);
    await expectStillServing('odd methods');
  });

  it('malformed HTTP: the server answers 400 or closes, and keeps serving', async () => {
    for (const bytes of [
      'GET /v1/generations HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
      'POST /v1/generations HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'GET /v1/gen erations HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /v1/generations HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
      'GET /v1/generations HTTP/9.9\r\nHost: x\r\n\r\n',
      '\x00\x01\x02\x03\r\n\r\n',
      'POST /v1/generations HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n',
      `GET /v1/generations HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`,
      'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\ngarbage',
    ]) {
      const answer = await raw(bytes, 3000);
      expect([0, 400, 413, 431, 505], JSON.stringify(bytes.slice(0, 60))).toContain(answer.status);
      await expectStillServing(JSON.stringify(bytes.slice(0, 40)));
    }
  });
});

describe('Connect and gRPC endpoints', () => {
  it('malformed RPC requests are client errors, never a 500', async () => {
    // (Unknown JSON fields are accepted here: protobuf's forward compatibility, unlike REST.)
    const path = '/docgen.v1.GenerationService/CreateGeneration';
    const headers = { Authorization: auth, 'Content-Type': 'application/json', 'Connect-Protocol-Version': '1' };
    const cases: [string, string | Buffer, Record<string, string>][] = [
      ['invalid JSON', '{', headers],
      ['wrong type', '{"templateId": 5}', headers],
      ['deep Struct', `{"templateId": "t", "variables": {"a": ${'['.repeat(100_000)}${']'.repeat(100_000)}}}`, headers],
      [
        'deep Struct within the limit of Connect',
        `{"templateId": "t", "variables": ${'{"a":'.repeat(50)}1${'}'.repeat(50)}}`,
        headers,
      ],
      ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), headers],
      ['huge', Buffer.alloc(2 * 1024 * 1024, 0x20), headers],
      ['no auth', '{"templateId": "t"}', { ...headers, Authorization: '' }],
      ['wrong media type', '{"templateId": "t"}', { ...headers, 'Content-Type': 'text/plain' }],
    ];
    for (const [what, body, h] of cases) {
      const answer = await request(stack.baseUrl, { method: 'POST', path, headers: h, body });
      expect(answer.status, `${what}: ${answer.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
      expect(answer.status, `${what}: ${answer.text.slice(0, 200)}`).toBeLessThan(500);
      await expectStillServing(`Connect ${what}`);
    }
    // Undecodable binary protobuf: connect-es itself answers `internal` (its binary parser
    // maps decode errors to Code.Internal before our handler runs). Known limitation, see
    // docs/api.md; what matters here is that the process keeps serving.
    const garbage = await request(stack.baseUrl, {
      method: 'POST',
      path,
      headers: { ...headers, 'Content-Type': 'application/proto' },
      body: Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]),
    });
    expect([400, 500]).toContain(garbage.status);
    await expectStillServing('binary garbage');
  });
});
