// One HTTP exchange with docgen, retried where that is safe: on 429, 502, 503, 504 and when no
// answer came (refused, reset, timed out). A retry waits what Retry-After says, else an
// exponential back-off with jitter. Only idempotent requests are retried: reads, and creates
// that carry an Idempotency-Key (the resources always send one), so a retry never makes a
// second document.
import { DocgenError, type FieldIssue } from './errors.ts';
import { VERSION } from './version.ts';

export interface HttpOptions {
  baseUrl: string;
  apiKey: string;
  /** Retries after the first attempt. Default 3. */
  maxRetries: number;
  /** Time one attempt may take. Default 60 s (a waiting create gets its wait on top). */
  timeoutMs: number;
  /** A Retry-After longer than this is not waited for: the error is thrown. Default 60 s. */
  maxRetryDelayMs: number;
  fetch: typeof fetch;
}

export interface CallOptions {
  query?: Record<string, string> | undefined;
  body?: unknown;
  headers?: Record<string, string> | undefined;
  /** Safe to repeat: reads, and writes with an Idempotency-Key. */
  idempotent: boolean;
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface Answer<T> {
  status: number;
  headers: Headers;
  body: T;
}

const RETRY_STATUSES = new Set([429, 502, 503, 504]);
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 8_000;

export class HttpClient {
  readonly options: HttpOptions;
  private readonly base: string;

  constructor(options: HttpOptions) {
    this.options = options;
    // The listener's address; a trailing `/v1` is tolerated (paths carry it).
    this.base = options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  }

  /** A JSON call to docgen; an answer other than 2xx is thrown as a DocgenError. */
  async call<T>(method: string, path: string, options: CallOptions): Promise<Answer<T>> {
    const url = new URL(this.base + path);
    for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.options.apiKey}`,
      Accept: 'application/json',
      'User-Agent': `docgen-client-typescript/${VERSION}`,
      ...options.headers,
    };
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const res = await this.exchange(url.href, { method, headers, body }, options);
    const text = await res.text();
    if (res.ok)
      return { status: res.status, headers: res.headers, body: (text === '' ? undefined : JSON.parse(text)) as T };
    throw errorFromAnswer(res, text);
  }

  /**
   * Fetches with retries; returns the last answer (a 429/5xx too, once the retries are spent).
   * No answer at all is a DocgenError CONNECTION_ERROR or TIMEOUT.
   */
  async exchange(
    url: string,
    init: { method: string; headers?: Record<string, string>; body?: string | undefined },
    options: Pick<CallOptions, 'idempotent' | 'timeoutMs' | 'signal'>,
  ): Promise<Response> {
    const { maxRetries } = this.options;
    for (let attempt = 0; ; attempt++) {
      const retriesLeft = options.idempotent && attempt < maxRetries;
      let res: Response;
      try {
        res = await this.attempt(url, init, options.timeoutMs ?? this.options.timeoutMs, options.signal);
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason ?? err;
        const timedOut = err instanceof AttemptTimeout;
        if (!retriesLeft) {
          throw new DocgenError({
            status: 0,
            code: timedOut ? 'TIMEOUT' : 'CONNECTION_ERROR',
            message: timedOut
              ? `${init.method} ${new URL(url).pathname}: no answer within ${(err as AttemptTimeout).ms} ms`
              : `${init.method} ${new URL(url).pathname}: ${describeFetchError(err)}`,
            cause: err,
          });
        }
        await sleep(backoff(attempt), options.signal);
        continue;
      }
      if (!RETRY_STATUSES.has(res.status) || !retriesLeft) return res;
      const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
      if (retryAfterMs !== undefined && retryAfterMs > this.options.maxRetryDelayMs) return res;
      await res.body?.cancel().catch(() => {});
      await sleep(retryAfterMs ?? backoff(attempt), options.signal);
    }
  }

  private async attempt(
    url: string,
    init: { method: string; headers?: Record<string, string>; body?: string | undefined },
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<Response> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new AttemptTimeout(timeoutMs)), timeoutMs);
    const forward = () => controller.abort(signal?.reason);
    if (signal?.aborted) forward();
    else signal?.addEventListener('abort', forward, { once: true });
    try {
      return await this.options.fetch(url, { ...init, signal: controller.signal });
    } catch (err) {
      if (controller.signal.reason instanceof AttemptTimeout) throw controller.signal.reason;
      throw err;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forward);
    }
  }
}

class AttemptTimeout extends Error {
  readonly ms: number;
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.ms = ms;
  }
}

/** docgen's error body `{"error": {"code", "message", "details"}}`, or the bare status. */
function errorFromAnswer(res: Response, text: string): DocgenError {
  let error: { code?: unknown; message?: unknown; details?: unknown } | undefined;
  try {
    error = (JSON.parse(text) as { error?: typeof error }).error;
  } catch {
    error = undefined;
  }
  const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
  return new DocgenError({
    status: res.status,
    code: typeof error?.code === 'string' ? error.code : `HTTP_${res.status}`,
    message:
      typeof error?.message === 'string'
        ? error.message
        : `HTTP ${res.status} ${res.statusText}`.trim() + (text ? `: ${text.slice(0, 200)}` : ''),
    requestId: res.headers.get('x-request-id') ?? undefined,
    retryAfter: retryAfterMs === undefined ? undefined : Math.ceil(retryAfterMs / 1000),
    details: Array.isArray(error?.details) ? (error.details as FieldIssue[]) : [],
  });
}

/** Retry-After as whole seconds or an HTTP date, in milliseconds; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  // An HTTP date names its day and month ("Wed, 21 Oct 2026 07:28:00 GMT"); Date.parse would
  // also take "-1" or "2026" for dates.
  if (!/^\s*[A-Za-z]{3},/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** 0.5 s, 1 s, 2 s … up to 8 s, each between half and all of it (jitter spreads retrying clients). */
function backoff(attempt: number): number {
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function describeFetchError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`;
  return err instanceof Error ? err.message : String(err);
}
