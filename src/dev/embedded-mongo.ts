// The MongoDB stand-in of `docgen dev` and of the tests: CongoDB (a MongoDB wire-protocol
// server written in TypeScript) running in this process on 127.0.0.1.
//
// Why not CongoDB's own server and storage: its 'file' storage rewrites a JSON file per
// operation without locking (concurrent inserts are lost, so conditional updates stop being
// atomic) and JSON turns Dates and ObjectIds into strings on reload. Its in-memory storage
// runs each command to completion without yielding to I/O, which makes every single-document
// command atomic. So we keep the in-memory storage and persist it ourselves: a snapshot in
// canonical Extended JSON (types survive), written atomically (temp file + rename) shortly
// after each write and on stop. A crash (SIGKILL) can lose the writes of the last
// `flushDelayMs` (more with much data, see markDirty); a clean stop loses nothing.
// CongoDB scans a whole collection for every query and update (no index use), which is fine
// for development data and not for production: a query takes 1-2 ms at 30 rows and 7-35 ms
// at 10,000, the more the more it compares ids (`npm run bench:stand-in`). Past
// LARGE_COLLECTION_DOCUMENTS rows a collection is reported (onLargeCollection), so `docgen
// dev` can say so in its log. A command whose filter names its documents by _id is the
// exception (byIdScopeOf below): it reads only those, as MongoDB does on its _id index. Most
// of a generation's database calls are of that kind (about 27, create to final), and with full scans
// the stand-in took more CPU than Chromium while a 1,000-job backlog drained.
//
// What CongoDB does not do (see test/integration/congodb-capabilities.test.ts for the list the
// data layer may rely on): unique secondary indexes, TTL indexes, transactions, change streams.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer, type Server, type Socket } from 'node:net';
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
// CongoDB's parts come through smartmongo-adapter.ts (the one door into the package's files).
import {
  CommandRouter,
  MemoryStorageAdapter,
  OP_QUERY,
  WireProtocol,
  plugins as congoPlugins,
  type CongoServer,
  type IStoredDocument,
} from './smartmongo-adapter.ts';

type Document = Record<string, unknown>;
type IndexSpec = { key: Record<string, unknown>; unique?: boolean; sparse?: boolean; expireAfterSeconds?: number };
type StoredIndex = IndexSpec & { name: string };

const SNAPSHOT_FILE = 'congodb.ejson';
/**
 * Where a query that is not by _id passes 5 to 20 ms on the stand-in (it grows linearly with
 * the rows of the collection); reported again at every doubling.
 */
export const LARGE_COLLECTION_DOCUMENTS = 5_000;

export interface LargeCollection {
  database: string;
  collection: string;
  documents: number;
}
const SNAPSHOT_FORMAT = 'docgen-congodb-snapshot/1';

// CongoDB's documents are instances of the bson package it imports; EJSON must come from the
// same copy so that it recognises them.
const { EJSON } = congoPlugins.bson;

interface Snapshot {
  format: string;
  databases: Record<string, Record<string, { indexes: StoredIndex[]; documents: Document[] }>>;
}

/** The documents a command reads, when its filter names them by _id (byIdScopeOf). */
interface ByIdScope {
  database: string;
  collection: string;
  /** In _id order, without repeats. */
  ids: congoPlugins.bson.ObjectId[];
}

/** The scope of the command being served: async context, so commands never see another's. */
const byIdScope = new AsyncLocalStorage<ByIdScope | undefined>();

/** CongoDB's in-memory storage, snapshotted to one file after writes. */
class SnapshottingStorage extends MemoryStorageAdapter {
  private readonly file: string | undefined;
  private readonly flushDelayMs: number;
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private dirty = false;
  private restoring = false;
  private lastFlushTook = 0;
  private lastFlushEnded = 0;

  private readonly onLargeCollection: ((info: LargeCollection) => void) | undefined;
  /** Per collection, the size at which it is reported next. */
  private readonly nextReportAt = new Map<string, number>();

  constructor(dataDir: string | undefined, flushDelayMs: number, onLargeCollection?: (info: LargeCollection) => void) {
    super();
    this.file = dataDir === undefined ? undefined : join(dataDir, SNAPSHOT_FILE);
    this.flushDelayMs = flushDelayMs;
    this.onLargeCollection = onLargeCollection;
  }

