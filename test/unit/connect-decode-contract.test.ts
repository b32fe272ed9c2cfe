// The connect-es behaviour src/rpc/decode-error-adapter.ts depends on, pinned: how the library
// itself answers a request it cannot decode, per protocol. If a connect-es upgrade changes one
// of these answers, the first test here fails: read the adapter's header, check whether a
// public option can now do its job, and adjust it. The second test checks the adapter turns
// each of those answers into docgen's documented InvalidArgument (docs/interface.md#input-rules)
// and leaves the answers of docgen's own handlers alone. In process: the router's handlers are
// called directly, with no HTTP server.
import { create, toBinary } from '@bufbuild/protobuf';
import { Code, createConnectRouter, type ConnectRouter, type ServiceImpl } from '@connectrpc/connect';
import type { UniversalHandler, UniversalServerResponse } from '@connectrpc/connect/protocol';
import { describe, expect, it } from 'vitest';
import {
  CreateGenerationRequestSchema,
  CreateGenerationResponseSchema,
  GenerationService,
} from '../../src/gen/docgen/v1/generation_pb.js';
import { validationError } from '../../src/domain/errors.ts';
import { mapErrors } from '../../src/rpc/connect-errors.ts';
import { rewriteDecodeErrors } from '../../src/rpc/decode-error-adapter.ts';

const PATH = '/docgen.v1.GenerationService/CreateGeneration';
const GARBAGE = Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]);

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}
/** A Struct nested past the protobuf decoder's recursion limit, as raw bytes. */
const DEEP = toBinary(
  CreateGenerationRequestSchema,
  create(CreateGenerationRequestSchema, { templateId: 'tpl_x', variables: nested(150) as never }),
);

function envelope(bytes: Uint8Array): Uint8Array {
  const frame = new Uint8Array(5 + bytes.length);
  new DataView(frame.buffer).setUint32(1, bytes.length);
  frame.set(bytes, 5);
  return frame;
}

interface Case {
  name: string;
  contentType: string;
  body: Uint8Array;
}
const CASES: Case[] = [
  { name: 'Connect binary, undecodable', contentType: 'application/proto', body: GARBAGE },
  { name: 'Connect binary, nested too deep', contentType: 'application/proto', body: DEEP },
  { name: 'Connect JSON, wrong type', contentType: 'application/json', body: Buffer.from('{"templateId": 5}') },
  { name: 'gRPC, undecodable', contentType: 'application/grpc', body: envelope(GARBAGE) },
  { name: 'gRPC-web, undecodable', contentType: 'application/grpc-web+proto', body: envelope(GARBAGE) },
];

/** The router as docgen's listeners build it; the implementation is never reached by these cases. */
function router(implementation: Partial<ServiceImpl<typeof GenerationService>> = {}): ConnectRouter {
  const r = createConnectRouter({ grpc: true, grpcWeb: true, connect: true });
  r.service(GenerationService, implementation);
  return r;
}

function handlerOf(r: ConnectRouter): UniversalHandler {
  const handler = r.handlers.find((h) => h.requestPath === PATH);
  if (!handler) throw new Error(`no handler for ${PATH}`);
  return handler;
}

async function call(handler: UniversalHandler, c: Case): Promise<UniversalServerResponse & { bytes: Buffer }> {
  const res = await handler({
    httpVersion: '2.0',
    url: `http://127.0.0.1${PATH}`,
    method: 'POST',
    header: new Headers({ 'content-type': c.contentType, te: 'trailers' }),
    body: (async function* () {
      yield c.body;
    })(),
    signal: new AbortController().signal,
  });
  const chunks: Uint8Array[] = [];
  if (res.body) for await (const chunk of res.body) chunks.push(chunk);
  return { ...res, bytes: Buffer.concat(chunks) };
}

/** The status an answer carries, whatever the protocol: [code name, message]. */
function statusOf(c: Case, res: UniversalServerResponse & { bytes: Buffer }): [string, string] {
  if (c.contentType.startsWith('application/grpc-web')) {
    const trailer = res.bytes.toString('latin1');
    const code = /grpc-status: ?(\d+)/.exec(trailer)?.[1] ?? '';
    const message = decodeURIComponent(/grpc-message: ?([^\r\n]*)/.exec(trailer)?.[1] ?? '');
    return [Code[Number(code)] ?? code, message];
  }
  if (c.contentType.startsWith('application/grpc')) {
    const headers = res.trailer?.get('grpc-status') ? res.trailer : res.header;
    return [Code[Number(headers?.get('grpc-status'))]!, decodeURIComponent(headers?.get('grpc-message') ?? '')];
  }
  const body = JSON.parse(res.bytes.toString('utf8')) as { code: string; message: string };
  return [body.code, body.message];
}

