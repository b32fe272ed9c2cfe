// One webhook attempt against real sockets, all on loopback. Every receiver and canary is
// a node:http(s) server on 127.0.0.0/8 or ::1; where a test needs a "name", the lookup is
// an injected function, so no DNS query and no packet leaves the machine.
import { execFileSync } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HostLookup } from '../../src/webhooks/address-guard.ts';
import { RESPONSE_EXCERPT_BYTES, sendAttempt } from '../../src/webhooks/http-sender.ts';
import { generateWebhookSecret } from '../../src/webhooks/secret-box.ts';
import { buildSignedRequest } from '../../src/webhooks/signing.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  servername?: string | false;
}

interface Receiver {
  server: http.Server;
  port: number;
  host: string;
  /** Requests that arrived. */
  requests: Seen[];
  /** TCP connections accepted, whether or not a request followed. */
  connections: number;
  url(path?: string, scheme?: string): string;
}

const servers: http.Server[] = [];

async function receiver(
  host: string,
  handler: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void,
  options: { port?: number; tls?: { key: Buffer; cert: Buffer } } = {},
): Promise<Receiver> {
  const r = { requests: [] as Seen[], connections: 0 } as Receiver;
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      r.requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        servername: (req.socket as { servername?: string | false }).servername,
      });
      handler(req, res, body);
    });
  };
  const server = options.tls ? https.createServer(options.tls, onRequest) : http.createServer(onRequest);
  server.on(options.tls ? 'secureConnection' : 'connection', () => r.connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  servers.push(server);
  r.server = server;
  r.host = host;
  r.port = (server.address() as AddressInfo).port;
  r.url = (path = '/hook', scheme = options.tls ? 'https' : 'http') =>
    `${scheme}://${host.includes(':') ? `[${host}]` : host}:${r.port}${path}`;
  return r;
}

afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

const secret = generateWebhookSecret();

function signed(event: 'generation.completed' | 'generation.failed' = 'generation.completed') {
  return buildSignedRequest({
    deliveryId: 'dlv_65a1b2c3d4e5f60718293a4b',
    data:
      event === 'generation.failed'
        ? { event, generationId: 'gen_65a1b2c3d4e5f60718293a4c', error: 'Liquid error: unknown filter "foo"' }
        : { event, generationId: 'gen_65a1b2c3d4e5f60718293a4c' },
    eventTimestamp: Math.floor(Date.now() / 1000),
    secrets: { current: secret },
  });
}