  /** O(1): the in-memory collection knows its size. */
  private async checkSize(dbName: string, collName: string): Promise<void> {
    if (this.onLargeCollection === undefined) return;
    const key = `${dbName}.${collName}`;
    const threshold = this.nextReportAt.get(key) ?? LARGE_COLLECTION_DOCUMENTS;
    const documents = await this.count(dbName, collName);
    if (documents < threshold) return;
    let next = threshold;
    while (next <= documents) next *= 2;
    this.nextReportAt.set(key, next);
    this.onLargeCollection({ database: dbName, collection: collName, documents });
  }

  /**
   * CongoDB's handlers read the whole collection and filter it. For a command whose filter
   * names its documents by _id, the collection is only those documents (each found in the
   * collection's map): the handler's filter, sort and update then run on them as before, so the
   * answer is the same, without a scan.
   */
  override async findAll(dbName: string, collName: string): Promise<IStoredDocument[]> {
    const scope = byIdScope.getStore();
    if (scope === undefined || scope.database !== dbName || scope.collection !== collName) {
      return super.findAll(dbName, collName);
    }
    const found: IStoredDocument[] = [];
    for (const id of scope.ids) {
      const doc = await this.findById(dbName, collName, id);
      if (doc !== null) found.push(doc);
    }
    return found;
  }

  override async initialize(): Promise<void> {
    await super.initialize();
    if (this.file !== undefined) await this.restore();
  }

  override async close(): Promise<void> {
    await this.flush();
    await super.close();
  }

  /** Writes the snapshot now if anything changed since the last one. */
  async flush(): Promise<void> {
    if (this.flushTimer !== undefined) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    while (this.flushing !== undefined) await this.flushing;
    if (!this.dirty || this.file === undefined) return;
    this.dirty = false;
    const started = Date.now();
    this.flushing = this.writeSnapshot(this.file).finally(() => {
      this.flushing = undefined;
      this.lastFlushEnded = Date.now();
      this.lastFlushTook = this.lastFlushEnded - started;
    });
    await this.flushing;
  }

  private markDirty(): void {
    if (this.restoring || this.file === undefined) return;
    this.dirty = true;
    if (this.flushTimer !== undefined) return;
    // A snapshot blocks the event loop while it is serialised; with much data, space them
    // out so that writing them takes at most about a quarter of the time.
    const delay = Math.max(this.flushDelayMs, this.lastFlushEnded + 3 * this.lastFlushTook - Date.now());
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flush().catch((err: unknown) => {
        // Keep serving; the next write retries the snapshot.
        this.dirty = true;
        console.error('docgen dev: could not write the MongoDB stand-in snapshot:', err);
      });
    }, delay);
    this.flushTimer.unref();
  }

  private async writeSnapshot(file: string): Promise<void> {
    // Built without yielding to I/O, so no command can interleave: the snapshot is consistent.
    const snapshot: Snapshot = { format: SNAPSHOT_FORMAT, databases: {} };
    for (const dbName of await this.listDatabases()) {
      const collections: Snapshot['databases'][string] = {};
      for (const collName of await this.listCollections(dbName)) {
        collections[collName] = {
          indexes: (await this.getIndexes(dbName, collName)) as StoredIndex[],
          // The whole collection, whatever command's write scheduled this snapshot.
          documents: await super.findAll(dbName, collName),
        };
      }
      snapshot.databases[dbName] = collections;
    }
    const text = EJSON.stringify(snapshot, { relaxed: false });
    const temp = `${file}.${process.pid}.tmp`;
    await mkdir(join(file, '..'), { recursive: true });
    const handle = await open(temp, 'w');
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  }

  override async persist(): Promise<void> {
    await this.flush();
  }

  override async restore(): Promise<void> {
    if (this.file === undefined) return;
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const snapshot = plainNumbers(EJSON.parse(text, { relaxed: false })) as Snapshot;
    if (snapshot.format !== SNAPSHOT_FORMAT) {
      throw new Error(`${this.file} is not a docgen MongoDB stand-in snapshot (format ${String(snapshot.format)}).`);
    }
    this.restoring = true;
    try {
      for (const [dbName, collections] of Object.entries(snapshot.databases)) {
        for (const [collName, { indexes, documents }] of Object.entries(collections)) {
          await this.createCollection(dbName, collName);
          for (const { name, ...spec } of indexes) {
            if (name !== '_id_') await this.saveIndex(dbName, collName, name, spec);
          }
          await this.insertMany(dbName, collName, documents);
        }
      }
    } finally {
      this.restoring = false;
    }
  }

  // Every mutation schedules a snapshot.
  override async createDatabase(dbName: string): Promise<void> {
    await super.createDatabase(dbName);
    this.markDirty();
  }
  override async dropDatabase(dbName: string): Promise<boolean> {
    const result = await super.dropDatabase(dbName);
    this.markDirty();
    return result;
  }
  override async createCollection(dbName: string, collName: string): Promise<void> {
    await super.createCollection(dbName, collName);
    this.markDirty();
  }
  override async dropCollection(dbName: string, collName: string): Promise<boolean> {
    const result = await super.dropCollection(dbName, collName);
    this.markDirty();
    return result;
  }
  override async renameCollection(dbName: string, oldName: string, newName: string): Promise<void> {
    await super.renameCollection(dbName, oldName, newName);
    this.markDirty();
  }
  override async insertOne(dbName: string, collName: string, doc: Document): Promise<IStoredDocument> {
    const result = await super.insertOne(dbName, collName, doc);
    this.markDirty();
    await this.checkSize(dbName, collName);
    return result;
  }
  override async updateById(
    dbName: string,
    collName: string,
    id: congoPlugins.bson.ObjectId,
    doc: IStoredDocument,
  ): Promise<boolean> {
    const result = await super.updateById(dbName, collName, id, doc);
    this.markDirty();
    return result;
  }
  override async deleteById(dbName: string, collName: string, id: congoPlugins.bson.ObjectId): Promise<boolean> {
    const result = await super.deleteById(dbName, collName, id);
    this.markDirty();
    return result;
  }
  override async saveIndex(dbName: string, collName: string, indexName: string, indexSpec: IndexSpec): Promise<void> {
    await super.saveIndex(dbName, collName, indexName, indexSpec);
    this.markDirty();
  }
  override async dropIndex(dbName: string, collName: string, indexName: string): Promise<boolean> {
    const result = await super.dropIndex(dbName, collName, indexName);
    this.markDirty();
    return result;
  }
}

