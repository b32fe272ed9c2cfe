// Chromium prints the header and footer templates in frames that have no way to load anything:
// an image that is not a data: URL is left out, but a stylesheet or a font that is not a data:
// URL (a <link rel=stylesheet>, <link rel=preload as=style|font>, @import, @font-face src,
// also through <base href>) crashes the page's renderer process ("Printing failed"), every time.
// Measured with Chromium 156; see test/integration/render-isolation.test.ts. Inline <style> and
// data: URLs (images, fonts, stylesheets, @import) print fine.
//
// Publishing refuses such templates (src/render/liquid/analyze-template.ts), but a header can
// also get its URLs from variables or Liquid. So before printing, the rendered header and footer
// are loaded as ordinary documents (iframe srcdoc) in the render's own page, where request
// interception sees and refuses every load; a stylesheet or font load that is not a data: URL
// fails the render permanently with a message naming the template and the resource, instead of
// crashing a renderer and being retried.

import type { HTTPRequest, Page } from 'puppeteer';
import { RenderError } from '../render-error.ts';
import { observeRequests } from './page-guard.ts';
import { loadTimeoutMessage, unloadableReferences } from '../liquid/resource-references.ts';

const CRASHING_TYPES: Record<string, string> = {
  stylesheet: 'an external stylesheet',
  font: 'an external font',
};

/** Quiet time after the load event that counts as "no more requests coming". */
const SETTLE_MS = 25;

function attribute(value: string): string {
  return value.replaceAll('&', '&amp;').replaceAll('"', '&quot;');
}

// A stylesheet or font load needs one of these in the markup: a <link>, <meta> or <base>
// element, a frame or embedded document (whose srcdoc hides its markup behind entities), SVG,
// CSS @import, a url() that is not a data: URL, image-set()/src(), or a CSS escape or character
// reference that could spell any of them (`@\69mport`, `u&#114;l(`). A header or footer with
// none of them (text, page-number spans, the version's CSS after its external URLs were
// replaced) cannot load anything, so the extra document load is skipped for it; anything else
// is checked by loading it. Liquid's own escapes (&amp; &lt; &gt; &quot; &#39;) are plain text.
const MAY_LOAD_RESOURCES =
  /<(?:link|meta|base|i?frame|object|embed|svg|math|template|portal)|@import|url\s*\((?!\s*['"]?data:)|image-set|\bsrc\s*\(|\\|&(?!(?:amp|lt|gt|quot|#39|#x27);)/i;

/** Whether a rendered header or footer could make Chromium load a resource (cheap, conservative). */
export function mayLoadResources(html: string): boolean {
  return MAY_LOAD_RESOURCES.test(html);
}

/** The problem with a header or footer, or undefined when it is safe to print. */
export async function checkHeaderFooter(
  page: Page,
  templates: { headerTemplate: string; footerTemplate: string },
  timeoutMs: number,
): Promise<RenderError | undefined> {
  const slots = (['header', 'footer'] as const).filter((slot) => mayLoadResources(templates[`${slot}Template`]));
  if (slots.length === 0) return undefined;
  const found: { slot: string; what: string }[] = [];
  const stop = observeRequests(page, (request: HTTPRequest) => {
    const what = CRASHING_TYPES[request.resourceType()];
    if (what === undefined || request.url().startsWith('data:')) return;
    const slot = request.frame()?.name() ?? '';
    found.push({ slot: slots.includes(slot as 'header') ? slot : slots[0]!, what });
  });
  try {
    const frames = slots.map(
      (slot) => `<iframe name="${slot}" srcdoc="${attribute(templates[`${slot}Template`])}"></iframe>`,
    );
    const started = Date.now();
    await page.setContent(`<!doctype html><html><body>${frames.join('')}</body></html>`, {
      waitUntil: 'load',
      timeout: timeoutMs,
    });
    // Preloads do not hold up the load event, and their requests can be reported just after it.
    await page.waitForNetworkIdle({ idleTime: SETTLE_MS, timeout: Math.max(1, timeoutMs - (Date.now() - started)) });
  } catch (err) {
    if (found.length === 0) {
      // Name the template, and what in it held the load up (an SVG <use> of an external file).
      const culprit = slots.find((slot) => unloadableReferences(templates[`${slot}Template`]).length > 0);
      const slot = culprit ?? (slots.length === 1 ? slots[0] : undefined);
      const what = slot ? `The ${slot} template` : 'The header or footer template';
      const html = slot ? templates[`${slot}Template`] : '';
      return new RenderError('PAGE_LOAD_TIMEOUT', loadTimeoutMessage(what, timeoutMs, html), { cause: err });
    }
  } finally {
    stop();
  }
  const first = found[0];
  if (!first) return undefined;
  return new RenderError(
    'INVALID_TEMPLATE',
    `The ${first.slot} template loads ${first.what}: not allowed (Chromium cannot load resources in headers and footers); put the CSS in a <style> element and embed fonts and images as data: URLs`,
  );
}
