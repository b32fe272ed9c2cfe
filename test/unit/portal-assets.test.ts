// The admin listener's static serving of the portal: app routes get index.html, hashed
// assets a long immutable cache, RPC paths and POSTs pass through, and every answer carries
// a same-origin-only Content-Security-Policy.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PORTAL_ROUTES, createPortalAssets, type PortalAssets } from '../../src/portal/portal-assets.ts';
import { uniqueRunDir } from '../harness/dependencies.ts';

let server: http.Server;
let base: string;
let passedThrough: string[] = [];
let served: PortalAssets;
let portalDir: string;

async function serve(portal: PortalAssets): Promise<void> {
  server = http.createServer((req, res) => {
    if (portal.handle(req, res)) return;
    passedThrough.push(`${req.method} ${req.url}`);
    res.writeHead(418).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

beforeAll(async () => {
  const dir = uniqueRunDir('portal-dist');
  mkdirSync(join(dir, 'assets'), { recursive: true });
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><title>portal</title><meta name="docgen-csp-nonce" content="__CSP_NONCE__"><script type="module" src="/assets/index-abc123.js"></script>',
  );
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), `console.log(${JSON.stringify('x'.repeat(5000))});`);
  portalDir = dir;
  served = createPortalAssets({ dir });
  await serve(served);
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('portal assets', () => {
  it('10,000 distinct missing asset paths do not grow the cache (only existing files are kept)', async () => {
    expect((await fetch(`${base}/assets/index-abc123.js`)).status).toBe(200);
    const before = served.cachedFiles();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    const get = (path: string) =>
      new Promise<number>((resolve, reject) => {
        http
          .get(base + path, { agent }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          })
          .on('error', reject);
      });
    for (let batch = 0; batch < 100; batch++) {
      const statuses = await Promise.all(
        Array.from({ length: 100 }, (_, i) => get(`/assets/missing-${batch}-${i}-${'x'.repeat(200)}.js`)),
      );
      expect(new Set(statuses)).toEqual(new Set([404]));
    }
    agent.destroy();
    expect(served.cachedFiles()).toBe(before);
    // A file that appears later is found: misses were not remembered.
    expect((await fetch(`${base}/assets/late-1.js`)).status).toBe(404);
    writeFileSync(join(portalDir, 'assets', 'late-1.js'), 'console.log(1);');
    expect((await fetch(`${base}/assets/late-1.js`)).status).toBe(200);
  });

  it('answers app routes, including invitation links, with index.html carrying a fresh style nonce', async () => {
    for (const path of ['/', '/templates', '/templates/tpl_123/compare?a=1&b=2', '/invite/abc.DEF-123']) {
      const res = await fetch(base + path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-store');
      const html = await res.text();
      expect(html).toContain('<title>portal</title>');
      const nonce = /content="([^"]+)"/.exec(html)?.[1] ?? '';
      expect(nonce).toMatch(/^[A-Za-z0-9+/=]{20,}$/);
      expect(res.headers.get('content-security-policy')).toContain(`style-src 'self' 'nonce-${nonce}'`);
    }
  });

  it('sends hashed assets with a year-long immutable cache, gzip when accepted, and 304 on a matching ETag', async () => {
    const res = await fetch(`${base}/assets/index-abc123.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await res.text()).toContain('xxxxx');
    const raw = await new Promise<{ encoding: string | undefined; body: Buffer; etag: string }>((resolve, reject) => {
      http
        .get(`${base}/assets/index-abc123.js`, { headers: { 'accept-encoding': 'gzip' } }, (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () =>
            resolve({
              encoding: r.headers['content-encoding'],
              body: Buffer.concat(chunks),
              etag: String(r.headers.etag),
            }),
          );
        })
        .on('error', reject);
    });
    expect(raw.encoding).toBe('gzip');
    expect(gunzipSync(raw.body).toString()).toContain('xxxxx');
    const again = await fetch(`${base}/assets/index-abc123.js`, { headers: { 'if-none-match': raw.etag } });
    expect(again.status).toBe(304);
  });

  it('answers 404 for missing assets and file-like paths, and never serves files outside the build', async () => {
    expect((await fetch(`${base}/assets/missing-000.js`)).status).toBe(404);
    expect((await fetch(`${base}/favicon.ico`)).status).toBe(404);
    expect((await fetch(`${base}/assets/..%2f..%2fpackage.json`)).status).toBe(404);
  });

  it('puts a same-origin Content-Security-Policy and nosniff on every answer', async () => {
    for (const path of ['/', '/assets/index-abc123.js', '/assets/missing.js']) {
      const res = await fetch(base + path);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/https?:|unsafe-inline|unsafe-eval|\*/);
      expect(csp).not.toContain('__CSP_NONCE__');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('passes Connect RPC paths and non-GET requests through to the admin services', async () => {
    passedThrough = [];
    expect(
      (await fetch(`${base}/docgen.admin.v1.TemplateService/ListTemplates`, { method: 'POST', body: '{}' })).status,
    ).toBe(418);
    expect(
      (await fetch(`${base}/docgen.admin.v1.SessionService/GetCurrentSession?connect=v1&encoding=json&message=%7B%7D`))
        .status,
    ).toBe(418);
    expect(passedThrough).toHaveLength(2);
  });

  it('answers API-looking and unknown paths, and writes outside the RPCs, with a JSON 404 in the interface error shape', async () => {
    passedThrough = [];
    const cases: Array<[string, string]> = [
      ['GET', '/v1/generations'],
      ['GET', '/v1/generations/gen_123?x=1'],
      ['POST', '/v1/generations'],
      ['GET', '/api/things'],
      ['GET', '/healthz'],
      ['GET', '/favicon.ico'],
      ['POST', '/templates'],
      ['DELETE', '/generations/gen_1'],
    ];
    for (const [method, path] of cases) {
      const res = await fetch(base + path, { method, ...(method === 'POST' ? { body: '{}' } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/json');
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('NOT_FOUND');
      expect(body.error.message).toContain(path.split('?')[0]);
    }
    expect(passedThrough).toHaveLength(0);
    // The portal's own routes still get the app.
    for (const path of ['/overview', '/generations/gen_1', '/assets', '/members']) {
      const res = await fetch(base + path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    }
  });

  it('explains how to build the portal when there is no build', async () => {
    const portal = createPortalAssets({ dir: uniqueRunDir('no-portal') });
    expect(portal.available).toBe(false);
    const other = http.createServer((req, res) => void portal.handle(req, res));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const res = await fetch(`http://127.0.0.1:${(other.address() as { port: number }).port}/templates`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('npm run build:portal');
    await new Promise<void>((resolve) => other.close(() => resolve()));
  });
});

describe('the portal routes served as the app', () => {
  it('include every screen of portal/src/app.tsx (a deep link or a reload of any screen gets the app)', () => {
    const app = readFileSync(new URL('../../portal/src/app.tsx', import.meta.url), 'utf8');
    const screens = [...app.matchAll(/<Route path="\/([^/"]*)/g)].map((m) => m[1]!);
    expect(screens).toContain('certificates');
    expect(screens.filter((s) => !PORTAL_ROUTES.has(s))).toEqual([]);
  });
});
