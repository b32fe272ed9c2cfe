// The MongoDB connection of every docgen process (MongoDB 7+, or the embedded stand-in of
// `docgen dev`). Time-outs are short enough that a database that is down surfaces within
// seconds as UNAVAILABLE instead of hanging requests for the driver's default 30 s.
import { MongoClient, MongoServerError, MongoBulkWriteError, type Db, type MongoClientOptions } from 'mongodb';
import { errorMessage, unavailable } from '../domain/errors.ts';

export interface MongoConnectOptions {
  url: string;
  database: string;
  /** Shown in the server's logs and currentOp. Default `docgen`. */
  appName?: string;
  /** Overrides of the driver options chosen here. */
  driverOptions?: MongoClientOptions;
}

export interface MongoConnection {
  client: MongoClient;
  db: Db;
  close(): Promise<void>;
}

export const MONGO_DRIVER_DEFAULTS: MongoClientOptions = {
  // Picking a server (also: noticing none is reachable) fails after 5 s instead of 30 s.
  serverSelectionTimeoutMS: 5_000,
  connectTimeoutMS: 5_000,
  // No single docgen query runs long; a stalled socket is a dead server.
  socketTimeoutMS: 30_000,
  maxPoolSize: 50,
  // Wait for a pooled connection at most this long, then fail the request.
  waitQueueTimeoutMS: 10_000,
  heartbeatFrequencyMS: 5_000,
  retryWrites: true,
  retryReads: true,
};

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
    appName: options.appName ?? 'docgen',
    ...options.driverOptions,
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
    close: () => client.close(),
  };
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
