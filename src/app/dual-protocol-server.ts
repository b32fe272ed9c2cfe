// One listening port for HTTP/1.1 (REST, Connect, gRPC-web) and cleartext HTTP/2 (gRPC,
// Connect): Node's HTTP/2 server only speaks h2c to clients with prior knowledge, so each
// connection is routed by its first bytes: the HTTP/2 preface goes to the HTTP/2 server,
// anything else to the HTTP/1.1 server. Both use the same request handler.
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import type { ListenAddress } from '../config/config.ts';

export type RequestHandler = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void;

const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

export interface DualProtocolServer {
  readonly port: number;
  /** Stops accepting connections and closes idle ones; in-flight requests finish. */
  close(): Promise<void>;
}

export async function startDualProtocolServer(address: ListenAddress, handler: RequestHandler): Promise<DualProtocolServer> {
  // While closing, a connection must not outlive its last response, or close() would wait
  // for the 5 s cut. h1.closeIdleConnections() cannot help: the connections are handed to h1,
  // which never listens, so it does not track them. Hence our own books: requests in flight
  // per HTTP/1.1 connection. On close, idle connections are closed at once, responses not yet
  // started say `Connection: close`, and a connection is ended (its bytes flushed first) when
  // its last response finishes.
  let closing = false;
  const inFlight = new Map<net.Socket, number>();
  const unstarted = new Set<http.ServerResponse>();
  const h1 = http.createServer({ keepAliveTimeout: 65_000, requestTimeout: 60_000, headersTimeout: 30_000 }, (req, res) => {
    const socket = req.socket;
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
    res.once('finish', finished);
    res.once('close', finished);
    handler(req, res);
  });
  const h2 = http2.createServer({}, handler);
  const sockets = new Set<net.Socket>();
  const http2Sockets = new Set<net.Socket>();
  const front = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      http2Sockets.delete(socket);
      inFlight.delete(socket);
    });
    socket.once('data', (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      const isHttp2 = first.subarray(0, Math.min(first.length, HTTP2_PREFACE.length)).equals(HTTP2_PREFACE.subarray(0, Math.min(first.length, HTTP2_PREFACE.length)));
      if (isHttp2) {
        // The HTTP/2 session reads the socket itself (natively) and takes the buffered bytes;
        // resuming the JS stream here would race it for the next bytes and break the session.
        http2Sockets.add(socket);
        h2.emit('connection', socket);
      } else {
        h1.emit('connection', socket);
        socket.resume();
      }
    });
    socket.on('error', () => socket.destroy());
  });
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
