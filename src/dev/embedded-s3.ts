// The S3 server of `docgen dev` and of the tests: s3rver in this process on 127.0.0.1, storing
// objects as files under a directory (so a restart loses nothing).
//
// s3rver checks AWS signatures (header and presigned query, v2 and v4) but serves a request
// that carries no signature at all as anonymous. Real buckets are private, so we refuse
// unsigned requests in front of it: a presigned URL with its signature removed gets 403 too.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';

/** s3rver accepts exactly this key pair (it is built into s3rver); fine for a loopback dev server. */
export const EMBEDDED_S3_ACCESS_KEY = 'S3RVER';
export const EMBEDDED_S3_SECRET_KEY = 'S3RVER';
/** s3rver signs with whatever region the client uses; docgen's default. */
export const EMBEDDED_S3_REGION = 'us-east-1';

interface S3rverInstance {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  configureBuckets(): Promise<unknown>;
  logger: { close(): void };
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;

// s3rver is CommonJS without type declarations.
const S3rver = createRequire(import.meta.url)('@20minutes/s3rver') as S3rverConstructor;

export interface EmbeddedS3Options {
  /** Where objects are stored (created if missing). */
  directory: string;
  /** TCP port; 0 or absent picks a free one. */
  port?: number;
  /** Buckets created at start if missing. */
  buckets?: string[];
}

export interface EmbeddedS3 {
  /** http://127.0.0.1:PORT */
  readonly endpoint: string;
  readonly host: string;
  readonly port: number;
  readonly accessKey: string;
  readonly secretKey: string;
  readonly region: string;
  readonly directory: string;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

function isSigned(req: IncomingMessage): boolean {
  if (req.headers.authorization !== undefined) return true;
  const query = new URL(req.url ?? '/', 'http://s3.invalid').searchParams;
  return query.has('X-Amz-Algorithm') || query.has('Signature');
}

function refuseUnsigned(res: ServerResponse): void {
  const body =
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>' +
    '<Message>Access Denied: the request is not signed.</Message></Error>';
  res.writeHead(403, { 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

export async function startEmbeddedS3(options: EmbeddedS3Options): Promise<EmbeddedS3> {
  mkdirSync(options.directory, { recursive: true });
  const s3rver = new S3rver({
    directory: options.directory,
    silent: true,
    // Path-style only: bucket names never come from the Host header.
    vhostBuckets: false,
    configureBuckets: (options.buckets ?? []).map((name) => ({ name })),
  });
  await s3rver.configureBuckets();
  const handle = s3rver.callback();

  const server: Server = createServer((req, res) => {
    // CORS preflights carry no signature by design.
    if (req.method !== 'OPTIONS' && !isSigned(req)) {
      refuseUnsigned(res);
      return;
    }
    handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port ?? 0, host: HOST }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;

  let stopped: Promise<void> | undefined;
  return {
    endpoint: `http://${HOST}:${port}`,
    host: HOST,
    port,
    accessKey: EMBEDDED_S3_ACCESS_KEY,
    secretKey: EMBEDDED_S3_SECRET_KEY,
    region: EMBEDDED_S3_REGION,
    directory: options.directory,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        server.close(() => {
          s3rver.logger.close();
          resolve();
        });
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}
