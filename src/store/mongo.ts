// The MongoDB connection of every docgen process (MongoDB 7+, or the embedded stand-in of
// `docgen dev`). The time-outs are sized for a replica-set election (MongoDB: a new primary is
// typically elected within 12 s): an operation waits for a primary up to
// DOCGEN_MONGODB_SERVER_SELECTION_TIMEOUT_MS (30 s) instead of failing during the election, and
// the driver retries a write or read once after a step-down or a network error. A database that
// stays down still surfaces as UNAVAILABLE after that wait; readiness does not wait (it asks
// whether the driver knows a writable server right now).
import {
  MongoClient,
  MongoServerError,
  MongoBulkWriteError,
  type Collection,
  type Db,
  type Document,
  type MongoClientOptions,
  type OptionalUnlessRequiredId,
  type ServerType,
} from 'mongodb';
import { errorMessage, unavailable } from '../domain/errors.ts';

export interface MongoConnectOptions {
  url: string;
  database: string;
  /** Shown in the server's logs and currentOp. Default `docgen`. */
  appName?: string;
  /** Longest an operation waits for a writable server (an election). Default 30 s. */
  serverSelectionTimeoutMs?: number | undefined;
  /** Longest one database round trip may take before the connection counts as dead. Default 30 s. */
  operationTimeoutMs?: number | undefined;
  /** Overrides of the driver options chosen here. */
  driverOptions?: MongoClientOptions;
}

export interface MongoConnection {
  client: MongoClient;
  db: Db;
  /**
   * Whether the driver knows a server it can write to right now (false during an election, or
   * when the server is unreachable). Costs nothing: the driver's monitoring keeps it current.
   */
  writableServerKnown(): boolean;
  close(): Promise<void>;
}

/** MongoDB's figure for how long electing a new primary typically takes. */
export const TYPICAL_ELECTION_MS = 12_000;
export const DEFAULT_SERVER_SELECTION_TIMEOUT_MS = 30_000;
export const DEFAULT_OPERATION_TIMEOUT_MS = 30_000;

export const MONGO_DRIVER_DEFAULTS: MongoClientOptions = {
  // Waiting for a primary outlasts an election (2.5x the typical 12 s): requests during a
  // failover are slower, not failed.
  serverSelectionTimeoutMS: DEFAULT_SERVER_SELECTION_TIMEOUT_MS,
  connectTimeoutMS: 5_000,
  // No single docgen query runs long; a round trip this slow is a dead server (its in-flight
  // operations are then retried on the new primary).
  socketTimeoutMS: DEFAULT_OPERATION_TIMEOUT_MS,
  maxPoolSize: 50,
  // Wait for a pooled connection at most this long, then fail the request.
  waitQueueTimeoutMS: 10_000,
  // A dead primary is noticed within a heartbeat plus connectTimeoutMS (10 s), well inside the
  // server selection time-out.
  heartbeatFrequencyMS: 5_000,
  retryWrites: true,
  retryReads: true,
};

const WRITABLE_SERVER_TYPES = new Set<ServerType>(['RSPrimary', 'Standalone', 'Mongos', 'LoadBalancer']);

/** The connection string without its password, for messages and logs. */
export function redactMongoUrl(url: string): string {
  return url.replace(/^(mongodb(?:\+srv)?:\/\/)([^@/]*)@/, (_, scheme: string, userinfo: string) => {
    const user = userinfo.split(':')[0] ?? '';
    return `${scheme}${user}:***@`;
  });
}

/** Connects and checks the server answers; throws UNAVAILABLE naming the server otherwise. */
export async function connectMongo(options: MongoConnectOptions): Promise<MongoConnection> {
  const client = new MongoClient(options.url, {
    ...MONGO_DRIVER_DEFAULTS,
    ...(options.serverSelectionTimeoutMs !== undefined && {
      serverSelectionTimeoutMS: options.serverSelectionTimeoutMs,
    }),
    ...(options.operationTimeoutMs !== undefined && { socketTimeoutMS: options.operationTimeoutMs }),
    appName: options.appName ?? 'docgen',
    ...options.driverOptions,
  });
  let writable = false;
  client.on('topologyDescriptionChanged', (event) => {
    writable = [...event.newDescription.servers.values()].some((server) => WRITABLE_SERVER_TYPES.has(server.type));
  });
  try {
    await client.connect();
    await client.db(options.database).command({ ping: 1 });
  } catch (err) {
    await client.close(true).catch(() => {});
    const reason = errorMessage(err);
    throw unavailable(
      `Cannot reach MongoDB at ${redactMongoUrl(options.url)}: ${reason}. Check DOCGEN_MONGODB_URL and that the server is running.`,
      err,
    );
  }
  const db = client.db(options.database);
  return {
    client,
    db,
    writableServerKnown: () => writable,
    close: () => client.close(),
  };
}

/**
 * Inserts the document unless one with its _id exists; false then. Where an insert must happen
 * once, the _id says which insert it is, and a retry (the driver's after a failover, a
 * client's, a redelivered event) meets the row already written.
 */
export async function insertOnce<T extends Document>(
  collection: Collection<T>,
  doc: OptionalUnlessRequiredId<T>,
): Promise<boolean> {
  try {
    await collection.insertOne(doc);
    return true;
  } catch (err) {
    if (isDuplicateKeyError(err)) return false;
    throw err;
  }
}

const DUPLICATE_KEY_CODES = new Set([11000, 11001]);

/**
 * True when a write failed because a document with the same unique key exists: a plain
 * E11000, a bulk write whose errors are all duplicates, or the embedded stand-in's upsert
 * collision, which it reports as a generic error whose message says "Duplicate key".
 */
export function isDuplicateKeyError(err: unknown): boolean {
  if (err instanceof MongoBulkWriteError) {
    const writeErrors = err.writeErrors;
    const list = Array.isArray(writeErrors) ? writeErrors : [writeErrors];
    if (list.length > 0 && list.every((e) => DUPLICATE_KEY_CODES.has(e.code))) return true;
  }
  if (err instanceof MongoServerError) {
    if (typeof err.code === 'number' && DUPLICATE_KEY_CODES.has(err.code)) return true;
    if (/duplicate key/i.test(err.message)) return true;
  }
  return false;
}
