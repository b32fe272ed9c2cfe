// The one mapping from domain errors to Connect/gRPC status codes. The domain code travels
// in the `docgen-error-code` trailer/header so that gRPC clients can tell the 401 cases
// apart just as REST clients do.
import { Code, ConnectError } from '@connectrpc/connect';
import type { DomainErrorCode } from '../domain/errors.ts';
import { classifyError } from '../api/error-classification.ts';

const CODES: Record<DomainErrorCode, Code> = {
  UNAUTHORIZED: Code.Unauthenticated,
  API_KEY_INVALID: Code.Unauthenticated,
  API_KEY_REVOKED: Code.Unauthenticated,
  FORBIDDEN: Code.PermissionDenied,
  NOT_FOUND: Code.NotFound,
  VALIDATION_ERROR: Code.InvalidArgument,
  IDEMPOTENCY_KEY_REUSED: Code.InvalidArgument,
  RATE_LIMITED: Code.ResourceExhausted,
  CONFLICT: Code.AlreadyExists,
  FAILED_PRECONDITION: Code.FailedPrecondition,
  UNAVAILABLE: Code.Unavailable,
  INTERNAL: Code.Internal,
};

export const ERROR_CODE_HEADER = 'docgen-error-code';

/** Maps any error to a ConnectError; INTERNAL ones are reported to `onInternal` (for logging). */
export function toConnectError(err: unknown, onInternal?: (cause: unknown) => void): ConnectError {
  if (err instanceof ConnectError) return err;
  const domain = classifyError(err);
  if (domain.code === 'INTERNAL' || domain.code === 'UNAVAILABLE') onInternal?.(domain.cause ?? err);
  const metadata = new Headers({ [ERROR_CODE_HEADER]: domain.code });
  if (domain.retryAfterSeconds !== undefined) metadata.set('retry-after', String(domain.retryAfterSeconds));
  return new ConnectError(
    domain.message,
    CODES[domain.code],
    metadata,
    undefined,
    domain.code === 'INTERNAL' ? undefined : err,
  );
}

/** Wraps a service implementation so every method's errors go through toConnectError. */
export function mapErrors<T extends object>(impl: T, onInternal?: (cause: unknown) => void): T {
  const wrapped: Record<string, unknown> = {};
  for (const key of Object.getOwnPropertyNames(Object.getPrototypeOf(impl))) {
    const fn = (impl as Record<string, unknown>)[key];
    if (key === 'constructor' || typeof fn !== 'function') continue;
    wrapped[key] = async (...args: unknown[]) => {
      try {
        return await (fn as (...a: unknown[]) => unknown).apply(impl, args);
      } catch (err) {
        throw toConnectError(err, onInternal);
      }
    };
  }
  return wrapped as T;
}