/**
 * Canonical EJSON parses every number into a Double or Int32 object, but documents arriving
 * over the wire are stored with plain JS numbers, and the stand-in's queries compare the two
 * wrongly (`{tat: {$lt: now}}` never matches a Double). Back to plain numbers; a Long beyond
 * 2^53 and every other BSON type stay as they are.
 */
function plainNumbers(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const bsonType = (value as { _bsontype?: string })._bsontype;
  if (bsonType === 'Double' || bsonType === 'Int32') return (value as { valueOf(): number }).valueOf();
  // EJSON writes an integral number beyond 32 bits as $numberLong; a safe integer was a plain
  // number when it was stored (the driver sends those as doubles).
  if (bsonType === 'Long') {
    const n = (value as { toNumber(): number }).toNumber();
    if (Number.isSafeInteger(n)) return n;
  }
  if (bsonType !== undefined || value instanceof Date) return value;
  if (Array.isArray(value)) return value.map(plainNumbers);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = plainNumbers(v);
  return out;
}

export interface EmbeddedMongoOptions {
  /** Directory holding the snapshot; without it the data lives in memory only. */
  dataDir?: string;
  /** TCP port; 0 or absent picks a free one. */
  port?: number;
  /** Delay between a write and the snapshot that includes it. Default 100 ms. */
  flushDelayMs?: number;
  /**
   * Called when a collection reaches LARGE_COLLECTION_DOCUMENTS rows (and again at each
   * doubling): from there on every query on it that is not by _id takes 5 to 20 ms or more.
   */
  onLargeCollection?: (info: LargeCollection) => void;
}

