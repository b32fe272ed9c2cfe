// Which MongoDB failures are transient (a failover, a step-down, an exhausted pool, a network
// blip: retrying shortly succeeds), judged the way the server and the driver label them rather
// than by class names: error labels first, then server error codes (a write-concern error's
// code included), then the driver's own client-side conditions (no server could be selected,
// the network failed, the pool was cleared or had no connection free).
import {
  MongoDriverError,
  MongoError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerClosedError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  MongoWriteConcernError,
} from 'mongodb';

/** Labels the server or the driver put on errors that a retry can overcome. */
const TRANSIENT_LABELS = [
  'RetryableWriteError',
  'TransientTransactionError',
  'RetryableError',
  'SystemOverloadedError',
  'PoolRequestedRetry',
  'ResetPool',
  'InterruptInUseConnections',
];

/**
 * Server error codes of a replica set changing state or a node going away
 * (MongoDB's error_codes.yml): a write or read sent at the wrong moment, not a wrong one.
 */
export const TRANSIENT_MONGO_CODES: ReadonlyMap<number, string> = new Map([
  [6, 'HostUnreachable'],
  [7, 'HostNotFound'],
  [64, 'WriteConcernFailed'],
  [89, 'NetworkTimeout'],
  [91, 'ShutdownInProgress'],
  [112, 'WriteConflict'],
  [133, 'FailedToSatisfyReadPreference'],
  [134, 'ReadConcernMajorityNotAvailableYet'],
  [189, 'PrimarySteppedDown'],
  [202, 'NetworkInterfaceExceededTimeLimit'],
  [216, 'ElectionInProgress'],
  [262, 'ExceededTimeLimit'],
  [462, 'IngressRequestRateLimitExceeded'],
  [9001, 'SocketException'],
  [10058, 'LegacyNotPrimary'],
  [10107, 'NotWritablePrimary'],
  [11600, 'InterruptedAtShutdown'],
  [11602, 'InterruptedDueToReplStateChange'],
  [13435, 'NotPrimaryNoSecondaryOk'],
  [13436, 'NotPrimaryOrSecondary'],
]);

/** How long a client is asked to wait after a transient database failure. */
export const TRANSIENT_RETRY_AFTER_SECONDS = 2;

function writeConcernCode(err: MongoError): number | undefined {
  const wce = (err as { writeConcernError?: { code?: unknown } }).writeConcernError;
  const result = (err as { result?: { writeConcernError?: { code?: unknown } } }).result;
  const code = wce?.code ?? result?.writeConcernError?.code;
  return typeof code === 'number' ? code : undefined;
}

function isTransientOne(err: unknown): boolean {
  if (!(err instanceof MongoError)) return false;
  if (TRANSIENT_LABELS.some((label) => err.hasErrorLabel(label))) return true;
  if (typeof err.code === 'number' && TRANSIENT_MONGO_CODES.has(err.code)) return true;
  const wce = writeConcernCode(err);
  if (wce !== undefined && TRANSIENT_MONGO_CODES.has(wce)) return true;
  // Applied on the primary but not confirmed by the write concern: whether it survives a
  // failover is unknown, so the caller retries (idempotently) rather than being told it failed.
  if (err instanceof MongoWriteConcernError) return true;
  // The driver's own conditions carry no server code.
  if (
    err instanceof MongoNetworkError ||
    err instanceof MongoServerSelectionError ||
    err instanceof MongoTopologyClosedError ||
    err instanceof MongoNotConnectedError ||
    err instanceof MongoServerClosedError
  ) {
    return true;
  }
  // The pool had no free connection within waitQueueTimeoutMS. The driver does not export this
  // error's class, and it has no code or label: its name is the one thing it can be told by.
  return err instanceof MongoDriverError && err.name === 'MongoWaitQueueTimeoutError';
}

/** True when the error (or an error it wraps) is a transient MongoDB failure. */
export function isTransientMongoError(err: unknown): boolean {
  for (let current = err, depth = 0; current !== undefined && current !== null && depth < 4; depth++) {
    if (isTransientOne(current)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The code name of a transient error, for logs and metrics ('network', 'server-selection', …). */
export function transientMongoReason(err: unknown): string {
  if (!(err instanceof MongoError)) return 'unknown';
  if (typeof err.code === 'number' && TRANSIENT_MONGO_CODES.has(err.code)) return TRANSIENT_MONGO_CODES.get(err.code)!;
  if (err instanceof MongoWriteConcernError) return 'write-concern';
  if (err instanceof MongoServerSelectionError) return 'server-selection';
  if (err instanceof MongoNetworkError) return 'network';
  return err.name;
}

export interface RetryOptions {
  /** Longest the retries may go on, from the first attempt. Default 30 s (an election plus margin). */
  budgetMs?: number;
  /** First pause between attempts; doubles up to 2 s. Default 250 ms. */
  initialDelayMs?: number;
  /** Told about each transient failure that will be retried. */
  onRetry?: (err: unknown, attempt: number) => void;
}

/**
 * Runs an idempotent database operation, repeating it while it fails transiently and the
 * budget lasts. For what the driver does not retry itself (updateMany, deleteMany, a write
 * after its one automatic retry); only for operations that are safe to apply twice.
 */
export async function retryTransient<T>(operation: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const budgetMs = options.budgetMs ?? 30_000;
  let delay = options.initialDelayMs ?? 250;
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (err) {
      if (!isTransientMongoError(err) || Date.now() - started + delay > budgetMs) throw err;
      options.onRetry?.(err, attempt);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 2_000);
    }
  }
}
