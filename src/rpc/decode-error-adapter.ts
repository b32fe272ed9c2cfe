// ONE adapter over connect-es's wire answers (pinned: @connectrpc/connect 2.2.0, exact in
// package.json). connect-es decodes a request before any interceptor or handler runs, and
// reports a message it cannot decode as `Internal` ("parse binary: …": Connect binary, gRPC,
// gRPC-web) or as `InvalidArgument` with the protobuf library's text (Connect JSON). Both are
// the client's fault, and neither text is ours (docs/interface.md#input-rules).
//
// Why an adapter: connect-es has no public extension point for this. Interceptors and the
// `requestGate` option run on either side of decoding but never see its failure; the
// `jsonOptions`/`binaryOptions` handler options only tune the protobuf reader, whose errors
// connect-es re-wraps with its own code. So this wraps each UniversalHandler of a router (the
// public `ConnectRouter.handlers`, as connect-es's own server adapters read them) and rewrites
// such answers to InvalidArgument with docgen's message, the one REST gives for the same input:
// a message nested past the decoder's recursion limit can only be deep `variables` (the one
// recursive field); anything else is "body: is not a valid <message>". Answers of our own
// handlers carry the `docgen-error-code` header and are left alone.
//
// test/unit/connect-decode-contract.test.ts pins the library's answers this relies on: it fails
// when a connect-es upgrade changes them (then check whether a public option exists by now).
import { Code } from '@connectrpc/connect';
import type { ConnectRouter } from '@connectrpc/connect';
import type { UniversalHandler, UniversalServerResponse } from '@connectrpc/connect/protocol';
import { VARIABLES_TOO_DEEP } from '../generations/create-input.ts';
import { ERROR_CODE_HEADER } from './connect-errors.ts';

function isDecodeFailure(code: string, message: string): boolean {
  if (code === 'internal') return message.startsWith('parse binary:');
  return code === 'invalid_argument';
}

function ourMessage(original: string, handler: UniversalHandler): string {
  if (/maximum recursion depth/i.test(original)) return `${VARIABLES_TOO_DEEP.field}: ${VARIABLES_TOO_DEEP.issue}`;
  return `body: is not a valid ${handler.method.input.typeName} message`;
}

async function readAll(body: AsyncIterable<Uint8Array> | undefined): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  if (body) for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function* replay(chunks: Uint8Array[]): AsyncIterable<Uint8Array> {
  yield* chunks;
}

/** Connect protocol: a unary error is a JSON body {code, message} with an HTTP status. */
async function rewriteConnectError(
  res: UniversalServerResponse,
  handler: UniversalHandler,
): Promise<UniversalServerResponse> {
  const header = res.header ?? new Headers();
  const encoded = header.get('content-encoding');
  if (
    res.status < 400 ||
    header.has(ERROR_CODE_HEADER) ||
    !header.get('content-type')?.startsWith('application/json') ||
    encoded
  )
    return res;
  const bytes = await readAll(res.body);
  let error: { code?: unknown; message?: unknown } | undefined;
  try {
    error = JSON.parse(bytes.toString('utf8'));
  } catch {
    // not an error body after all
  }
  if (typeof error?.code !== 'string' || !isDecodeFailure(error.code, String(error.message ?? ''))) {
    return { ...res, body: replay([bytes]) };
  }
  const body = Buffer.from(
    JSON.stringify({ code: 'invalid_argument', message: ourMessage(String(error.message ?? ''), handler) }),
  );
  header.set('content-length', String(body.length));
  header.set(ERROR_CODE_HEADER, 'VALIDATION_ERROR');
  return { ...res, status: 400, header, body: replay([body]) };
}

/** gRPC: the status travels in grpc-status/grpc-message (trailer, or header when trailers-only). */
function rewriteGrpcStatus(headers: Headers | undefined, handler: UniversalHandler): void {
  const status = headers?.get('grpc-status');
  if (!headers || status === null || status === undefined || headers.has(ERROR_CODE_HEADER)) return;
  const message = decodeURIComponent(headers.get('grpc-message') ?? '');
  const code =
    status === String(Code.Internal) ? 'internal' : status === String(Code.InvalidArgument) ? 'invalid_argument' : '';
  if (!isDecodeFailure(code, message)) return;
  headers.set('grpc-status', String(Code.InvalidArgument));
  headers.set('grpc-message', encodeURIComponent(ourMessage(message, handler)));
  headers.set(ERROR_CODE_HEADER, 'VALIDATION_ERROR');
}

const GRPC_WEB_TRAILER_FLAG = 0x80;

/** gRPC-web: the trailer is the body's last frame (flag 0x80), HTTP/1-style header lines. */
async function rewriteGrpcWebError(
  res: UniversalServerResponse,
  handler: UniversalHandler,
): Promise<UniversalServerResponse> {
  const bytes = await readAll(res.body);
  // Find the last frame: walk the 5-byte-prefixed frames from the start.
  let offset = 0;
  let last = -1;
  while (offset + 5 <= bytes.length) {
    last = offset;
    offset += 5 + bytes.readUInt32BE(offset + 1);
  }
  if (last < 0 || offset !== bytes.length || (bytes[last]! & GRPC_WEB_TRAILER_FLAG) === 0)
    return { ...res, body: replay([bytes]) };
  const trailer = new Headers();
  for (const line of bytes
    .subarray(last + 5)
    .toString('latin1')
    .split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) trailer.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  if (trailer.has(ERROR_CODE_HEADER)) return { ...res, body: replay([bytes]) };
  rewriteGrpcStatus(trailer, handler);
  if (!trailer.has(ERROR_CODE_HEADER)) return { ...res, body: replay([bytes]) };
  let lines = '';
  trailer.forEach((value, key) => {
    lines += `${key}: ${value}\r\n`;
  });
  const text = Buffer.from(lines, 'latin1');
  const prefix = Buffer.alloc(5);
  prefix[0] = GRPC_WEB_TRAILER_FLAG;
  prefix.writeUInt32BE(text.length, 1);
  const body = Buffer.concat([bytes.subarray(0, last), prefix, text]);
  const header = res.header ?? new Headers();
  header.delete('content-length');
  return { ...res, header, body: replay([body]) };
}

function wrap(handler: UniversalHandler): UniversalHandler {
  const wrapped = async (req: Parameters<UniversalHandler>[0]) => {
    const res = await handler(req);
    const contentType = res.header?.get('content-type') ?? '';
    if (!contentType.startsWith('application/grpc')) return rewriteConnectError(res, handler);
    if (contentType.startsWith('application/grpc-web')) return rewriteGrpcWebError(res, handler);
    rewriteGrpcStatus(res.header, handler);
    rewriteGrpcStatus(res.trailer, handler);
    const body = res.body;
    if (!body) return res;
    return {
      ...res,
      // The trailer may only be complete once the body has been sent.
      body: (async function* () {
        yield* body;
        rewriteGrpcStatus(res.trailer, handler);
      })(),
    };
  };
  return Object.assign(wrapped, {
    method: handler.method,
    service: handler.service,
    requestPath: handler.requestPath,
    protocolNames: handler.protocolNames,
    allowedMethods: handler.allowedMethods,
    supportedContentType: handler.supportedContentType,
  }) as UniversalHandler;
}

/** Call at the end of `routes`: every handler registered so far gets docgen's decode errors. */
export function rewriteDecodeErrors(router: ConnectRouter): void {
  const handlers = router.handlers as UniversalHandler[];
  for (let i = 0; i < handlers.length; i++) handlers[i] = wrap(handlers[i]!);
}