describe('connect-es 2.2.0: how the library answers what it cannot decode (the adapter relies on this)', () => {
  const raw = handlerOf(router());
  const expected: Record<string, [string, RegExp, number?]> = {
    'Connect binary, undecodable': ['internal', /^parse binary: /, 500],
    'Connect binary, nested too deep': ['internal', /^parse binary: .*maximum recursion depth/i, 500],
    'Connect JSON, wrong type': [
      'invalid_argument',
      /^cannot decode field docgen\.v1\.CreateGenerationRequest\.template_id from JSON/,
      400,
    ],
    'gRPC, undecodable': ['Internal', /^parse binary: /],
    'gRPC-web, undecodable': ['Internal', /^parse binary: /],
  };
  for (const c of CASES) {
    it(c.name, async () => {
      const res = await call(raw, c);
      const [code, message] = statusOf(c, res);
      const [wantCode, wantMessage, wantStatus] = expected[c.name]!;
      expect(code).toBe(wantCode);
      expect(message).toMatch(wantMessage);
      if (wantStatus !== undefined) expect(res.status).toBe(wantStatus);
    });
  }
});

describe('the decode-error adapter', () => {
  const r = router();
  rewriteDecodeErrors(r);
  const adapted = handlerOf(r);
  const expected: Record<string, string> = {
    'Connect binary, undecodable': 'body: is not a valid docgen.v1.CreateGenerationRequest message',
    'Connect binary, nested too deep': 'variables: must not be nested deeper than 32 levels',
    'Connect JSON, wrong type': 'body: is not a valid docgen.v1.CreateGenerationRequest message',
    'gRPC, undecodable': 'body: is not a valid docgen.v1.CreateGenerationRequest message',
    'gRPC-web, undecodable': 'body: is not a valid docgen.v1.CreateGenerationRequest message',
  };
  for (const c of CASES) {
    it(`${c.name}: InvalidArgument with docgen's message`, async () => {
      const res = await call(adapted, c);
      const [code, message] = statusOf(c, res);
      expect([code.toLowerCase().replace('invalidargument', 'invalid_argument'), message]).toEqual([
        'invalid_argument',
        expected[c.name],
      ]);
      if (c.contentType.startsWith('application/grpc-web'))
        expect(res.bytes.toString('latin1')).toContain('docgen-error-code: VALIDATION_ERROR');
      else if (c.contentType.startsWith('application/grpc'))
        expect(res.trailer?.get('docgen-error-code') ?? res.header?.get('docgen-error-code')).toBe('VALIDATION_ERROR');
      else {
        expect(res.status).toBe(400);
        expect(res.header?.get('docgen-error-code')).toBe('VALIDATION_ERROR');
      }
    });
  }

  it("leaves the answers of docgen's own handlers alone", async () => {
    // A handler class, wrapped as docgen's listeners wrap theirs (its errors carry docgen-error-code).
    class Refusing {
      async createGeneration(): Promise<never> {
        throw validationError([{ field: 'templateId', issue: 'is required' }]);
      }
    }
    const own = router(mapErrors(new Refusing()));
    rewriteDecodeErrors(own);
    const valid = toBinary(CreateGenerationRequestSchema, create(CreateGenerationRequestSchema, { templateId: '' }));
    const res = await call(handlerOf(own), { name: 'own', contentType: 'application/proto', body: valid });
    expect(JSON.parse(res.bytes.toString('utf8'))).toEqual({
      code: 'invalid_argument',
      message: 'templateId: is required',
    });
    expect(res.header?.get('docgen-error-code')).toBe('VALIDATION_ERROR');
    // A success passes through byte for byte.
    const ok = router({ createGeneration: async () => create(CreateGenerationResponseSchema, {}) });
    rewriteDecodeErrors(ok);
    const answer = await call(handlerOf(ok), { name: 'ok', contentType: 'application/proto', body: valid });
    expect(answer.status).toBe(200);
    expect(answer.bytes.length).toBe(0);
  });
});
