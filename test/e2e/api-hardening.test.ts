// Hardening of the listeners and of input: connections that send nothing or crawl are closed,
// an oversized body gets an answer the client can read, and bad input (control characters,
// deep nesting, undecodable messages) is a 4xx with the same message over REST, Connect JSON,
// Connect binary and gRPC; never a 5xx. Real parts throughout (see api-stack.ts).
import net from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateGenerationRequestSchema, GenerationService } from '../../src/gen/docgen/v1/generation_pb.js';
import { postJson, publishedTemplate, request, startApiStack, type ApiStack } from './api-stack.ts';

let stack: ApiStack;
let secret: string;
let templateId: string;

beforeAll(async () => {
  stack = await startApiStack();
  const ws = await stack.workspace('hardening');
  secret = (await stack.key(ws)).secret;
  templateId = await publishedTemplate(stack.admin, ws);
});

afterAll(async () => {
  await stack?.close();
});

/**
 * Writes `head` (and optionally a body) on a raw connection; resolves with all bytes received
 * and when the server closed.
 */
function rawExchange(
  port: number,
  write: (socket: net.Socket) => void,
): Promise<{ received: string; closedAfterMs: number; error?: string }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    let error: string | undefined;
    const socket = net.connect(port, '127.0.0.1', () => write(socket));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err) => {
      error = (err as NodeJS.ErrnoException).code ?? err.message;
    });
    socket.on('close', () =>
      resolve({ received: Buffer.concat(chunks).toString('latin1'), closedAfterMs: Date.now() - started, error }),
    );
  });
}

function rpcClient(kind: 'connect-json' | 'connect-binary' | 'grpc') {
  const baseUrl = stack.baseUrl;
  const transport =
    kind === 'grpc'
      ? createGrpcTransport({ baseUrl })
      : createConnectTransport({ baseUrl, httpVersion: '1.1', useBinaryFormat: kind === 'connect-binary' });
  return createClient(GenerationService, transport);
}

const RPC_KINDS = ['connect-json', 'connect-binary', 'grpc'] as const;