/** A lookup that records calls and answers from a table (or a function of the call count). */
function fakeLookup(answer: (host: string, call: number) => string[]): HostLookup & { calls: string[] } {
  const calls: string[] = [];
  const fn: HostLookup = async (host) => {
    calls.push(host);
    return answer(host, calls.length).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(fn, { calls });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('sendAttempt: outcomes', () => {
  it('delivers the exact signed bytes; a 2xx is success', async () => {
    const rx = await receiver('127.0.0.1', (_req, res) =>
      res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks'),
    );
    for (const event of ['generation.completed', 'generation.failed'] as const) {
      const { body, headers } = signed(event);
      const result = await sendAttempt({
        url: rx.url('/hook?x=1'),
        headers,
        body,
        timeoutMs: 2000,
        allowInsecure: true,
      });
      expect(result).toMatchObject({
        ok: true,
        statusCode: 200,
        responseExcerpt: 'thanks',
        remoteAddress: '127.0.0.1',
      });
      expect(result.error).toBeUndefined();
      expect(result.durationMs).toBeGreaterThanOrEqual(0);

      const seen = rx.requests.at(-1)!;
      expect(seen.method).toBe('POST');
      expect(seen.url).toBe('/hook?x=1');
      expect(seen.body.equals(body)).toBe(true);
      expect(seen.headers['content-type']).toBe('application/json');
      expect(seen.headers['content-length']).toBe(String(body.length));
      expect(seen.headers['x-service-event']).toBe(event);
      expect(seen.headers['x-service-delivery']).toBe('dlv_65a1b2c3d4e5f60718293a4b');
      expect(seen.headers['user-agent']).toMatch(/^docgen-webhooks\/\d+\.\d+\.\d+/);
      expect(seen.headers['webhook-id']).toBe('dlv_65a1b2c3d4e5f60718293a4b');

      // The receiver of docs/webhooks.md: node:crypto, raw body, timing-safe.
      const expected = Buffer.from('sha256=' + createHmac('sha256', secret).update(seen.body).digest('hex'));
      const given = Buffer.from(String(seen.headers['x-service-signature']));
      expect(given.length === expected.length && timingSafeEqual(given, expected)).toBe(true);
      const payload = JSON.parse(seen.body.toString()).payload;
      expect('error' in payload).toBe(event === 'generation.failed');
    }
  });

  it('any 2xx counts, including 204 with no body', async () => {
    const rx = await receiver('127.0.0.1', (_req, res) => res.writeHead(204).end());
    const { body, headers } = signed();
    const result = await sendAttempt({ url: rx.url(), headers, body, timeoutMs: 2000, allowInsecure: true });
    expect(result).toMatchObject({ ok: true, statusCode: 204 });
    expect(result.responseExcerpt).toBeUndefined();
  });

  it('a 500 is a failure that keeps the status and the start of the answer', async () => {
    const rx = await receiver('127.0.0.1', (_req, res) => res.writeHead(500).end('database down'));
    const { body, headers } = signed();
    const result = await sendAttempt({ url: rx.url(), headers, body, timeoutMs: 2000, allowInsecure: true });
    expect(result).toMatchObject({
      ok: false,
      statusCode: 500,
      error: 'receiver answered 500',
      responseExcerpt: 'database down',
    });
  });

  it('a receiver that does not answer in time fails after about the time-out', async () => {
    const rx = await receiver('127.0.0.1', () => undefined); // never answers
    const { body, headers } = signed();
    const result = await sendAttempt({ url: rx.url(), headers, body, timeoutMs: 400, allowInsecure: true });
    expect(result.ok).toBe(false);
    expect(result.statusCode).toBeUndefined();
    expect(result.error).toBe('timed out after 400 ms');
    expect(result.durationMs).toBeGreaterThanOrEqual(380);
    expect(result.durationMs).toBeLessThan(1000);
    expect(rx.requests).toHaveLength(1);
  });

  it('headers in time but a body that never ends: the status decides, at the deadline at the latest', async () => {
    const rx = await receiver('127.0.0.1', (_req, res) => {
      res.writeHead(202);
      res.write('accepted, still talking');
    });
    const { body, headers } = signed();
    const result = await sendAttempt({ url: rx.url(), headers, body, timeoutMs: 400, allowInsecure: true });
    expect(result).toMatchObject({ ok: true, statusCode: 202, responseExcerpt: 'accepted, still talking' });
    expect(result.durationMs).toBeLessThan(1000);
  });

  it('a 302 is a failure and the redirect target (a loopback canary) receives nothing', async () => {
    const canary = await receiver('127.0.0.1', (_req, res) => res.writeHead(200).end());
    const rx = await receiver('127.0.0.1', (_req, res) =>
      res.writeHead(302, { location: canary.url('/stolen') }).end(),
    );
    const { body, headers } = signed();
    const result = await sendAttempt({ url: rx.url(), headers, body, timeoutMs: 2000, allowInsecure: true });
    expect(result.ok).toBe(false);
    expect(result.statusCode).toBe(302);
    expect(result.error).toMatch(/^receiver answered 302, a redirect, which is not followed/);
    await sleep(200);
    expect(canary.connections).toBe(0);
    expect(canary.requests).toHaveLength(0);
  });

  it('a huge answer is cut: 4 KiB kept, the connection dropped, memory flat', async () => {
    let written = 0;
    let closed = false;
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const rx = await receiver('127.0.0.1', (_req, res) => {
      res.writeHead(200, { 'content-length': String(8 * 1024 ** 3) }); // claims 8 GiB
      res.on('close', () => (closed = true));
      const pump = () => {
        while (!closed && written < 8 * 1024 ** 3) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      pump();
    });
    const { body, headers } = signed();
    const rssBefore = process.memoryUsage().rss;
    const result = await sendAttempt({ url: rx.url(), headers, body, timeoutMs: 5000, allowInsecure: true });
    const rssAfter = process.memoryUsage().rss;
    expect(result).toMatchObject({ ok: true, statusCode: 200 });
    expect(result.responseExcerpt).toHaveLength(RESPONSE_EXCERPT_BYTES);
    expect(result.durationMs).toBeLessThan(2000);
    await sleep(200);
    expect(closed).toBe(true); // the sender dropped the connection instead of draining
    expect(written).toBeLessThan(64 * 1024 ** 2); // only what socket buffers absorbed
    expect(rssAfter - rssBefore).toBeLessThan(64 * 1024 ** 2);
  });

  it('connection refused and dropped connections are failures, not exceptions', async () => {
    const closedPort = await (async () => {
      const rx = await receiver('127.0.0.1', () => undefined);
      const port = rx.port;
      rx.server.close();
      return port;
    })();
    const { body, headers } = signed();
    const refused = await sendAttempt({
      url: `http://127.0.0.1:${closedPort}/`,
      headers,
      body,
      timeoutMs: 2000,
      allowInsecure: true,
    });
    expect(refused).toMatchObject({ ok: false, error: 'connection refused' });

    const rude = await receiver('127.0.0.1', (req) => req.socket.destroy());
    const hungUp = await sendAttempt({ url: rude.url(), headers, body, timeoutMs: 2000, allowInsecure: true });
    expect(hungUp.ok).toBe(false);
    expect(hungUp.error).toBeTruthy();

    const badHeader = await sendAttempt({
      url: rude.url(),
      headers: { ...headers, 'X-Bad': 'a\r\nb' },
      body,
      timeoutMs: 2000,
      allowInsecure: true,
    });
    expect(badHeader.ok).toBe(false);
    expect(badHeader.error).toMatch(/ERR_INVALID_CHAR/);

    const notUrl = await sendAttempt({ url: 'not a url', headers, body, timeoutMs: 2000, allowInsecure: true });
    expect(notUrl).toMatchObject({ ok: false, error: 'invalid URL' });
  });

  it('a resolver that hangs counts against the same deadline', async () => {
    const { body, headers } = signed();
    const result = await sendAttempt({
      url: 'http://slow-dns.test:1/',
      headers,
      body,
      timeoutMs: 300,
      allowInsecure: true,
      lookup: () => new Promise(() => undefined),
    });
    expect(result).toMatchObject({ ok: false, error: 'timed out after 300 ms resolving the host' });
    expect(result.durationMs).toBeLessThan(1000);
  });

  it('one slow endpoint does not delay another', async () => {
    const slow = await receiver('127.0.0.1', (_req, res) => setTimeout(() => res.writeHead(200).end(), 1500));
    const fast = await receiver('127.0.0.2', (_req, res) => res.writeHead(200).end());
    const { body, headers } = signed();
    const slowOnes = Array.from({ length: 50 }, () =>
      sendAttempt({ url: slow.url(), headers, body, timeoutMs: 5000, allowInsecure: true }),
    );
    await sleep(100); // the slow ones are all in flight
    const t0 = performance.now();
    const quick = await sendAttempt({ url: fast.url(), headers, body, timeoutMs: 5000, allowInsecure: true });
    const elapsed = performance.now() - t0;
    expect(quick.ok).toBe(true);
    expect(elapsed).toBeLessThan(500);
    // Many attempts to the same slow host do not queue behind each other either.
    const results = await Promise.all(slowOnes);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(Math.max(...results.map((r) => r.durationMs))).toBeLessThan(3000);
    expect(slow.requests).toHaveLength(50);
  });
});

describe('sendAttempt: address guard at delivery time', () => {
  it('with insecure URLs not allowed, 127.0.0.1, [::1], localhost and a name resolving to 127.0.0.1 are refused and the canary sees nothing', async () => {
    const canary4 = await receiver('127.0.0.1', (_req, res) => res.writeHead(200).end());
    const canary6 = await receiver('::1', (_req, res) => res.writeHead(200).end(), { port: canary4.port }).catch(
      () => undefined,
    );
    const lookup = fakeLookup(() => ['127.0.0.1']);
    const { body, headers } = signed();
    const urls = [
      `https://127.0.0.1:${canary4.port}/hook`,
      `http://127.0.0.1:${canary4.port}/hook`,
      `https://[::1]:${canary4.port}/hook`,
      `https://localhost:${canary4.port}/hook`,
      `https://[::ffff:127.0.0.1]:${canary4.port}/hook`,
      `https://loopback-name.test:${canary4.port}/hook`,
    ];
    for (const url of urls) {
      const result = await sendAttempt({ url, headers, body, timeoutMs: 2000, allowInsecure: false, lookup });
      expect(result.ok, url).toBe(false);
      expect(result.error, url).toMatch(/^refused: /);
      expect(result.remoteAddress).toBeUndefined();
    }
    // The system resolver too: localhost is refused by name, before any lookup.
    const viaSystem = await sendAttempt({
      url: `https://localhost:${canary4.port}/hook`,
      headers,
      body,
      timeoutMs: 2000,
      allowInsecure: false,
    });
    expect(viaSystem.error).toBe('refused: localhost is a loopback host name, refused');
    expect(lookup.calls).toEqual(['loopback-name.test']);
    await sleep(100);
    expect(canary4.connections).toBe(0);
    expect(canary6?.connections ?? 0).toBe(0);
  });

  it('the same URLs work when insecure URLs are allowed (local development)', async () => {
    const rx = await receiver('127.0.0.1', (_req, res) => res.writeHead(200).end());
    const rx6 = await receiver('::1', (_req, res) => res.writeHead(200).end(), { port: rx.port }).catch(
      () => undefined,
    );
    const { body, headers } = signed();
    expect(await sendAttempt({ url: rx.url(), headers, body, timeoutMs: 2000, allowInsecure: true })).toMatchObject({
      ok: true,
    });
    expect(
      await sendAttempt({
        url: `http://localhost:${rx.port}/hook`,
        headers,
        body,
        timeoutMs: 2000,
        allowInsecure: true,
      }),
    ).toMatchObject({ ok: true });
    if (rx6) {
      expect(
        await sendAttempt({ url: `http://[::1]:${rx.port}/hook`, headers, body, timeoutMs: 2000, allowInsecure: true }),
      ).toMatchObject({ ok: true, remoteAddress: '::1' });
    }
  });

  it('DNS rebinding: the connection goes to the address that was checked, not to a later answer', async () => {
    // Receiver on 127.0.0.1:P; canary on 127.0.0.2:P (same port). The name answers
    // 127.0.0.1 the first time and 127.0.0.2 on every later call.
    const rx = await receiver('127.0.0.1', (_req, res) => res.writeHead(200).end('checked'));
    const canary = await receiver('127.0.0.2', (_req, res) => res.writeHead(200).end('rebound'), { port: rx.port });
    const lookup = fakeLookup((_host, call) => (call === 1 ? ['127.0.0.1'] : ['127.0.0.2']));
    const { body, headers } = signed();
    const result = await sendAttempt({
      url: `http://rebind.test:${rx.port}/hook`,
      headers,
      body,
      timeoutMs: 2000,
      allowInsecure: true,
      lookup,
    });
    expect(result).toMatchObject({ ok: true, remoteAddress: '127.0.0.1', responseExcerpt: 'checked' });
    expect(lookup.calls).toEqual(['rebind.test']); // resolved once: http.request did not ask again
    expect(rx.requests[0]!.headers.host).toBe(`rebind.test:${rx.port}`); // Host stays the URL's name
    await sleep(100);
    expect(canary.connections).toBe(0);
  });

  it('DNS rebinding to a refused address at delivery time is refused before connecting', async () => {
    // Accepted at creation (the checker saw an allowed answer); at delivery the name now
    // answers a loopback address: refused, and the loopback canary sees nothing.
    const canary = await receiver('127.0.0.1', (_req, res) => res.writeHead(200).end());
    const lookup = fakeLookup(() => ['127.0.0.1']);
    const { body, headers } = signed();
    const result = await sendAttempt({
      url: `https://hooks.test:${canary.port}/hook`,
      headers,
      body,
      timeoutMs: 2000,
      allowInsecure: false,
      lookup,
    });
    expect(result).toMatchObject({
      ok: false,
      error: `refused: hooks.test resolves to 127.0.0.1 is a loopback address, refused`,
    });
    await sleep(100);
    expect(canary.connections).toBe(0);
  });
});

let opensslWorks = false;
try {
  execFileSync('openssl', ['version'], { stdio: 'ignore' });
  opensslWorks = true;
} catch {
  // No openssl: the TLS tests are skipped.
}

describe.skipIf(!opensslWorks)('sendAttempt over TLS with a pinned address', () => {
  let dir = '';
  let tls: { key: Buffer; cert: Buffer };

  beforeAll(() => {
    dir = mkdtempSync(join(process.env.DOCGEN_TEST_RUN_DIR ?? tmpdir(), 'webhook-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=hooks.test',
        '-addext',
        'subjectAltName=DNS:hooks.test',
      ],
      { stdio: 'ignore' },
    );
    tls = { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('verifies the certificate against the URL host name (SNI included) while connecting to the checked address', async () => {
    const rx = await receiver('127.0.0.1', (_req, res) => res.writeHead(200).end('tls ok'), { tls });
    const lookup = fakeLookup(() => ['127.0.0.1']);
    const agent = new https.Agent({ ca: tls.cert, keepAlive: false });
    const { body, headers } = signed();
    const result = await sendAttempt({
      url: `https://hooks.test:${rx.port}/hook`,
      headers,
      body,
      timeoutMs: 3000,
      allowInsecure: true,
      lookup,
      agent,
    });
    expect(result).toMatchObject({ ok: true, statusCode: 200, responseExcerpt: 'tls ok', remoteAddress: '127.0.0.1' });
    expect(rx.requests[0]!.servername).toBe('hooks.test');
    expect(rx.requests[0]!.headers.host).toBe(`hooks.test:${rx.port}`);

    // Same server and address, another name: the certificate does not match, so it fails.
    const wrongName = await sendAttempt({
      url: `https://other.test:${rx.port}/hook`,
      headers,
      body,
      timeoutMs: 3000,
      allowInsecure: true,
      lookup,
      agent,
    });
    expect(wrongName.ok).toBe(false);
    expect(wrongName.error).toMatch(/^TLS failed \(ERR_TLS_CERT_ALTNAME_INVALID\)/);

    // Without trusting the test CA (the default agent), the self-signed certificate is rejected.
    const untrusted = await sendAttempt({
      url: `https://hooks.test:${rx.port}/hook`,
      headers,
      body,
      timeoutMs: 3000,
      allowInsecure: true,
      lookup,
    });
    expect(untrusted.ok).toBe(false);
    expect(untrusted.error).toMatch(/^TLS failed/);
    expect(rx.requests).toHaveLength(1);
  });
});
