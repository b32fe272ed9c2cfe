// The proxy Chromium is told to use: a loopback listener we own that closes every connection
// at once. Pointing the proxy at a fixed port (":9" style) would send CONNECTs to whatever
// else happens to listen there; owning the port guarantees nothing answers, and each attempt
// is counted. The resolver rules (launch-options.ts) stop connections before they get here, so
// a non-zero count means something got past them.

import { createServer } from 'node:net';
import type { Server } from 'node:net';

export class TripwireProxy {
  private server: Server | undefined;
  private connectionCount = 0;

  /** Connections Chromium tried to make through the proxy, all refused. */
  get connections(): number {
    return this.connectionCount;
  }

  get port(): number {
    const address = this.server?.address();
    if (!address || typeof address === 'string') throw new Error('Tripwire proxy is not listening');
    return address.port;
  }

  async start(): Promise<void> {
    if (this.server) return;
    const server = createServer({ pauseOnConnect: true }, (socket) => {
      this.connectionCount += 1;
      socket.destroy();
    });
    server.on('error', () => {}); // a failed accept must not crash the process
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.unref();
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
