// Every page the pool renders in is set up once, here, before its first use: JavaScript off,
// and request interception that lets through only `data:` URLs (and about:blank frames), and
// answers asset URLs (asset-url.ts) itself from the current render's assets.
// The launch flags (launch-options.ts) are the second wall for anything interception misses.

import type { HTTPRequest, Page } from 'puppeteer';
import type { RenderAssets } from '../asset-loader.ts';
import { assetNameFromUrl } from '../liquid/asset-url.ts';

/** The assets of the render a page is doing now (pages are reused: set per render). */
const pageAssets = new WeakMap<Page, RenderAssets>();

export function setPageAssets(page: Page, assets: RenderAssets | undefined): void {
  if (assets && assets.size > 0) pageAssets.set(page, assets);
  else pageAssets.delete(page);
}

export interface PageGuardHooks {
  /** A request the page tried to make and was refused (URL scheme and host only: no data). */
  onBlocked?: (target: string) => void;
}

function describeTarget(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.host === '' ? parsed.protocol : `${parsed.protocol}//${parsed.host}`;
  } catch {
    return 'invalid URL';
  }
}

function isAllowed(request: HTTPRequest, page: Page): boolean {
  const url = request.url();
  if (!(url.startsWith('data:') || url === 'about:blank')) return false;
  // Content is set with Page.setDocumentContent, never by navigating: any navigation of the main
  // frame (meta refresh, a link target) would replace the document being printed.
  return !(request.isNavigationRequest() && request.frame() === page.mainFrame());
}

/** Per page, who wants to see its requests (the header/footer check) until it says stop. */
const observers = new WeakMap<Page, (request: HTTPRequest) => void>();

/** Calls `observer` for every request the page makes until the returned function is called. */
export function observeRequests(page: Page, observer: (request: HTTPRequest) => void): () => void {
  observers.set(page, observer);
  return () => {
    if (observers.get(page) === observer) observers.delete(page);
  };
}

export async function guardPage(page: Page, hooks: PageGuardHooks = {}): Promise<void> {
  page.on('request', (request) => {
    observers.get(page)?.(request);
    if (request.isInterceptResolutionHandled()) return;
    if (isAllowed(request, page)) {
      request.continue().catch(() => {}); // the page may be gone meanwhile
      return;
    }
    const name = assetNameFromUrl(request.url());
    const asset = name === undefined ? undefined : pageAssets.get(page)?.get(name);
    if (asset && !request.isNavigationRequest()) {
      // Fonts are fetched in CORS mode; the document's origin is opaque.
      const headers = { 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'no-store' };
      request.respond({ status: 200, contentType: asset.contentType, headers, body: asset.bytes }).catch(() => {});
      return;
    }
    hooks.onBlocked?.(describeTarget(request.url()));
    // 'aborted' cancels a navigation without committing an error page in its place.
    request.abort(request.isNavigationRequest() ? 'aborted' : 'blockedbyclient').catch(() => {});
  });
  await Promise.all([
    page.setJavaScriptEnabled(false),
    page.setRequestInterception(true),
    page.setBypassServiceWorker(true),
  ]);
}
