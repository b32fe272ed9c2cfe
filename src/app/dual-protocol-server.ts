// One listening port for HTTP/1.1 (REST, Connect, gRPC-web) and cleartext HTTP/2 (gRPC,
// Connect): Node's HTTP/2 server only speaks h2c to clients with prior knowledge, so each
// connection is routed by its first bytes: the HTTP/2 preface goes to the HTTP/2 server,
// anything else to the HTTP/1.1 server. Both use the same request handler.
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import type { ListenAddress } from '../config/config.ts';
import { UNREAD_BODY_DISCARD_LIMIT_BYTES } from '../config/limits.ts';

export type RequestHandler = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void;

const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/** Connection hygiene (config `http`, DOCGEN_HTTP_*), the same on every listener. */
export interface ConnectionLimits {
  /** Time from connecting (or from the end of the last response) to a request's complete headers. */
  headersTimeoutMs: number;
  /** Time to receive a whole request, body included. */
  requestTimeoutMs: number;
  /** Idle keep-alive connections (and idle HTTP/2 sessions) close after this. */
  keepAliveTimeoutMs: number;
  /** Open connections at once; more are refused (closed at accept) until some close. */
  maxConnections: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 1000,
};

/**
 * Node enforces headersTimeout and requestTimeout with a timer its HTTP server starts on its
 * own 'listening' event (connection tracking), so a server that only gets connections handed
 * over with emit('connection') enforces neither. Emitting 'listening' starts that tracking
 * (a documented event; the listener it runs is Node's own), so Node's checks apply as they do
 * to any listening server: 408 and close for headers or a body too slow to arrive.
 */
export function enforceRequestTimeouts(server: http.Server, limits: ConnectionLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.emit('listening');
}

// An answer sent before the request body was read (413, 404, a refused upload) would be lost
// when the connection closes with unread bytes: the kernel then resets it, and the client
// discards what it had not read yet. So when a response ends with body bytes still unread, the
// rest is read and dropped (bounded by requestTimeout and UNREAD_BODY_DISCARD_LIMIT_BYTES)
// before the connection may close.

function drainUnreadBody(req: http.IncomingMessage): void {
  if (req.complete || req.destroyed) return;
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > UNREAD_BODY_DISCARD_LIMIT_BYTES) req.socket.destroy();
  });
  req.resume();
}

/**
 * Lingering close. When an answer to a request that says `Connection: close` (or whose
 * connection must close) is out, Node closes the connection at once (socket.destroySoon). If
 * the request's body is still arriving, closing with bytes unread makes the kernel reset the
 * connection, and a client still sending loses the answer it had not read yet (seen under
 * load with a 413). So such a connection only ends its sending side; its body goes on being
 * read and dropped (drainUnreadBody), and the connection closes when the body has arrived, the
 * client closes, or after LINGER_MS.
 */
const LINGER_MS = 10_000;

function lingerOnClose(socket: net.Socket, request: () => http.IncomingMessage | undefined): void {
  const destroySoon = socket.destroySoon;
  socket.destroySoon = function (this: net.Socket) {
    const req = request();
    if (req === undefined || req.complete || req.destroyed) {
      destroySoon.call(this);
      return;
    }
    if (this.writable) this.end();
    const close = () => {
      clearTimeout(timer);
      this.destroy();
    };
    const timer = setTimeout(close, LINGER_MS);
    timer.unref();
    req.once('end', close);
    req.once('close', close);
  };
}

export interface DualProtocolServer {
  readonly port: number;
  /** Stops accepting connections and closes idle ones; in-flight requests finish. */
  close(): Promise<void>;
}

export async function startDualProtocolServer(
  address: ListenAddress,
  handler: RequestHandler,
  limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
): Promise<DualProtocolServer> {
  // While closing, a connection must not outlive its last response, or close() would wait
  // for the 5 s cut. h1.closeIdleConnections() cannot help: the connections are handed to h1,
  // which never listens, so it does not track them. Hence our own books: requests in flight
  // per HTTP/1.1 connection. On close, idle connections are closed at once, responses not yet
  // started say `Connection: close`, and a connection is ended (its bytes flushed first) when
  // its last response finishes.
  let closing = false;
  const inFlight = new Map<net.Socket, number>();
  /** Each HTTP/1.1 connection's latest request, for the lingering close below. */
  const current = new WeakMap<net.Socket, http.IncomingMessage>();
  const unstarted = new Set<http.ServerResponse>();
  const h1 = http.createServer({ connectionsCheckingInterval: 1_000 }, (req, res) => {
    const socket = req.socket;
    current.set(socket, req);
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    if (closing) res.setHeader('Connection', 'close');
    else unstarted.add(res);
    let done = false;
    const finished = () => {
      unstarted.delete(res);
      if (done) return;
      done = true;
      const left = (inFlight.get(socket) ?? 1) - 1;
      inFlight.set(socket, left);
      if (closing && left <= 0) socket.end();
    };
    res.once('finish', () => {
      drainUnreadBody(req);
      finished();
    });
    res.once('close', finished);
    handler(req, res);
  });
  enforceRequestTimeouts(h1, limits);
  const h2 = http2.createServer({}, handler);
  // An HTTP/2 session with no activity for this long is closed (streams keep it active).
  h2.setTimeout(limits.keepAliveTimeoutMs); // no listener: Node destroys the idle session
  const sockets = new Set<net.Socket>();
  const http2Sockets = new Set<net.Socket>();
  const front = net.createServer((socket) => {
    sockets.add(socket);
    // Until its first bytes, a connection belongs to no server: it gets the headers time-out here.
    socket.setTimeout(limits.headersTimeoutMs, () => socket.destroy());
    socket.on('close', () => {
      sockets.delete(socket);
      http2Sockets.delete(socket);
      inFlight.delete(socket);
    });
    socket.once('data', (first: Buffer) => {
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(first);
      const isHttp2 = first
        .subarray(0, Math.min(first.length, HTTP2_PREFACE.length))
        .equals(HTTP2_PREFACE.subarray(0, Math.min(first.length, HTTP2_PREFACE.length)));
      if (isHttp2) {
        // The HTTP/2 session reads the socket itself (natively) and takes the buffered bytes;
        // resuming the JS stream here would race it for the next bytes and break the session.
        http2Sockets.add(socket);
        h2.emit('connection', socket);
      } else {
        lingerOnClose(socket, () => current.get(socket));
        h1.emit('connection', socket);
        socket.resume();
      }
    });
    socket.on('error', () => socket.destroy());
  });
  front.maxConnections = limits.maxConnections;
  await new Promise<void>((resolve, reject) => {
    front.once('error', reject);
    front.listen(address.port, address.host, () => resolve());
  });
  const port = (front.address() as net.AddressInfo).port;
  return {
    port,
    async close() {
      closing = true;
      for (const res of unstarted) if (!res.headersSent) res.setHeader('Connection', 'close');
      unstarted.clear();
      await new Promise<void>((resolve) => {
        front.close(() => resolve());
        // Idle HTTP/1.1 connections (and ones that have sent nothing yet) have nothing to lose.
        for (const s of sockets) if (!http2Sockets.has(s) && (inFlight.get(s) ?? 0) === 0) s.destroy();
        // HTTP/2: sessions close once their open streams are done.
        h2.close();
        // Connections still busy after a grace period are cut.
        setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, 5000).unref();
      });
    },
  };
}
