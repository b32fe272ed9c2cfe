import { Batches } from './batches.ts';
import { Generations } from './generations.ts';
import { HttpClient } from './http.ts';
import { Webhooks } from './webhooks.ts';

export interface DocgenClientOptions {
  /** docgen's public listener, e.g. `http://127.0.0.1:8080` (`docgen dev`). */
  baseUrl: string;
  /** `svc_live_…`, or a test key `svc_test_…` (docs/interface.md#test-mode). */
  apiKey: string;
  /** Retries after a 429, 502, 503, 504 or no answer. Default 3. */
  maxRetries?: number;
  /** Time one attempt may take. Default 60 s; a waiting create gets its wait on top. */
  timeoutMs?: number;
  /** A Retry-After longer than this is not waited for: the DocgenError is thrown. Default 60 s. */
  maxRetryDelayMs?: number;
  /** The fetch to use (a proxy's, a test's). Default: the global fetch. */
  fetch?: typeof fetch;
}

/** docgen's public REST API (`/v1`). */
export class DocgenClient {
  readonly generations: Generations;
  readonly batches: Batches;
  readonly webhooks: Webhooks;

  constructor(options: DocgenClientOptions) {
    if (typeof options?.baseUrl !== 'string' || !/^https?:\/\//i.test(options.baseUrl))
      throw new TypeError('baseUrl must be an http(s) URL, e.g. http://127.0.0.1:8080');
    if (typeof options.apiKey !== 'string' || options.apiKey === '')
      throw new TypeError('apiKey must be the API key (svc_live_… or svc_test_…)');
    const http = new HttpClient({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      maxRetries: options.maxRetries ?? 3,
      timeoutMs: options.timeoutMs ?? 60_000,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 60_000,
      fetch: options.fetch ?? globalThis.fetch,
    });
    this.generations = new Generations(http);
    this.batches = new Batches(http, this.generations);
    this.webhooks = new Webhooks();
  }
}
