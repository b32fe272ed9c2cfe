// A MongoDB wire-protocol proxy for tests: it sits between the driver and a MongoDB server
// (the embedded stand-in here, any MongoDB in principle) and, on command, makes the failures a
// real replica set produces and the stand-in cannot:
//   - error answers such as NotWritablePrimary (10107) or InterruptedDueToReplStateChange
//     (11602) with the RetryableWriteError label, as a stepping-down primary gives them;
//   - a writeConcernError on a write that was applied (replication did not confirm it);
//   - connections closed before or after the server saw the command (the answer is lost);
//   - no answer at all, and an election window: every open connection cut, and for the
//     window's length nothing answered, the driver's heartbeats included;
//   - a chosen command held back for a while (an insert stalled 6 s).
//
// It speaks only the public wire protocol (OP_MSG, and OP_QUERY/OP_REPLY for a legacy
// handshake) and parses documents with the `bson` that ships with the driver, so it needs
// nothing of the server behind it. Two things make the stand-in look like a replica-set
// primary, as the driver must see one for retryable writes: `hello` answers carry a set name
// (`presentAsReplicaSet`), and the proxy keeps the outcome of every write sent with a
// transaction number and answers its retry with that outcome instead of applying it twice,
// as a real server does for retryable writes. With `disguise`, `buildInfo` no longer says
// CongoDB (docgen then treats the server as a real MongoDB: its index refusals are errors).
import { createServer, connect, type Server, type Socket } from 'node:net';
import { BSON, type Document } from 'mongodb';

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;
const FLAG_CHECKSUM = 1 << 0;
const FLAG_MORE_TO_COME = 1 << 1;

/** Commands of the handshake and of the driver's server monitoring; faults skip them unless named. */
const MONITORING_COMMANDS = new Set(['hello', 'ismaster', 'isMaster', 'buildInfo', 'buildinfo', 'ping']);

export type FaultAction =
  /** Answer with this server error instead of running the command. */
  | { kind: 'error'; code: number; codeName: string; errmsg?: string; labels?: string[] }
  /** Run the command, then add a writeConcernError to its answer (the write happened). */
  | { kind: 'writeConcernError'; code?: number; codeName?: string; errmsg?: string; labels?: string[] }
  /** Cut the connection: before the server sees the command, or after (`afterForward`: it ran, the answer is lost). */
  | { kind: 'close'; afterForward?: boolean }
  /** Swallow the command: the connection stays open and never answers. */
  | { kind: 'noAnswer' }
  /** Hold the command back this long, then run it and answer. */
  | { kind: 'delay'; ms: number };

export interface FaultRule {
  /**
   * Command names (the first key of the command: insert, update, findAndModify, find, createIndexes,
   * …). Default: every command except handshake and monitoring ones.
   */
  commands?: string[];
  /** Only commands on this collection. */
  collection?: string;
  /** A further test on the whole command document. */
  match?: (command: Document) => boolean;
  action: FaultAction;
  /** Applies to this many matching commands, then retires. Default: no limit. */
  times?: number;
  /** Active for this long from now. Default: until removed. */
  forMs?: number;
}

export interface InjectedFault {
  /** Matching commands it acted on so far. */
  readonly applied: number;
  remove(): void;
}

export interface MongoFaultProxyOptions {
  /** The real server's connection string (its host:port and query parameters are reused). */
  upstreamUrl: string;
  /**
   * Answer `hello` as a replica-set primary of this set, so the driver uses retryable writes.
   * Default 'rs0'; null leaves hello as it is.
   */
  presentAsReplicaSet?: string | null;
  /** Make `buildInfo` look like a real MongoDB's (docgen then reports index refusals as errors). Default false. */
  disguise?: boolean;
}

