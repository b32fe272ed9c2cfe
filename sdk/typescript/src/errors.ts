import type { Generation } from './types.ts';

export interface FieldIssue {
  field: string;
  issue: string;
}

export interface DocgenErrorInit {
  status: number;
  code: string;
  message: string;
  requestId?: string | undefined;
  retryAfter?: number | undefined;
  details?: FieldIssue[] | undefined;
  cause?: unknown;
}

/**
 * Every failed call. `status` is the HTTP status (0 when no answer came: `CONNECTION_ERROR`,
 * `TIMEOUT`); `code` is docgen's error code (`NOT_FOUND`, `RATE_LIMITED`, …) or one of this
 * client's own (`CONNECTION_ERROR`, `TIMEOUT`, `GENERATION_FAILED`, `GENERATION_NOT_COMPLETED`,
 * `DOWNLOAD_FAILED`, `HTTP_<status>` for an answer that is not docgen's error body).
 */
export class DocgenError extends Error {
  readonly status: number;
  readonly code: string;
  /** The answer's X-Request-Id: quote it when reporting a problem. */
  readonly requestId: string | undefined;
  /** Seconds the server asked to wait (Retry-After), on 429 and 503. */
  readonly retryAfter: number | undefined;
  /** The fields a 422 found wrong. */
  readonly details: FieldIssue[];

  constructor(init: DocgenErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'DocgenError';
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
    this.details = init.details ?? [];
  }
}

/** `createAndWait` ran out of time; `generation` is the last state read (PENDING or PROCESSING). */
export class GenerationTimeoutError extends DocgenError {
  readonly generation: Generation;

  constructor(generation: Generation, timeoutMs: number) {
    super({
      status: 0,
      code: 'TIMEOUT',
      message: `Generation ${generation.id} is still ${generation.status} after ${timeoutMs} ms`,
    });
    this.name = 'GenerationTimeoutError';
    this.generation = generation;
  }
}

/** A webhook request whose signature or timestamp does not check out: do not trust its body. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}