async function rpcError(
  kind: (typeof RPC_KINDS)[number],
  variables: Record<string, unknown>,
  id = templateId,
): Promise<ConnectError> {
  try {
    await rpcClient(kind).createGeneration(
      { templateId: id, variables: variables as never },
      { headers: { authorization: `Bearer ${secret}` } },
    );
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error(`${kind}: the call succeeded`);
}

function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

describe('connection hygiene', () => {
  it('closes a silent connection and one that sends its headers at a crawl within 15 s', async () => {
    const silent = rawExchange(stack.publicPort, () => {});
    const crawl = rawExchange(stack.publicPort, (socket) => {
      const head = 'GET /v1/generations HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(100);
      let i = 0;
      const timer = setInterval(() => {
        if (socket.destroyed || i >= head.length) return clearInterval(timer);
        socket.write(head[i++]!);
      }, 1000);
      socket.on('close', () => clearInterval(timer));
    });
    const adminSilent = rawExchange(stack.app.adminPort!, () => {});
    for (const result of await Promise.all([silent, crawl, adminSilent])) {
      expect(result.closedAfterMs).toBeGreaterThan(5_000);
      expect(result.closedAfterMs).toBeLessThan(15_000);
    }
  }, 30_000);

  it('answers a 3 MiB body sent with Content-Length and Connection: close with a readable 413', async () => {
    const body = Buffer.alloc(3 * 1024 * 1024, 0x20);
    const result = await rawExchange(stack.publicPort, (socket) => {
      socket.write(
        `POST /v1/generations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      );
      socket.write(body);
    });
    expect(result.error).toBeUndefined();
    expect(result.received).toMatch(/^HTTP\/1\.1 413 /);
    expect(result.received).toContain('PAYLOAD_TOO_LARGE');
  });

  it('answers a body over the admin read limit with a readable error, not a reset', async () => {
    const body = Buffer.alloc(17 * 1024 * 1024, 0x20);
    const result = await rawExchange(stack.app.adminPort!, (socket) => {
      socket.write(
        `POST /docgen.admin.v1.WorkspaceService/ListWorkspaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      );
      socket.write(body);
    });
    // connect-es stops reading at its limit; the answer must still have arrived in full.
    expect(result.received).toMatch(/^HTTP\/1\.1 4\d\d [^]*\r\n\r\n\{"code":"resource_exhausted"/);
  });
});

describe('input classes that are never a 5xx', () => {
  it.each([
    [
      'a NUL in a top-level name',
      { ['na\u0000me']: 'x' },
      'variables["na\\u0000me"]: has a name that contains the control character U+0000',
    ],
    [
      'a NUL in a nested name',
      { customer: { ['a\u0000']: 1 } },
      'variables.customer["a\\u0000"]: has a name that contains the control character U+0000',
    ],
    [
      'a NUL in a name inside a list',
      { items: ['ok', { ['b\u0000']: 1 }] },
      'variables.items[1]["b\\u0000"]: has a name that contains the control character U+0000',
    ],
    [
      'a DEL in a name',
      { ['a\u007f']: 1 },
      'variables["a\u007f"]: has a name that contains the control character U+007F',
    ],
    ['variables nested 40 levels', nested(40), 'variables: must not be nested deeper than 32 levels'],
    ['variables nested 200 levels', nested(200), 'variables: must not be nested deeper than 32 levels'],
  ])('%s: REST 422 and InvalidArgument over every RPC protocol, with one message', async (_, variables, message) => {
    const rest = await postJson(stack.baseUrl, secret, { templateId, variables });
    expect(rest.status).toBe(422);
    expect(rest.body.error.code).toBe('VALIDATION_ERROR');
    expect(rest.body.error.message).toBe(message);
    for (const kind of RPC_KINDS) {
      const err = await rpcError(kind, variables);
      expect({ kind, code: Code[err.code], message: err.rawMessage }).toEqual({
        kind,
        code: 'InvalidArgument',
        message,
      });
    }
  });

  it('accepts any character JSON can carry in values, control characters included', async () => {
    const answer = await postJson(stack.baseUrl, secret, {
      templateId,
      variables: { name: 'Zoë\t李\r\n😀\u0000\u001b' },
    });
    expect(answer.status).toBe(201);
  });

  it('a message the decoder cannot read is InvalidArgument over Connect binary, gRPC and gRPC-web', async () => {
    const garbage = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]);
    const connect = await request(stack.baseUrl, {
      method: 'POST',
      path: '/docgen.v1.GenerationService/CreateGeneration',
      headers: { 'Content-Type': 'application/proto', authorization: `Bearer ${secret}` },
      body: garbage,
    });
    expect(connect.status).toBe(400);
    expect(JSON.parse(connect.text).code).toBe('invalid_argument');
    // A Struct nested beyond the protobuf decoder's own recursion limit, sent as raw bytes.
    const deep = toBinary(
      CreateGenerationRequestSchema,
      create(CreateGenerationRequestSchema, { templateId, variables: nested(150) as never }),
    );
    const binary = await request(stack.baseUrl, {
      method: 'POST',
      path: '/docgen.v1.GenerationService/CreateGeneration',
      headers: { 'Content-Type': 'application/proto', authorization: `Bearer ${secret}` },
      body: Buffer.from(deep),
    });
    expect(binary.status).toBe(400);
    expect(JSON.parse(binary.text)).toMatchObject({
      code: 'invalid_argument',
      message: 'variables: must not be nested deeper than 32 levels',
    });
    // gRPC-web carries its status in a trailer frame at the end of the body.
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, garbage.length]), garbage]);
    const web = await request(stack.baseUrl, {
      method: 'POST',
      path: '/docgen.v1.GenerationService/CreateGeneration',
      headers: { 'Content-Type': 'application/grpc-web+proto', 'X-Grpc-Web': '1', authorization: `Bearer ${secret}` },
      body: frame,
    });
    expect(web.status).toBe(200);
    expect(web.text).toMatch(/grpc-status: ?3\r\n/);
    expect(web.text).toContain(encodeURIComponent('body: is not a valid docgen.v1.CreateGenerationRequest message'));
  });
});