export interface MongoFaultProxy {
  /** Connection string through the proxy (the upstream's parameters, the proxy's address). */
  readonly url: string;
  readonly port: number;
  inject(rule: FaultRule): InjectedFault;
  /** NotWritablePrimary (10107) with the RetryableWriteError label on every write for `forMs`. */
  notWritablePrimary(forMs: number, commands?: string[]): InjectedFault;
  /** InterruptedDueToReplStateChange (11602) with the RetryableWriteError label, for `forMs`. */
  interruptedDueToReplStateChange(forMs: number, commands?: string[]): InjectedFault;
  /**
   * An election: every open connection is cut now, and for `ms` there is no primary. New
   * connections are either accepted and left hanging (`hang`, the default: a primary cut off
   * by the network) or refused (`refuse`: its process is gone, so the driver knows at once that
   * it has no server and waits for one up to its server selection time-out). Resolves when the
   * window has closed (hanging connections are cut then, so the driver's next attempt gets
   * through).
   */
  electionWindow(ms: number, connections?: 'hang' | 'refuse'): Promise<void>;
  /** Removes every fault. */
  clear(): void;
  /** Commands seen, by name (handshake and monitoring included). */
  readonly commandCounts: ReadonlyMap<string, number>;
  /** Connections the proxy cut (faults and election windows). */
  readonly connectionsCut: number;
  stop(): Promise<void>;
}

/** Commands that write, for the presets. */
export const WRITE_COMMANDS = ['insert', 'update', 'delete', 'findAndModify', 'createIndexes'];

interface Frame {
  requestId: number;
  responseTo: number;
  opCode: number;
  bytes: Buffer;
}

interface ActiveRule extends FaultRule {
  applied: number;
  until: number;
  removed: boolean;
}

function readFrames(buffer: Buffer): { frames: Frame[]; rest: Buffer } {
  const frames: Frame[] = [];
  let offset = 0;
  while (buffer.length - offset >= 16) {
    const length = buffer.readInt32LE(offset);
    if (length < 16 || buffer.length - offset < length) break;
    const bytes = buffer.subarray(offset, offset + length);
    frames.push({
      requestId: bytes.readInt32LE(4),
      responseTo: bytes.readInt32LE(8),
      opCode: bytes.readInt32LE(12),
      bytes: Buffer.from(bytes),
    });
    offset += length;
  }
  return { frames, rest: buffer.subarray(offset) };
}

/** The body (kind 0 section) of an OP_MSG, and the document sequences (kind 1) merged in by name. */
function opMsgCommand(bytes: Buffer): { flags: number; body: Document } {
  const flags = bytes.readUInt32LE(16);
  const end = flags & FLAG_CHECKSUM ? bytes.length - 4 : bytes.length;
  let offset = 20;
  let body: Document = {};
  const sequences: Record<string, Document[]> = {};
  while (offset < end) {
    const kind = bytes.readUInt8(offset);
    offset += 1;
    const size = bytes.readInt32LE(offset);
    if (kind === 0) {
      body = BSON.deserialize(bytes.subarray(offset, offset + size), { promoteBuffers: false });
      offset += size;
    } else {
      const sectionEnd = offset + size;
      let cursor = offset + 4;
      const nameEnd = bytes.indexOf(0, cursor);
      const name = bytes.toString('utf8', cursor, nameEnd);
      cursor = nameEnd + 1;
      const docs: Document[] = [];
      while (cursor < sectionEnd) {
        const docSize = bytes.readInt32LE(cursor);
        docs.push(BSON.deserialize(bytes.subarray(cursor, cursor + docSize)));
        cursor += docSize;
      }
      sequences[name] = docs;
      offset = sectionEnd;
    }
  }
  return { flags, body: { ...body, ...sequences } };
}

function opMsgReply(responseTo: number, body: Document): Buffer {
  const doc = BSON.serialize(body);
  const header = Buffer.alloc(21);
  header.writeInt32LE(16 + 4 + 1 + doc.length, 0);
  header.writeInt32LE(nextRequestId(), 4);
  header.writeInt32LE(responseTo, 8);
  header.writeInt32LE(OP_MSG, 12);
  header.writeUInt32LE(0, 16);
  header.writeUInt8(0, 20);
  return Buffer.concat([header, doc]);
}

/** OP_QUERY: flags, full collection name, skip, return, the query document. */
function opQueryCommand(bytes: Buffer): Document {
  const nameEnd = bytes.indexOf(0, 20);
  const docStart = nameEnd + 1 + 8;
  const size = bytes.readInt32LE(docStart);
  const query = BSON.deserialize(bytes.subarray(docStart, docStart + size));
  // A legacy command may be wrapped as { $query: {...} }.
  return (query.$query as Document | undefined) ?? query;
}

