// A local HTTP server that stands in for a webhook receiver (or any HTTP peer): it records
// every request (raw body bytes, headers as sent) and answers as the test scripted, per
// request: status, headers, body, a delay before answering, or dropping the connection.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { pollUntil } from './poll-until.ts';

export interface ReceivedRequest {
  /** 0 for the first request this receiver got. */
  index: number;
  method: string;
  /** Path and query as sent. */
  url: string;
  path: string;
  /** Lower-cased header names; repeated headers joined as Node does. */
  headers: IncomingHttpHeaders;
  /** Names and values exactly as sent, alternating. */
  rawHeaders: string[];
  /** The body bytes exactly as received. */
  body: Buffer;
  /** Date.now() when the body was complete. */
  receivedAt: number;
  header(name: string): string | undefined;
  text(): string;
  json(): unknown;
}

export interface ScriptedAnswer {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /** Default empty. */
  body?: string | Buffer;
  /** Wait this long before answering (e.g. to exceed the sender's time-out). */
  delayMs?: number;
  /** Close the connection without answering. */
  dropConnection?: boolean;
}

export type Answer = ScriptedAnswer | ((request: ReceivedRequest) => ScriptedAnswer | Promise<ScriptedAnswer>);

export interface HttpReceiver {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  readonly port: number;
  /** Every request received so far, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** Queues answers: the next requests get them in order, one each. */
  answerNext(...answers: Answer[]): void;
  /** The answer used when no queued answer is left. Default: 200 with an empty body. */
  answerOtherwise(answer: Answer): void;
  /** Resolves once at least `count` requests arrived. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Forgets requests and queued answers. */
  reset(): void;
  close(): Promise<void>;
}

export async function startHttpReceiver(options: { defaultAnswer?: Answer } = {}): Promise<HttpReceiver> {
  const requests: ReceivedRequest[] = [];
  const queued: Answer[] = [];
  let fallback: Answer = options.defaultAnswer ?? { status: 200 };
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let closing = false;

  const respond = async (res: ServerResponse, request: ReceivedRequest) => {
    const answer = queued.length > 0 ? queued.shift()! : fallback;
    const scripted = typeof answer === 'function' ? await answer(request) : answer;
    if (scripted.delayMs !== undefined && scripted.delayMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          resolve();
        }, scripted.delayMs);
        timers.add(timer);
      });
    }
    if (closing || res.destroyed) return;
    if (scripted.dropConnection) {
      res.socket?.destroy();
      return;
    }
    const body =
      scripted.body === undefined
        ? Buffer.alloc(0)
        : Buffer.isBuffer(scripted.body)
          ? scripted.body
          : Buffer.from(scripted.body);
    res.writeHead(scripted.status ?? 200, { 'Content-Length': String(body.length), ...scripted.headers });
    res.end(body);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = req.url ?? '/';
      const request: ReceivedRequest = {
        index: requests.length,
        method: req.method ?? 'GET',
        url,
        path: url.split('?')[0] ?? url,
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body,
        receivedAt: Date.now(),
        header: (name) => {
          const value = req.headers[name.toLowerCase()];
          return Array.isArray(value) ? value.join(', ') : value;
        },
        text: () => body.toString('utf8'),
        json: () => JSON.parse(body.toString('utf8')) as unknown,
      };
      requests.push(request);
      respond(res, request).catch((err: unknown) => {
        if (!res.headersSent && !res.destroyed) {
          res.writeHead(500, { 'Content-Type': 'text/plain' });
          res.end(`receiver answer failed: ${String(err)}`);
        }
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    answerNext: (...answers) => {
      queued.push(...answers);
    },
    answerOtherwise: (answer) => {
      fallback = answer;
    },
    waitForRequests: (count, timeoutMs = 10_000) =>
      pollUntil(
        () => requests,
        (list) => list.length >= count,
        {
          timeoutMs,
          description: `${count} request(s) at the HTTP receiver on port ${port} (got ${requests.length})`,
        },
      ).then((list) => list.slice()),
    reset: () => {
      requests.length = 0;
      queued.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
