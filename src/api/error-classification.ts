// Turns any thrown value into a DomainError: domain errors pass through, a transient database
// failure (a failover, a step-down, a network blip, an exhausted pool: judged by the error's
// labels and codes, src/store/mongo-errors.ts) becomes UNAVAILABLE with a Retry-After,
// everything else INTERNAL (whose cause is logged by the transport and never shown to the
// caller). Both transports map through here: REST 503 + Retry-After, Connect `unavailable`.
import { DomainError, isDomainError } from '../domain/errors.ts';
import { isTransientMongoError, TRANSIENT_RETRY_AFTER_SECONDS } from '../store/mongo-errors.ts';

export function classifyError(err: unknown): DomainError {
  if (isDomainError(err)) return err;
  if (isTransientMongoError(err)) {
    return new DomainError('UNAVAILABLE', 'The database is unavailable for a moment (e.g. a failover); retry shortly', {
      retryAfterSeconds: TRANSIENT_RETRY_AFTER_SECONDS,
      cause: err,
    });
  }
  return new DomainError('INTERNAL', 'Internal error', { cause: err });
}
