import { randomUUID } from 'node:crypto';
import { requireId, type Generations, type RequestOptions } from './generations.ts';
import type { HttpClient } from './http.ts';
import type { Batch, CreateBatchInput, Generation, ListGenerationsFilters } from './types.ts';

export interface CreateBatchOptions {
  /** Same key, same body: the same batch. Default: a fresh UUID per call, kept across its retries. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** Many documents from one request: `POST /v1/batches`, `GET /v1/batches/{id}`. */
export class Batches {
  private readonly http: HttpClient;
  private readonly generationsOf: Generations;

  constructor(http: HttpClient, generations: Generations) {
    this.http = http;
    this.generationsOf = generations;
  }

  /** Creates every item or, when one is invalid, none (422 naming `items[i].…`). */
  async create(input: CreateBatchInput, options: CreateBatchOptions = {}): Promise<Batch> {
    const answer = await this.http.call<Batch>('POST', '/v1/batches', {
      body: input,
      headers: { 'Idempotency-Key': options.idempotencyKey ?? randomUUID() },
      idempotent: true,
      signal: options.signal,
    });
    return answer.body;
  }

  async get(id: string, options: RequestOptions = {}): Promise<Batch> {
    requireId(id, 'batch id');
    const answer = await this.http.call<Batch>('GET', `/v1/batches/${encodeURIComponent(id)}`, {
      idempotent: true,
      signal: options.signal,
    });
    return answer.body;
  }

  /** The batch's generations (its items), newest first, every page. */
  generations(
    batchId: string,
    filters: Omit<ListGenerationsFilters, 'batchId'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<Generation> {
    requireId(batchId, 'batch id');
    return this.generationsOf.list({ ...filters, batchId }, options);
  }
}
