// Generated documents in S3/MinIO, through the minio client.
//
// Two clients: one for the endpoint docgen itself reaches (DOCGEN_S3_ENDPOINT) and one for the
// endpoint clients download from (DOCGEN_S3_PUBLIC_ENDPOINT). A presigned URL's signature
// covers the Host header, so it must be minted for the public host; that client only signs
// (its region is set, so it never asks the server for the bucket location) and never connects.
import { Client } from 'minio';
import { DomainError, errorMessage } from '../domain/errors.ts';

export interface ObjectStoreOptions {
  endpoint: URL;
  /** Host clients download from; defaults to endpoint. Must not carry a path. */
  publicEndpoint?: URL;
  accessKey: string;
  secretKey: string;
  bucket: string;
  region: string;
  /** Path-style URLs (http://host/bucket/key). Default true: MinIO and most S3-compatibles need it. */
  pathStyle?: boolean;
  /** Upper bound of one storage call. Default 30 s. */
  requestTimeoutMs?: number;
}

export interface PutPdfOptions {
  /** File name offered when the PDF is downloaded (Content-Disposition). */
  downloadFilename: string;
  /** `attachment` (default) downloads; `inline` lets a browser show it. */
  disposition?: 'attachment' | 'inline';
  /** Stored with the object (x-amz-meta-*): lower-case names, ASCII values. */
  metadata?: Record<string, string>;
}

