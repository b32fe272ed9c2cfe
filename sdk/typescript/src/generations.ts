import { randomUUID } from 'node:crypto';
import { DocgenError, GenerationTimeoutError } from './errors.ts';
import { sleep, type HttpClient } from './http.ts';
import type { CreateGenerationInput, Generation, GenerationPage, ListGenerationsFilters } from './types.ts';

/** The longest `Prefer: wait` docgen honours. */
export const MAX_WAIT_SECONDS = 30;

export interface CreateOptions {
  /**
   * Same key, same body: the same generation (remembered 24 h). Default: a fresh UUID per call,
   * kept across its retries.
   */
  idempotencyKey?: string;
  /** Seconds (1 to 30) the server may hold the answer until the generation is final (`Prefer: wait`). */
  wait?: number;
  signal?: AbortSignal;
}

export interface CreateAndWaitOptions {
  /** Give up after this long (GenerationTimeoutError). Default 30 s, the interface's polling budget. */
  timeoutMs?: number;
  idempotencyKey?: string;
  /** Between reads once the server's wait is over. Default 1 s, as the interface recommends. */
  pollIntervalMs?: number;
  signal?: AbortSignal;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

const isFinal = (g: Generation) => g.status === 'COMPLETED' || g.status === 'FAILED';

/** Generations of the API key's workspace: `POST/GET /v1/generations`. */
export class Generations {
  private readonly http: HttpClient;

  constructor(http: HttpClient) {
    this.http = http;
  }

  /** Creates a generation; with `wait`, the answer may already be final. */
  async create(input: CreateGenerationInput, options: CreateOptions = {}): Promise<Generation> {
    const headers: Record<string, string> = { 'Idempotency-Key': options.idempotencyKey ?? randomUUID() };
    let timeoutMs: number | undefined;
    if (options.wait !== undefined) {
      if (!Number.isInteger(options.wait) || options.wait < 0) {
        throw new RangeError(`wait must be a whole number of seconds (0 to ${MAX_WAIT_SECONDS}), not ${options.wait}`);
      }
      if (options.wait > 0) headers.Prefer = `wait=${options.wait}`;
      timeoutMs = this.http.options.timeoutMs + Math.min(options.wait, MAX_WAIT_SECONDS) * 1000;
    }
    const answer = await this.http.call<Generation>('POST', '/v1/generations', {
      body: input,
      headers,
      idempotent: true,
      timeoutMs,
      signal: options.signal,
    });
    return answer.body;
  }

  async get(id: string, options: RequestOptions = {}): Promise<Generation> {
    requireId(id, 'generation id');
    const answer = await this.http.call<Generation>('GET', `/v1/generations/${encodeURIComponent(id)}`, {
      idempotent: true,
      signal: options.signal,
    });
    return answer.body;
  }

  /** One page; `pageToken` is the previous page's `nextPageToken`. */
  async listPage(
    filters: ListGenerationsFilters & { pageToken?: string } = {},
    options: RequestOptions = {},
  ): Promise<GenerationPage> {
    const answer = await this.http.call<GenerationPage>('GET', '/v1/generations', {
      query: listQuery(filters),
      idempotent: true,
      signal: options.signal,
    });
    return answer.body;
  }

  /** Every generation that matches, newest first, fetching page after page as the loop asks. */
  async *list(filters: ListGenerationsFilters = {}, options: RequestOptions = {}): AsyncGenerator<Generation> {
    let pageToken: string | undefined;
    do {
      const page = await this.listPage({ ...filters, ...(pageToken ? { pageToken } : {}) }, options);
      yield* page.generations;
      pageToken = page.nextPageToken ?? undefined;
    } while (pageToken);
  }

  /**
   * Creates a generation and returns it once COMPLETED or FAILED (a FAILED one is returned,
   * not thrown: read its `error`). The server holds the create for up to 30 s (`Prefer: wait`);
   * past that, or against a server that does not wait, the generation is read every second.
   */
  async createAndWait(input: CreateGenerationInput, options: CreateAndWaitOptions = {}): Promise<Generation> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const pollIntervalMs = options.pollIntervalMs ?? 1_000;
    const deadline = Date.now() + timeoutMs;
    const wait = Math.max(0, Math.min(MAX_WAIT_SECONDS, Math.floor(timeoutMs / 1000)));
    let generation = await this.create(input, {
      wait,
      idempotencyKey: options.idempotencyKey ?? randomUUID(),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    while (!isFinal(generation)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new GenerationTimeoutError(generation, timeoutMs);
      await sleep(Math.min(pollIntervalMs, left), options.signal);
      generation = await this.get(generation.id, options);
    }
    return generation;
  }

  /**
   * The PDF's bytes. A generation object whose `outputUrl` has expired (or that was read
   * before it completed) is read again for a fresh URL. Throws DocgenError
   * GENERATION_FAILED / GENERATION_NOT_COMPLETED when there is no document (yet).
   */
  async download(idOrGeneration: string | Generation, options: RequestOptions = {}): Promise<Uint8Array> {
    let generation = typeof idOrGeneration === 'string' ? await this.get(idOrGeneration, options) : idOrGeneration;
    let fresh = typeof idOrGeneration === 'string';
    if (generation.status !== 'COMPLETED' || !generation.outputUrl) {
      if (!fresh) generation = await this.get(generation.id, options);
      fresh = true;
      requireCompleted(generation);
    }
    let res = await this.fetchDocument(generation.outputUrl!, options);
    // 403/400 is how S3 answers an expired presigned URL: mint a new one by reading again.
    if (!res.ok && !fresh) {
      await res.body?.cancel().catch(() => {});
      generation = await this.get(generation.id, options);
      requireCompleted(generation);
      res = await this.fetchDocument(generation.outputUrl!, options);
    }
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      throw new DocgenError({
        status: res.status,
        code: 'DOWNLOAD_FAILED',
        message: `Downloading the document of ${generation.id} failed: the object store answered ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
      });
    }
    return new Uint8Array(await res.arrayBuffer());
  }

  /** The presigned URL carries its own authorization: no API key goes to the object store. */
  private fetchDocument(url: string, options: RequestOptions): Promise<Response> {
    return this.http.exchange(url, { method: 'GET' }, { idempotent: true, signal: options.signal });
  }
}

function requireCompleted(generation: Generation): void {
  if (generation.status === 'COMPLETED' && generation.outputUrl) return;
  if (generation.status === 'FAILED') {
    throw new DocgenError({
      status: 0,
      code: 'GENERATION_FAILED',
      message: `Generation ${generation.id} failed: ${generation.error}`,
    });
  }
  throw new DocgenError({
    status: 0,
    code: 'GENERATION_NOT_COMPLETED',
    message: `Generation ${generation.id} is ${generation.status}: there is no document yet`,
  });
}

export function requireId(id: unknown, what: string): void {
  if (typeof id !== 'string' || id === '') throw new TypeError(`${what} must be a non-empty string`);
}

/** Filters as query parameters; unknown ones go through too, so the server names a typo (422). */
export function listQuery(filters: object): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(filters)) {
    if (value === undefined) continue;
    query[name] = value instanceof Date ? value.toISOString() : String(value);
  }
  return query;
}
