// Typed domain errors. Domain code throws these; one mapper turns them into Connect codes
// (src/rpc/connect-errors.ts) and one into the REST error body (gateway/rest-errors.ts).
// Anything else is an internal error: logged with its cause, never shown to the caller.

export type DomainErrorCode =
  | 'UNAUTHORIZED'
  | 'API_KEY_INVALID'
  | 'API_KEY_REVOKED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'VALIDATION_ERROR'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'RATE_LIMITED'
  | 'CONFLICT'
  | 'FAILED_PRECONDITION'
  | 'UNAVAILABLE'
  | 'INTERNAL';

export interface FieldIssue {
  field: string;
  issue: string;
}

export class DomainError extends Error {
  readonly code: DomainErrorCode;
  readonly details: FieldIssue[];
  /** Seconds the caller should wait before retrying (RATE_LIMITED, UNAVAILABLE). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: DomainErrorCode,
    message: string,
    options: { details?: FieldIssue[]; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DomainError';
    this.code = code;
    this.details = options.details ?? [];
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export const unauthorized = (message = 'Authorization header missing or malformed') =>
  new DomainError('UNAUTHORIZED', message);
export const notFound = (what: string) => new DomainError('NOT_FOUND', `${what} not found`);
export const validationError = (details: FieldIssue[], message?: string) =>
  new DomainError(
    'VALIDATION_ERROR',
    message ?? (details.map((d) => `${d.field}: ${d.issue}`).join('; ') || 'Request failed validation'),
    { details },
  );
export const failedPrecondition = (message: string) => new DomainError('FAILED_PRECONDITION', message);
export const unavailable = (message: string, cause?: unknown) =>
  new DomainError('UNAVAILABLE', message, { retryAfterSeconds: 1, cause });

export function isDomainError(err: unknown): err is DomainError {
  return err instanceof DomainError;
}

/** The message of anything thrown (an Error's message, or the value as text). */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Anything thrown, for a log line or a start-up failure: `Name: message`. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
