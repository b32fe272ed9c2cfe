// The print channel of a pool page (src/render/chromium/devtools-print.ts) with real Chromium:
// the page is hidden from its first use, so Chromium does not paint, raster and composite each
// document for a screen nobody looks at, and a hidden page still sets documents, waits for
// their fonts and prints them.

import { rmSync } from 'node:fs';
import puppeteer, { type Browser, type Page } from 'puppeteer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import { printChannel, printToPdf, setDocument } from '../../src/render/chromium/devtools-print.ts';
import { chromiumFlags, devShmIsRoomy, resolveChromiumExecutable } from '../../src/render/chromium/launch-options.ts';
import { toPrintParams } from '../../src/render/pdf-options.ts';
import { chromiumPath, uniqueRunDir } from '../harness/dependencies.ts';
import { pdfText, startCanary, type Canary } from './render-support.ts';

let browser: Browser;
let canary: Canary;
let profile: string;

beforeAll(async () => {
  // The launch flags send any request to a loopback proxy port: a canary that nothing here reaches.
  canary = await startCanary();
  profile = uniqueRunDir('devtools-print');
  browser = await puppeteer.launch({
    executablePath: resolveChromiumExecutable(chromiumPath()),
    args: chromiumFlags({ proxyPort: canary.port, useDevShm: devShmIsRoomy(), noSandbox: process.getuid?.() === 0 }),
    userDataDir: profile,
    headless: true,
  });
});

afterAll(async () => {
  await browser?.close();
  await canary?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** document.visibilityState of the page's current document, read over the DevTools protocol
 * (page scripts may be off). */
async function visibility(page: Page): Promise<string> {
  const session = await page.createCDPSession();
  try {
    const { result } = await session.send('Runtime.evaluate', {
      expression: 'document.visibilityState',
      returnByValue: true,
    });
    return String(result.value);
  } finally {
    await session.detach();
  }
}

const document = (text: string) =>
  `<!DOCTYPE html><html lang="en"><body><h1>${text}</h1><p>Printed from a hidden page.</p></body></html>`;

describe('print channel', () => {
  it('hides the page from its first use: every document it is given is hidden, and prints', async () => {
    const page = await browser.newPage();
    expect(await visibility(page)).toBe('visible');
    await printChannel(page);
    expect(await visibility(page)).toBe('hidden');

    const params = toPrintParams(DEFAULT_PDF_OPTIONS, { tagged: true });
    for (const title of ['First document', 'Second document']) {
      expect(await setDocument(page, document(title), 10_000)).toBe(true);
      expect(await visibility(page)).toBe('hidden');
      const text = await pdfText(await printToPdf(page, params));
      expect(text).toContain(title);
      expect(text).toContain('Printed from a hidden page.');
    }
    expect(canary.connections).toBe(0);
    await page.close();
  });
});