export interface EmbeddedMongo {
  /** Connection string for the mongodb driver. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly dataDir: string | undefined;
  /** Writes pending changes to the snapshot now. */
  flush(): Promise<void>;
  /** Closes client connections, writes the final snapshot and stops listening. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

export async function startEmbeddedMongo(options: EmbeddedMongoOptions = {}): Promise<EmbeddedMongo> {
  const storage = new SnapshottingStorage(options.dataDir, options.flushDelayMs ?? 100, options.onLargeCollection);
  await storage.initialize();

  const sockets = new Set<Socket>();
  const startedAt = Date.now();
  let port = options.port ?? 0;
  // CommandRouter only reads these server facts (serverStatus, whatsmyuri).
  const serverFacts = {
    getUptime: () => Math.floor((Date.now() - startedAt) / 1000),
    getConnectionCount: () => sockets.size,
    get host() {
      return HOST;
    },
    get port() {
      return port;
    },
  };
  const router = new CommandRouter(storage, serverFacts as unknown as CongoServer);

  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    serveConnection(socket, router);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: HOST }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  port = typeof address === 'object' && address !== null ? address.port : port;

  let stopped: Promise<void> | undefined;
  return {
    // The stand-in lacks the streaming heartbeat: with it the driver would reset its pool
    // about once a second, failing whatever is in flight. Polling monitors it reliably.
    url: `mongodb://${HOST}:${port}/?directConnection=true&serverMonitoringMode=poll`,
    host: HOST,
    port,
    dataDir: options.dataDir,
    flush: () => storage.flush(),
    stop() {
      stopped ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of sockets) socket.destroy();
        await closed;
        await storage.close();
      })();
      return stopped;
    },
  };
}

/** Reads wire-protocol messages off one connection and answers them in order. */
function serveConnection(socket: Socket, router: CommandRouter): void {
  let buffered: Buffer = Buffer.alloc(0);
  let busy = false;

  const pump = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      for (;;) {
        const parsed = WireProtocol.parseMessage(buffered);
        if (parsed === null) break;
        buffered = buffered.subarray(parsed.bytesConsumed);
        const { command } = parsed;
        const response = await byIdScope.run(byIdScopeOf(command), () => router.route(command));
        if (socket.destroyed) return;
        socket.write(
          command.opCode === OP_QUERY
            ? WireProtocol.encodeOpReplyResponse(command.requestID, [response])
            : WireProtocol.encodeOpMsgResponse(command.requestID, response),
        );
      }
    } catch {
      // A message we cannot parse leaves the stream out of step: drop the connection.
      socket.destroy();
    } finally {
      busy = false;
    }
  };

  socket.on('data', (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    // While a command runs, the loop in pump() picks up what arrives.
    void pump();
  });
}

type ParsedCommand = Parameters<CommandRouter['route']>[0];

/**
 * The documents a command can touch, when every filter it carries names them by _id (an
 * ObjectId, `{$eq: id}` or `{$in: [ids]}`; the filter's other conditions are ANDed with it):
 * find, count, findAndModify, and update and delete with all their statements. Anything else,
 * aggregate included, scans as CongoDB does.
 */
function byIdScopeOf(parsed: ParsedCommand): ByIdScope | undefined {
  const { commandName, command, database } = parsed;
  const collection = command[commandName] as unknown;
  if (typeof collection !== 'string') return undefined;
  const statements = (field: 'updates' | 'deletes'): unknown[] => {
    const listed = parsed.documentSequences?.get(field) ?? (command[field] as unknown);
    return Array.isArray(listed) ? listed.map((s: { q?: unknown; filter?: unknown }) => s?.q ?? s?.filter) : [];
  };
  let filters: unknown[];
  switch (commandName) {
    case 'find':
      filters = [command.filter];
      break;
    case 'count':
    case 'findAndModify':
      filters = [command.query];
      break;
    case 'update':
      filters = statements('updates');
      break;
    case 'delete':
      filters = statements('deletes');
      break;
    default:
      return undefined;
  }
  if (filters.length === 0) return undefined;
  const ids = new Map<string, congoPlugins.bson.ObjectId>();
  for (const filter of filters) {
    const named = idsNamedBy(filter);
    if (named === undefined) return undefined;
    for (const id of named) ids.set(id.toHexString(), id);
  }
  // In _id order, as MongoDB walks its _id index for an $in.
  const ordered = [...ids.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, id]) => id);
  return { database, collection, ids: ordered };
}

const isObjectId = (value: unknown): value is congoPlugins.bson.ObjectId =>
  typeof value === 'object' && value !== null && (value as { _bsontype?: unknown })._bsontype === 'ObjectId';

function idsNamedBy(filter: unknown): congoPlugins.bson.ObjectId[] | undefined {
  if (typeof filter !== 'object' || filter === null) return undefined;
  const id = (filter as Document)._id;
  if (isObjectId(id)) return [id];
  if (typeof id !== 'object' || id === null || Object.keys(id).length !== 1) return undefined;
  const { $eq, $in } = id as { $eq?: unknown; $in?: unknown };
  if (isObjectId($eq)) return [$eq];
  if (Array.isArray($in) && $in.every(isObjectId)) return $in;
  return undefined;
}
