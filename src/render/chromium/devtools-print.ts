// Setting a page's document and printing it through the DevTools protocol directly, on a session
// of the page's own. puppeteer's setContent + pdf take more round trips for the same result: the
// HTML goes through a script evaluation (document.write) that waits for the page's execution
// context, the lifecycle is watched through its frame manager, the font wait creates an isolated
// world in every new document, and the PDF comes back as a stream read in chunks. Here it is one
// Page.setDocumentContent (no navigation, so nothing for interception to see for the document
// itself), the page's load event, one evaluation for document.fonts.ready, and one
// Page.printToPDF returning the PDF in its answer. Measured on the sample invoice: 3 to 5 % more
// PDFs per second than puppeteer's calls (docs/architecture.md#print-path).

import type { CDPSession, Page } from 'puppeteer';

export type PrintToPdfParams = {
  landscape: boolean;
  displayHeaderFooter: boolean;
  headerTemplate: string;
  footerTemplate: string;
  printBackground: boolean;
  scale: number;
  paperWidth: number;
  paperHeight: number;
  marginTop: number;
  marginBottom: number;
  marginLeft: number;
  marginRight: number;
  pageRanges?: string;
  preferCSSPageSize: boolean;
  generateTaggedPDF: boolean;
  generateDocumentOutline?: boolean;
};

interface PrintChannel {
  session: CDPSession;
  /** The page's main frame: the same across documents set with Page.setDocumentContent. */
  frameId: string;
}

const channels = new WeakMap<Page, Promise<PrintChannel>>();

/** The page's print session, opened on first use (the pool opens it while preparing the page). */
export function printChannel(page: Page): Promise<PrintChannel> {
  let channel = channels.get(page);
  if (!channel) {
    channel = (async () => {
      const session = await page.createCDPSession();
      await session.send('Page.enable');
      const { frameTree } = await session.send('Page.getFrameTree');
      // Nobody looks at the page: with its window minimized the document is hidden, so Chromium
      // no longer paints, rasters and composites it for a screen after every document (printing
      // lays out and paints for print on its own). Measured on the sample invoice: about 9 %
      // less Chromium CPU per PDF and the same PDF, byte for byte (docs/architecture.md#print-path).
      await hideWindow(session);
      return { session, frameId: frameTree.frame.id };
    })();
    channels.set(page, channel);
    channel.catch(() => channels.delete(page));
  }
  return channel;
}

/** Minimizes the page's window. Best effort: a Chromium whose pages have no window to minimize
 * (DOCGEN_CHROMIUM_PATH may name any) still prints, only without the saving. */
async function hideWindow(session: CDPSession): Promise<void> {
  try {
    const { windowId } = await session.send('Browser.getWindowForTarget');
    await session.send('Browser.setWindowBounds', { windowId, bounds: { windowState: 'minimized' } });
  } catch {
    // Nothing to hide: the page is printed as it is.
  }
}

/**
 * Replaces the page's document with `html` and waits for its load event and its fonts.
 * Resolves false when that takes longer than `timeoutMs` (the page is then in an unknown
 * state: the caller must not reuse it).
 */
export async function setDocument(page: Page, html: string, timeoutMs: number): Promise<boolean> {
  const { session, frameId } = await printChannel(page);
  let timer: NodeJS.Timeout | undefined;
  let onLoad: (() => void) | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  // Subscribed before the content is set: the event can arrive before the command's answer.
  const loaded = new Promise<true>((resolve) => {
    onLoad = () => resolve(true);
    session.once('Page.loadEventFired', onLoad);
  });
  try {
    const ready = (async () => {
      await session.send('Page.setDocumentContent', { frameId, html });
      await loaded;
      // Web fonts (data: URLs) may still be decoding after the load event; puppeteer's pdf()
      // waits for the same promise. Evaluation by the protocol runs with the page's scripts off.
      await session.send('Runtime.evaluate', {
        expression: 'document.fonts.ready.then(() => true)',
        awaitPromise: true,
        returnByValue: true,
      });
      return true as const;
    })();
    ready.catch(() => {}); // after a time-out nobody waits for it
    return await Promise.race([ready, timedOut]);
  } finally {
    clearTimeout(timer);
    if (onLoad) session.off('Page.loadEventFired', onLoad);
  }
}

/** Prints the page's current document; the PDF comes back in the command's answer. */
export async function printToPdf(page: Page, params: PrintToPdfParams): Promise<Buffer> {
  const { session } = await printChannel(page);
  const { data } = await session.send('Page.printToPDF', { ...params, transferMode: 'ReturnAsBase64' });
  return Buffer.from(data, 'base64');
}
