// @docgen/client/connect: docgen.v1.GenerationService and BatchService over gRPC, Connect or gRPC-web, for
// internal services. The messages and the service are docgen's generated code
// (protoc-gen-es, from proto/docgen/v1), shipped in this package. Needs the peer dependencies
// @connectrpc/connect, @connectrpc/connect-node and @bufbuild/protobuf.
import { createClient, type Client, type Interceptor, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { BatchService } from './gen/batch_pb.js';
import { GenerationService } from './gen/generation_pb.js';

export * from './gen/generation_pb.js';
export * from './gen/batch_pb.js';

export type GenerationClient = Client<typeof GenerationService>;
export type BatchClient = Client<typeof BatchService>;

export interface DocgenConnectOptions {
  /** docgen's public listener, e.g. `http://docgen-api:8080` (cleartext HTTP/2 for gRPC works). */
  baseUrl: string;
  /** `svc_live_…` or `svc_test_…`, sent as `authorization: Bearer …` on every call. */
  apiKey: string;
  /** Default `grpc` (HTTP/2). `connect` and `grpc-web` run over HTTP/1.1 unless `httpVersion` says 2. */
  protocol?: 'grpc' | 'connect' | 'grpc-web';
  httpVersion?: '1.1' | '2';
  /** More interceptors (tracing, logging), run after the one that adds the API key. */
  interceptors?: Interceptor[];
}

/** Adds `authorization: Bearer <apiKey>` to every call (for transports you build yourself). */
export function apiKeyInterceptor(apiKey: string): Interceptor {
  return (next) => (req) => {
    req.header.set('authorization', `Bearer ${apiKey}`);
    return next(req);
  };
}

/** A transport to docgen's public listener with the API key on every call. */
export function createDocgenTransport(options: DocgenConnectOptions): Transport {
  if (typeof options.apiKey !== 'string' || options.apiKey === '')
    throw new TypeError('apiKey must be the API key (svc_live_… or svc_test_…)');
  const interceptors = [apiKeyInterceptor(options.apiKey), ...(options.interceptors ?? [])];
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  switch (options.protocol ?? 'grpc') {
    case 'grpc':
      return createGrpcTransport({ baseUrl, interceptors });
    case 'connect':
      return options.httpVersion === '2'
        ? createConnectTransport({ baseUrl, interceptors, httpVersion: '2' })
        : createConnectTransport({ baseUrl, interceptors, httpVersion: '1.1' });
    case 'grpc-web':
      return options.httpVersion === '2'
        ? createGrpcWebTransport({ baseUrl, interceptors, httpVersion: '2' })
        : createGrpcWebTransport({ baseUrl, interceptors, httpVersion: '1.1' });
    default:
      throw new TypeError(`protocol must be grpc, connect or grpc-web, not ${String(options.protocol)}`);
  }
}

/** A GenerationService client: `createGeneration`, `getGeneration`, `listGenerations`. */
export function createGenerationClient(options: DocgenConnectOptions): GenerationClient {
  return createClient(GenerationService, createDocgenTransport(options));
}

/** A BatchService client: `createBatch`, `getBatch` (list the items with `listGenerations({ batchId })`). */
export function createBatchClient(options: DocgenConnectOptions): BatchClient {
  return createClient(BatchService, createDocgenTransport(options));
}

/**
 * Call headers for `Prefer: wait` on CreateGeneration: the answer waits up to `seconds` (at
 * most 30) for the final state; the response header `preference-applied` says it did.
 */
export function preferWait(seconds: number): { prefer: string } {
  if (!Number.isInteger(seconds) || seconds < 0) throw new RangeError('wait must be a whole number of seconds');
  return { prefer: `wait=${seconds}` };
}
