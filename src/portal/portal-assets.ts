// Serves the portal (the single-page app built into portal/dist by `npm run build:portal`)
// on the admin listener: hashed files under /assets/ with a year-long immutable cache, and
// index.html for every app route (/templates/…, /invite/<token>, …) so deep links work.
// Every answer carries a Content-Security-Policy that allows this origin only: the portal
// loads no third-party script, style, font or frame, and no page may frame it.
// Files are read once and kept in memory with their gzip form (the whole build is a few MB).
// Only files that exist are kept: a missing path is looked up again each time, so requests for
// made-up paths (anyone may send them, unauthenticated) cannot grow the cache.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type http from 'node:http';
import type http2 from 'node:http2';

export const DEFAULT_PORTAL_DIR = fileURLToPath(new URL('../../portal/dist/', import.meta.url));

/**
 * blob: and data: in img-src are pdf.js's decoded images; worker-src 'self' is its parser
 * worker. The only inline code is CodeMirror's style elements, allowed by a nonce made per
 * page load (index.html carries it in a meta tag, the editor sets it on its style elements).
 */
export function portalCsp(styleNonce?: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    styleNonce ? `style-src 'self' 'nonce-${styleNonce}'` : "style-src 'self'",
    "img-src 'self' blob: data:",
    "font-src 'self'",
    "connect-src 'self'",
    "worker-src 'self'",
    "frame-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const NONCE_PLACEHOLDER = '__CSP_NONCE__';

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': portalCsp(),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
};

interface Asset {
  body: Buffer;
  gzip: Buffer | undefined;
  type: string;
  etag: string;
}

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;
// Both response kinds have writeHead(status, headers) and end(body); TypeScript cannot call
// through the union, so the writers below take the HTTP/1.1 shape.
type Writer = http.ServerResponse;

export interface PortalAssets {
  /** True when a build was found (otherwise `/` explains how to build it). */
  readonly available: boolean;
  /**
   * Answers everything but the admin RPCs (for which it returns false): portal routes and
   * files, and a JSON 404 for any other path or method.
   */
  handle(req: Request, res: Response): boolean;
  /** How many files are held in memory (bounded by the build: missing paths are not kept). */
  cachedFiles(): number;
}

/** RPC paths (`/docgen.admin.v1.X/Method`) belong to the admin services. */
function isRpcPath(path: string): boolean {
  return /^\/[a-z0-9_]+(\.[a-z0-9_]+)+\//i.test(path);
}

/**
 * The portal's routes (portal/src/app.tsx): the first path segment of every screen, and
 * `assets` twice over (the Assets screen at /assets, the built files under /assets/…).
 * Only these get the app's HTML; anything else (`/v1/generations` from a client pointed at
 * the wrong port, `/api/…`, `/healthz`) gets a JSON 404 in the interface's error shape.
 */
export const PORTAL_ROUTES: ReadonlySet<string> = new Set([
  '',
  'overview',
  'templates',
  'assets',
  'certificates',
  'api-keys',
  'webhooks',
  'deliveries',
  'generations',
  'batches',
  'members',
  'audit',
  'invite',
]);

function isPortalRoute(path: string): boolean {
  return PORTAL_ROUTES.has(path.split('/')[1] ?? '');
}

export function createPortalAssets(options: { dir?: string } = {}): PortalAssets {
  const dir = options.dir ?? DEFAULT_PORTAL_DIR;
  const available = existsSync(join(dir, 'index.html'));
  const cache = new Map<string, Asset>();

  const load = (relative: string): Asset | null => {
    const cached = cache.get(relative);
    if (cached) return cached;
    const file = normalize(join(dir, relative));
    let asset: Asset | null = null;
    if (file.startsWith(normalize(dir + sep)) && existsSync(file) && statSync(file).isFile()) {
      const body = readFileSync(file);
      const type = TYPES[extname(file)] ?? 'application/octet-stream';
      const compressible = /^(text\/|application\/json|image\/svg)/.test(type);
      asset = {
        body,
        gzip: compressible && body.length > 1024 ? gzipSync(body) : undefined,
        type,
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
      };
    }
    if (asset) cache.set(relative, asset);
    return asset;
  };

  const send = (req: Request, res: Writer, status: number, asset: Asset, cacheControl: string) => {
    const headers: Record<string, string> = {
      ...SECURITY_HEADERS,
      'content-type': asset.type,
      'cache-control': cacheControl,
      etag: asset.etag,
      vary: 'accept-encoding',
    };
    if (req.headers['if-none-match'] === asset.etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    const gzip = asset.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? asset.gzip! : asset.body;
    if (gzip) headers['content-encoding'] = 'gzip';
    headers['content-length'] = String(body.length);
    res.writeHead(status, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  const sendText = (res: Writer, status: number, text: string) => {
    res.writeHead(status, {
      ...SECURITY_HEADERS,
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
    });
    res.end(text);
  };

  const sendNotFound = (req: Request, res: Writer, path: string) => {
    const body = JSON.stringify({
      error: {
        code: 'NOT_FOUND',
        message: `No route for ${req.method ?? 'GET'} ${path} on the admin listener (the portal and the docgen.admin.v1 services); the public API (/v1/…) is served on the public listener`,
      },
    });
    res.writeHead(404, {
      ...SECURITY_HEADERS,
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'content-length': String(Buffer.byteLength(body)),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  return {
    available,
    cachedFiles: () => cache.size,
    handle(req, response) {
      const rawPath = (req.url ?? '/').split('?')[0] ?? '/';
      if (isRpcPath(rawPath)) return false;
      const res = response as Writer;
      const readOnly = req.method === 'GET' || req.method === 'HEAD';
      if (!readOnly || !isPortalRoute(rawPath)) {
        sendNotFound(req, res, rawPath);
        return true;
      }
      let path: string;
      try {
        path = decodeURIComponent(rawPath);
      } catch {
        sendText(res, 400, 'Malformed path.\n');
        return true;
      }
      if (!available) {
        sendText(
          res,
          503,
          'The portal is not built. Run `npm run build:portal` (scripts/setup.sh does it), then restart docgen.\n',
        );
        return true;
      }
      if (path.startsWith('/assets/')) {
        const asset = load(path.slice(1));
        if (asset) send(req, res, 200, asset, 'public, max-age=31536000, immutable');
        else sendText(res, 404, 'No such portal file.\n');
        return true;
      }
      // index.html is small and made per answer: each page load gets its own style nonce.
      const nonce = randomBytes(16).toString('base64');
      const page = Buffer.from(load('index.html')!.body.toString('utf8').replaceAll(NONCE_PLACEHOLDER, nonce));
      res.writeHead(200, {
        ...SECURITY_HEADERS,
        'content-security-policy': portalCsp(nonce),
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'content-length': String(page.length),
      });
      res.end(req.method === 'HEAD' ? undefined : page);
      return true;
    },
  };
}
