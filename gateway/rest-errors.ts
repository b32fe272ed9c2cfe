// The one mapping from errors to the REST error body `{"error": {"code", "message"[, "details"]}}`
// and its HTTP status (docs/interface.md#errors). INTERNAL answers never carry the cause.
import type { ServerResponse } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';
import { classifyError } from '../src/api/error-classification.ts';
import type { DomainErrorCode } from '../src/domain/errors.ts';

const STATUS: Record<DomainErrorCode, number> = {
  UNAUTHORIZED: 401,
  API_KEY_INVALID: 401,
  API_KEY_REVOKED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  VALIDATION_ERROR: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  CONFLICT: 409,
  FAILED_PRECONDITION: 422,
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

export class MethodNotAllowed extends Error {
  readonly allow: string[];
  constructor(method: string, allow: string[]) {
    super(`Method ${method} is not allowed here; use ${allow.join(' or ')}`);
    this.name = 'MethodNotAllowed';
    this.allow = allow;
  }
}

export class BodyError extends Error {
  readonly status: 413 | 415;
  constructor(status: 413 | 415, message: string) {
    super(message);
    this.name = 'BodyError';
    this.status = status;
  }
}

export interface RestErrorBody {
  error: { code: string; message: string; details?: { field: string; issue: string }[] };
}

/** Writes the error answer; returns the status sent. */
export function sendError(
  res: ServerResponse | Http2ServerResponse,
  err: unknown,
  onInternal: (cause: unknown) => void,
  beforeWrite: () => void,
): number {
  let status: number;
  let body: RestErrorBody;
  if (err instanceof MethodNotAllowed) {
    status = 405;
    res.setHeader('Allow', err.allow.join(', '));
    body = { error: { code: 'METHOD_NOT_ALLOWED', message: err.message } };
  } else if (err instanceof BodyError) {
    status = err.status;
    body = {
      error: { code: err.status === 413 ? 'PAYLOAD_TOO_LARGE' : 'UNSUPPORTED_MEDIA_TYPE', message: err.message },
    };
  } else {
    const domain = classifyError(err);
    status = STATUS[domain.code];
    if (domain.code === 'INTERNAL' || domain.code === 'UNAVAILABLE') onInternal(domain.cause ?? err);
    body = { error: { code: domain.code, message: domain.message } };
    if (domain.details.length > 0) body.error.details = domain.details;
    if (domain.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(domain.retryAfterSeconds));
  }
  if (res.headersSent) {
    res.end();
    return status;
  }
  beforeWrite();
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.end(JSON.stringify(body));
  return status;
}