export interface ObjectStore {
  readonly bucket: string;
  /** Creates the bucket if it does not exist. */
  ensureBucket(): Promise<void>;
  putPdf(key: string, pdf: Uint8Array, options: PutPdfOptions): Promise<void>;
  /** The metadata stored with a PDF (PutPdfOptions.metadata), null when there is no such object. */
  pdfMetadata(key: string): Promise<Record<string, string> | null>;
  /** A GET URL on the public endpoint, valid for `seconds` (1..604800). No network call. */
  presignGet(key: string, seconds: number): Promise<string>;
  exists(key: string): Promise<boolean>;
  /** Stores bytes under key (assets). */
  putObject(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The object's bytes (assets); throws DomainError UNAVAILABLE when storage fails or it is missing. */
  getObject(key: string): Promise<Buffer>;
  /** Deletes the object; deleting a missing object is not an error. */
  remove(key: string): Promise<void>;
  /**
   * Streams the object into a file (never whole in memory: batch merges). False when there is
   * no such object; throws DomainError UNAVAILABLE when storage fails.
   */
  downloadToFile(key: string, file: string): Promise<boolean>;
  /** putPdf from a file, streamed (a merged batch PDF may be larger than memory should hold). */
  putPdfFile(key: string, file: string, options: PutPdfOptions): Promise<void>;
}

function clientFor(url: URL, options: ObjectStoreOptions): Client {
  if (url.pathname !== '/' && url.pathname !== '') {
    throw new Error(`S3 endpoint ${url.href} has a path; use the bare scheme://host[:port] of the S3 server.`);
  }
  const useSSL = url.protocol === 'https:';
  return new Client({
    endPoint: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? (useSSL ? 443 : 80) : Number(url.port),
    useSSL,
    accessKey: options.accessKey,
    secretKey: options.secretKey,
    region: options.region,
    pathStyle: options.pathStyle ?? true,
  });
}

/** `attachment; filename="report.pdf"; filename*=UTF-8''r%C3%A9port.pdf` (RFC 6266). */
export function contentDisposition(filename: string, disposition: 'attachment' | 'inline' = 'attachment'): string {
  const asciiFallback = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${disposition}; filename="${asciiFallback}"; filename*=UTF-8''${encoded}`;
}

/** The headers a stored PDF carries. */
function pdfMeta({ downloadFilename, disposition, metadata }: PutPdfOptions): Record<string, string> {
  const meta: Record<string, string> = {
    'Content-Type': 'application/pdf',
    'Content-Disposition': contentDisposition(downloadFilename, disposition),
  };
  for (const [name, value] of Object.entries(metadata ?? {})) meta[`X-Amz-Meta-${name}`] = value;
  return meta;
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function createObjectStore(options: ObjectStoreOptions): ObjectStore {
  const client = clientFor(options.endpoint, options);
  const signer = clientFor(options.publicEndpoint ?? options.endpoint, options);
  const { bucket } = options;
  const timeoutMs = options.requestTimeoutMs ?? 30_000;

  // The minio client has no request time-out; a hung server must not hang a render forever.
  const call = async <T>(what: string, operation: () => Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([operation(), timeout]);
    } catch (err) {
      const code = errorCode(err);
      const reason = errorMessage(err);
      throw new DomainError(
        'UNAVAILABLE',
        `Object storage (${options.endpoint.host}, bucket ${bucket}): ${what} failed${code ? ` [${code}]` : ''}: ${reason}`,
        {
          retryAfterSeconds: 1,
          cause: err,
        },
      );
    } finally {
      clearTimeout(timer);
    }
  };

  /** The object's stat, null when it does not exist. */
  const statOrNull = (key: string) =>
    call(`checking ${key}`, async () => {
      try {
        return await client.statObject(bucket, key);
      } catch (err) {
        if (errorCode(err) === 'NotFound' || errorCode(err) === 'NoSuchKey') return null;
        throw err;
      }
    });

  return {
    bucket,

    async ensureBucket() {
      await call('creating the bucket', async () => {
        if (await client.bucketExists(bucket)) return;
        try {
          await client.makeBucket(bucket, options.region);
        } catch (err) {
          // Another replica created it first.
          if (errorCode(err) !== 'BucketAlreadyOwnedByYou' && errorCode(err) !== 'BucketAlreadyExists') throw err;
        }
      });
    },

    async putPdf(key, pdf, options) {
      const body = Buffer.isBuffer(pdf) ? pdf : Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
      await call(`storing ${key}`, () => client.putObject(bucket, key, body, body.length, pdfMeta(options)));
    },

    async putPdfFile(key, file, options) {
      await call(`storing ${key}`, () => client.fPutObject(bucket, key, file, pdfMeta(options)));
    },

    async downloadToFile(key, file) {
      return call(`reading ${key}`, async () => {
        try {
          await client.fGetObject(bucket, key, file);
          return true;
        } catch (err) {
          if (errorCode(err) === 'NotFound' || errorCode(err) === 'NoSuchKey') return false;
          throw err;
        }
      });
    },

    async pdfMetadata(key) {
      const stat = await statOrNull(key);
      if (!stat) return null;
      const found: Record<string, string> = {};
      for (const [name, value] of Object.entries(stat.metaData ?? {})) {
        if (typeof value === 'string') found[name.toLowerCase().replace(/^x-amz-meta-/, '')] = value;
      }
      return found;
    },

    async presignGet(key, seconds) {
      if (!Number.isInteger(seconds) || seconds < 1 || seconds > 604_800) {
        throw new RangeError(`presignGet: seconds must be a whole number from 1 to 604800, got ${seconds}`);
      }
      return call(`signing a URL for ${key}`, () => signer.presignedGetObject(bucket, key, seconds));
    },

    async exists(key) {
      return (await statOrNull(key)) !== null;
    },

    async putObject(key, bytes, contentType) {
      await call(`storing ${key}`, () =>
        client.putObject(bucket, key, bytes, bytes.length, { 'Content-Type': contentType }),
      );
    },

    async getObject(key) {
      return call(`reading ${key}`, async () => {
        const stream = await client.getObject(bucket, key);
        const chunks: Buffer[] = [];
        for await (const chunk of stream) chunks.push(chunk as Buffer);
        return Buffer.concat(chunks);
      });
    },

    async remove(key) {
      await call(`deleting ${key}`, () => client.removeObject(bucket, key));
    },
  };
}
