// Turns any thrown value into a DomainError: domain errors pass through, a database or
// broker that cannot be reached becomes UNAVAILABLE, everything else INTERNAL (whose cause
// is logged by the transport and never shown to the caller).
import { DomainError, isDomainError } from '../domain/errors.ts';

const UNAVAILABLE_ERROR_NAMES = new Set([
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoPoolClearedError',
]);

export function classifyError(err: unknown): DomainError {
  if (isDomainError(err)) return err;
  const name = (err as { name?: string } | null)?.name ?? '';
  if (UNAVAILABLE_ERROR_NAMES.has(name)) {
    return new DomainError('UNAVAILABLE', 'A dependency of the service is unavailable; retry shortly', {
      retryAfterSeconds: 1,
      cause: err,
    });
  }
  return new DomainError('INTERNAL', 'Internal error', { cause: err });
}