function opReplyDocument(bytes: Buffer): Document {
  const size = bytes.readInt32LE(36);
  return BSON.deserialize(bytes.subarray(36, 36 + size));
}

function opReplyWith(frame: Frame, doc: Document): Buffer {
  const serialized = BSON.serialize(doc);
  const head = Buffer.from(frame.bytes.subarray(0, 36));
  head.writeInt32LE(36 + serialized.length, 0);
  head.writeInt32LE(1, 32);
  return Buffer.concat([head, serialized]);
}

let requestCounter = 1_000_000;
function nextRequestId(): number {
  requestCounter = (requestCounter + 1) % 0x7fffffff;
  return requestCounter;
}

function commandName(body: Document): string {
  return Object.keys(body)[0] ?? '';
}

/** The key of a retryable write: session id and transaction number. */
function retryKey(body: Document): string | undefined {
  const lsid = body.lsid as { id?: { toString(encoding: string): string } } | undefined;
  const txn = body.txnNumber as { toString(): string } | number | undefined;
  if (!lsid?.id || txn === undefined || 'startTransaction' in body || 'autocommit' in body) return undefined;
  return `${lsid.id.toString('hex')}:${String(txn)}`;
}

export async function startMongoFaultProxy(options: MongoFaultProxyOptions): Promise<MongoFaultProxy> {
  const upstream = new URL(options.upstreamUrl);
  const upstreamHost = upstream.hostname;
  const upstreamPort = Number(upstream.port || 27017);
  const setName = options.presentAsReplicaSet === undefined ? 'rs0' : options.presentAsReplicaSet;
  const rules = new Set<ActiveRule>();
  const commandCounts = new Map<string, number>();
  const sessions = new Set<{ client: Socket; upstream: Socket }>();
  const hanging = new Set<Socket>();
  /** Outcomes of retryable writes by session and transaction number (a real server keeps them too). */
  const writeOutcomes = new Map<string, Promise<Buffer | undefined>>();
  let downUntil = 0;
  let stopped = false;
  let connectionsCut = 0;
  let port = 0;
  const electionId = new BSON.ObjectId();

  const rewriteHello = (doc: Document): Document => {
    if (setName === null || doc.ok !== 1) return doc;
    const me = `127.0.0.1:${port}`;
    return {
      ...doc,
      setName,
      setVersion: 1,
      hosts: [me],
      primary: me,
      me,
      secondary: false,
      electionId,
      lastWrite: { lastWriteDate: new Date(), opTime: { ts: BSON.Timestamp.fromNumber(Date.now() / 1000), t: 1 } },
    };
  };
  const rewriteBuildInfo = (doc: Document): Document =>
    options.disguise && doc.ok === 1
      ? {
          ...doc,
          gitVersion: '0000000000000000000000000000000000000000',
          storageEngines: ['devnull', 'wiredTiger'],
          buildEnvironment: { ...(doc.buildEnvironment as Document), distmod: 'debian12' },
        }
      : doc;

  const matching = (name: string, body: Document): ActiveRule | undefined => {
    const now = Date.now();
    for (const rule of rules) {
      if (rule.removed || now >= rule.until || (rule.times !== undefined && rule.applied >= rule.times)) continue;
      if (rule.commands ? !rule.commands.includes(name) : MONITORING_COMMANDS.has(name)) continue;
      if (rule.collection !== undefined && body[name] !== rule.collection) continue;
      if (rule.match && !rule.match(body)) continue;
      rule.applied++;
      return rule;
    }
    return undefined;
  };

  const cut = (socket: Socket) => {
    if (!socket.destroyed) {
      connectionsCut++;
      socket.destroy();
    }
  };

  const server: Server = createServer((client) => {
    client.on('error', () => client.destroy());
    if (Date.now() < downUntil) {
      // An election: the connection is accepted and never answered.
      hanging.add(client);
      client.on('close', () => hanging.delete(client));
      client.resume();
      return;
    }
    const up = connect({ host: upstreamHost, port: upstreamPort });
    up.setNoDelay(true);
    client.setNoDelay(true);
    const session = { client, upstream: up };
    sessions.add(session);
    up.on('error', () => client.destroy());
    // The upstream connection outlives a cut client briefly, so an answer in flight is still
    // recorded (a retried write then gets the outcome of the first).
    client.on('close', () => {
      sessions.delete(session);
      setTimeout(() => up.destroy(), 10_000).unref();
    });
    const waiting = new Map<number, (frame: Frame | undefined) => void>();
    up.on('close', () => {
      client.destroy();
      for (const resolve of waiting.values()) resolve(undefined);
      waiting.clear();
    });
    let upBuffer: Buffer = Buffer.alloc(0);
    up.on('data', (chunk: Buffer) => {
      const { frames, rest } = readFrames(Buffer.concat([upBuffer, chunk]));
      upBuffer = rest;
      for (const frame of frames) {
        const resolve = waiting.get(frame.responseTo);
        waiting.delete(frame.responseTo);
        resolve?.(frame);
      }
    });
    const forward = (frame: Frame, expectAnswer: boolean): Promise<Frame | undefined> => {
      if (up.destroyed) return Promise.resolve(undefined);
      const answered = expectAnswer
        ? new Promise<Frame | undefined>((resolve) => waiting.set(frame.requestId, resolve))
        : Promise.resolve(undefined);
      up.write(frame.bytes);
      return answered;
    };

    let clientBuffer: Buffer = Buffer.alloc(0);
    let chain = Promise.resolve();
    client.on('data', (chunk: Buffer) => {
      const { frames, rest } = readFrames(Buffer.concat([clientBuffer, chunk]));
      clientBuffer = rest;
      // One command at a time per connection, in order, as the driver sends them.
      for (const frame of frames)
        chain = chain
          .then(() => handle(frame))
          .catch(() => {
            client.destroy();
          });
    });

    const reply = (bytes: Buffer) => {
      if (!client.destroyed) client.write(bytes);
    };

    const handle = async (frame: Frame): Promise<void> => {
      if (client.destroyed) return;
      if (frame.opCode === OP_QUERY) {
        // A legacy handshake: pass it on, presenting the answer as a replica-set member's.
        const query = opQueryCommand(frame.bytes);
        const name = commandName(query);
        commandCounts.set(name, (commandCounts.get(name) ?? 0) + 1);
        const answer = await forward(frame, true);
        if (!answer) return void client.destroy();
        if (answer.opCode !== OP_REPLY) return reply(answer.bytes);
        const doc = opReplyDocument(answer.bytes);
        const rewritten = /^(hello|ismaster)$/i.test(name)
          ? rewriteHello(doc)
          : /^buildinfo$/i.test(name)
            ? rewriteBuildInfo(doc)
            : doc;
        return reply(rewritten === doc ? answer.bytes : opReplyWith(answer, rewritten));
      }
      if (frame.opCode !== OP_MSG) {
        const answer = await forward(frame, true);
        if (answer) reply(answer.bytes);
        else client.destroy();
        return;
      }
      const { flags, body } = opMsgCommand(frame.bytes);
      const name = commandName(body);
      commandCounts.set(name, (commandCounts.get(name) ?? 0) + 1);
      const expectAnswer = (flags & FLAG_MORE_TO_COME) === 0;
      const rule = matching(name, body);
      const action = rule?.action;
      if (action?.kind === 'error') {
        const answer: Document = {
          ok: 0,
          errmsg: action.errmsg ?? `${action.codeName} (injected by the test's fault proxy)`,
          code: action.code,
          codeName: action.codeName,
        };
        if (action.labels?.length) answer.errorLabels = action.labels;
        return reply(opMsgReply(frame.requestId, answer));
      }
      if (action?.kind === 'noAnswer') return;
      if (action?.kind === 'close' && !action.afterForward) return cut(client);
      if (action?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, action.ms));

      const key = retryKey(body);
      let answerBytes: Buffer | undefined;
      const earlier = key === undefined ? undefined : writeOutcomes.get(key);
      if (earlier) {
        // A retry of a write the server already ran: its first outcome, as a real server answers.
        const first = await earlier;
        if (first) answerBytes = opMsgReply(frame.requestId, BSON.deserialize(first.subarray(21)));
      }
      if (!answerBytes) {
        const sent = forward(frame, expectAnswer);
        if (key !== undefined) {
          const outcome = sent.then((answer) => (answer && answer.opCode === OP_MSG ? answer.bytes : undefined));
          writeOutcomes.set(key, outcome);
          if (writeOutcomes.size > 20_000) writeOutcomes.delete(writeOutcomes.keys().next().value!);
        }
        const answer = await sent;
        if (!expectAnswer) return;
        if (!answer) return void client.destroy();
        answerBytes = answer.bytes;
      }
      if (action?.kind === 'close') return cut(client);

      const answerFlags = answerBytes.readUInt32LE(16);
      const simpleBody = answerBytes.readUInt8(20) === 0 && (answerFlags & FLAG_CHECKSUM) === 0;
      const needsRewrite =
        simpleBody &&
        (action?.kind === 'writeConcernError' ||
          (setName !== null && (name === 'hello' || name.toLowerCase() === 'ismaster')) ||
          (options.disguise && name.toLowerCase() === 'buildinfo'));
      if (!needsRewrite) return reply(answerBytes);
      let doc = BSON.deserialize(answerBytes.subarray(21));
      if (name === 'hello' || name.toLowerCase() === 'ismaster') doc = rewriteHello(doc);
      if (name.toLowerCase() === 'buildinfo') doc = rewriteBuildInfo(doc);
      if (action?.kind === 'writeConcernError') {
        doc.writeConcernError = {
          code: action.code ?? 64,
          codeName: action.codeName ?? 'WriteConcernFailed',
          errmsg: action.errmsg ?? 'waiting for replication timed out (injected by the test fault proxy)',
          errInfo: { wtimeout: true },
        };
        if (action.labels?.length) doc.errorLabels = action.labels;
      }
      const rewritten = opMsgReply(frame.requestId, doc);
      rewritten.writeInt32LE(answerBytes.readInt32LE(4), 4);
      return reply(rewritten);
    };
  });

  const listen = (on: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port: on }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const address = server.address();
  port = typeof address === 'object' && address !== null ? address.port : 0;
  const proxied = new URL(options.upstreamUrl);
  proxied.host = `127.0.0.1:${port}`;

  const inject = (rule: FaultRule): InjectedFault => {
    const active: ActiveRule = {
      ...rule,
      applied: 0,
      until: rule.forMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + rule.forMs,
      removed: false,
    };
    rules.add(active);
    return {
      get applied() {
        return active.applied;
      },
      remove() {
        active.removed = true;
        rules.delete(active);
      },
    };
  };

  const stateChange = (code: number, codeName: string, forMs: number, commands = WRITE_COMMANDS) =>
    inject({ commands, forMs, action: { kind: 'error', code, codeName, labels: ['RetryableWriteError'] } });

  return {
    url: proxied.href,
    port,
    inject,
    notWritablePrimary: (forMs, commands) => stateChange(10107, 'NotWritablePrimary', forMs, commands),
    interruptedDueToReplStateChange: (forMs, commands) =>
      stateChange(11602, 'InterruptedDueToReplStateChange', forMs, commands),
    async electionWindow(ms, connections = 'hang') {
      downUntil = Date.now() + ms;
      if (connections === 'refuse') server.close();
      for (const { client } of [...sessions]) cut(client);
      await new Promise((resolve) => setTimeout(resolve, ms));
      downUntil = 0;
      for (const socket of [...hanging]) cut(socket);
      if (connections === 'refuse' && !stopped) await listen(port);
    },
    clear() {
      for (const rule of rules) rule.removed = true;
      rules.clear();
    },
    commandCounts,
    get connectionsCut() {
      return connectionsCut;
    },
    async stop() {
      stopped = true;
      downUntil = 0;
      const closed = server.listening ? new Promise<void>((resolve) => server.close(() => resolve())) : undefined;
      for (const { client, upstream: up } of [...sessions]) {
        client.destroy();
        up.destroy();
      }
      for (const socket of [...hanging]) socket.destroy();
      await closed;
    },
  };
}
