// Hostile templates against the real engine (Liquid workers + Chromium): nothing reaches the
// network or the file system, runaway renders end within their time-out, and the pool keeps
// serving. Every hostile URL points at a loopback canary of this test, nowhere else.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import puppeteer from 'puppeteer';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import type { JsonObject, TemplateVersionContent } from '../../src/domain/template.ts';
import { chromiumFlags, resolveChromiumExecutable } from '../../src/render/chromium/launch-options.ts';
import { TripwireProxy } from '../../src/render/chromium/tripwire-proxy.ts';
import { RenderError } from '../../src/render/render-error.ts';
import { createRenderEngine } from '../../src/render/render-engine.ts';
import type { RenderEngine } from '../../src/render/render-engine.ts';
import { chromiumPath, uniqueRunDir } from '../harness/dependencies.ts';
import { eventually, leftovers, pdfText, startCanary } from './render-support.ts';
import type { Canary } from './render-support.ts';
import { renderEngineTestConfig } from '../harness/test-config.ts';

const SECRET = 'root:x:0:0';
let canary: Canary;
let engine: RenderEngine;
let profiles: string;

beforeAll(async () => {
  canary = await startCanary();
  // The canary does count: one direct request from this process, then back to zero.
  expect(await (await fetch(`http://127.0.0.1:${canary.port}/self-check`)).text()).toBe('CANARY-REACHED');
  expect(canary.connections).toBe(1);
  canary.connections = 0;
  canary.seen.length = 0;
  profiles = uniqueRunDir('chromium-hostile');
  engine = await createRenderEngine(
    renderEngineTestConfig({ timeoutMs: 4_000, liquidTimeoutMs: 1_000, liquidMemoryMb: 48, userDataDir: profiles }),
    {},
  );
});

afterAll(async () => {
  await engine?.close();
  await canary?.close();
  expect(leftovers({ dir: profiles })).toEqual([]);
});

function content(body: string, patch: Partial<TemplateVersionContent> = {}): TemplateVersionContent {
  return { body, css: '', partials: {}, variables: [], pdfOptions: DEFAULT_PDF_OPTIONS, ...patch };
}

async function renderText(c: TemplateVersionContent, variables: JsonObject = {}): Promise<string> {
  const { pdf } = await engine.renderer.render(c, variables);
  expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  return pdfText(pdf);
}

describe('hostile templates', () => {
  it('reach neither the network nor the file system', async () => {
    const origin = `http://127.0.0.1:${canary.port}`;
    const hosts = [
      origin,
      `http://localhost:${canary.port}`,
      `http://canary.localhost:${canary.port}`, // Chromium resolves *.localhost to loopback itself
      `http://127.1:${canary.port}`,
      `http://2130706433:${canary.port}`, // 127.0.0.1 as one number: an IP literal, no DNS
      `http://[::ffff:127.0.0.1]:${canary.port}`,
      `https://127.0.0.1:${canary.port}`,
    ];
    const perHost = (h: string) => `
      <img src="${h}/img.png">
      <link rel="stylesheet" href="${h}/style.css">
      <style>@import url("${h}/import.css"); .bg { background: url("${h}/bg.png"); } @font-face { font-family: X; src: url("${h}/font.woff"); } .f { font-family: X; }</style>
      <div class="bg f">text</div>
      <iframe src="${h}/frame"></iframe>
      <object data="${h}/object"></object><embed src="${h}/embed">
      <video poster="${h}/poster.png" src="${h}/video.mp4" autoplay></video><audio src="${h}/audio.mp3" autoplay></audio>
      <svg width="10" height="10"><image href="${h}/svg.png" width="10" height="10"/></svg>
      <input type="image" src="${h}/input.png">
      <link rel="prefetch" href="${h}/prefetch"><link rel="preconnect" href="${h}"><link rel="dns-prefetch" href="${h}">
      <link rel="preload" as="image" href="${h}/preload.png"><link rel="modulepreload" href="${h}/module.js">
      <link rel="icon" href="${h}/favicon.ico">
      <script src="${h}/script.js"></script>
      <script>fetch('${h}/fetch'); new WebSocket('${h.replace('http', 'ws')}/ws'); navigator.sendBeacon('${h}/beacon'); document.body.innerHTML = 'SCRIPT-RAN';</script>`;
    const bodies = [
      ...hosts.map(perHost),
      `<meta http-equiv="refresh" content="0;url=${origin}/refresh"><p>refresh</p>`,
      `<base href="${origin}/"><img src="relative.png"><a href="x">x</a>`,
      `<iframe src="data:text/html,<img src='${origin}/in-data-frame.png'><iframe src='file:///etc/passwd'></iframe>"></iframe>`,
      `<iframe srcdoc="<img src='${origin}/srcdoc.png'><link rel=stylesheet href='${origin}/srcdoc.css'>"></iframe>`,
      '<img src="file:///etc/passwd"><iframe src="file:///etc/passwd" width="800" height="400"></iframe>',
      '<object data="file:///etc/passwd" type="text/plain" width="800" height="400"></object><embed src="file:///etc/passwd" type="text/plain">',
      '<link rel="stylesheet" href="file:///etc/passwd"><iframe src="view-source:file:///etc/passwd"></iframe><iframe src="chrome://version"></iframe>',
      '<meta http-equiv="refresh" content="0;url=file:///etc/passwd"><p>file refresh</p>',
      '<iframe src="data:application/octet-stream;base64,SGVsbG8="></iframe>',
    ];
    const texts: string[] = [];
    for (const body of bodies) texts.push(await renderText(content(body)));
    // The header/footer templates are separate documents Chromium renders per page.
    texts.push(
      await renderText(
        content('<p>body</p>', {
          pdfOptions: {
            ...DEFAULT_PDF_OPTIONS,
            margins: { top: '20mm', right: '10mm', bottom: '20mm', left: '10mm' },
            headerTemplate: `<img src="${origin}/header.png"><iframe src="file:///etc/passwd"></iframe>`,
            footerTemplate: `<div style="font-size:8px;background:url(${origin}/footer.png)">page <span class="pageNumber"></span></div>`,
          },
        }),
      ),
    );
    // Values are escaped: markup in a variable is text, not a request.
    texts.push(
      await renderText(content('{{ evil }}', { variables: [{ name: 'evil', required: true, description: '' }] }), {
        evil: `<img src="${origin}/variable.png">`,
      }),
    );
    expect(texts.at(-1)).toContain(`<img src="${origin}/variable.png">`);

    // Give late starters (meta refresh, prefetch, preconnect) their chance.
    await new Promise((r) => setTimeout(r, 1_000));
    expect({ connections: canary.connections, seen: canary.seen }).toEqual({ connections: 0, seen: [] });
    for (const text of texts) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('SCRIPT-RAN');
      expect(text).not.toContain('CANARY-REACHED');
    }
    expect(texts.slice(hosts.length, hosts.length + 1)[0]).toContain('refresh'); // the document was not navigated away
    expect(engine.pool.stats().blockedRequests).toBeGreaterThan(50);
  });

  it.each([
    ['all launch flags', (flag: string) => !flag.startsWith('--blink-settings')],
    [
      'the tripwire proxy alone',
      (flag: string) => !flag.startsWith('--blink-settings') && !flag.startsWith('--host-resolver-rules'),
    ],
    ['the resolver rules alone', (flag: string) => !flag.startsWith('--blink-settings') && !flag.startsWith('--proxy')],
  ])('keeps a page with JavaScript on and no interception off the network: %s', async (_label, keep) => {
    // What request interception cannot see (WebSockets, preconnects, Chromium's own traffic)
    // is stopped by the launch flags; each of the two network walls holds on its own.
    const tripwire = new TripwireProxy();
    await tripwire.start();
    const dir = uniqueRunDir('chromium-flags');
    const flags = chromiumFlags({
      proxyPort: tripwire.port,
      useDevShm: false,
      noSandbox: process.getuid?.() === 0,
    }).filter(keep);
    const browser = await puppeteer.launch({
      executablePath: resolveChromiumExecutable(chromiumPath()),
      headless: true,
      pipe: true,
      userDataDir: dir,
      args: flags,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    try {
      const page = await browser.newPage();
      const urls = [
        `http://127.0.0.1:${canary.port}/js-fetch`,
        `http://localhost:${canary.port}/js-fetch`,
        `http://canary.localhost:${canary.port}/js-fetch`,
        `http://2130706433:${canary.port}/js-fetch`,
      ];
      const navigations = await Promise.all(
        urls.map(async (url) => {
          const other = await browser.newPage();
          try {
            return await other.goto(url, { timeout: 5_000 }).then(
              () => 'reached',
              (e: Error) => e.message,
            );
          } finally {
            await other.close();
          }
        }),
      );
      const fromScript = await page.evaluate(
        async (list: string[], port: number) => {
          const results: string[] = [];
          for (const url of list)
            results.push(
              await fetch(url).then(
                () => 'reached',
                (e: Error) => `blocked: ${e.message}`,
              ),
            );
          results.push(
            await new Promise<string>((resolve) => {
              const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
              ws.onopen = () => resolve('reached');
              ws.onerror = () => resolve('blocked');
            }),
          );
          return results;
        },
        urls,
        canary.port,
      );
      for (const result of [...navigations, ...fromScript]) expect(result).not.toBe('reached');
      await new Promise((r) => setTimeout(r, 300));
      expect(canary.connections).toBe(0);
      // With the proxy in place but no resolver rules, the attempts land on the tripwire.
      if (!flags.some((f) => f.startsWith('--host-resolver-rules'))) expect(tripwire.connections).toBeGreaterThan(0);
    } finally {
      await browser.close();
      await tripwire.stop();
    }
    // puppeteer's close() waits for the browser process only; its helpers follow within moments.
    expect(await eventually(() => leftovers({ dir }).length === 0)).toBe(true);
  });

  it('ends runaway renders within the time-out while other renders keep working', async () => {
    // Liquid: an endless loop is stopped by the Liquid time-out, permanently.
    const loop = content('{% for i in (1..100000) %}{% for j in (1..100000) %}{{ j }}{% endfor %}{% endfor %}');
    // Chromium: a document far too big to print in time, transient (render time-out).
    // (Static HTML: cheap for Liquid, thousands of pages for Chromium.)
    const huge = content('<p>paragraph</p>'.repeat(120_000));
    const started = Date.now();
    const [liquidError, chromiumError, ...others] = await Promise.all([
      engine.renderer.render(loop, {}).catch((e: unknown) => e),
      engine.renderer.render(huge, {}).catch((e: unknown) => e),
      ...Array.from({ length: 3 }, async () => {
        await new Promise((r) => setTimeout(r, 200));
        const t0 = Date.now();
        const text = await renderText(content('<p>still serving</p>'));
        return { text, ms: Date.now() - t0 };
      }),
    ]);
    expect(liquidError).toBeInstanceOf(RenderError);
    expect(liquidError).toMatchObject({ kind: 'permanent' });
    expect(chromiumError).toBeInstanceOf(RenderError);
    expect(chromiumError).toMatchObject({ code: 'RENDER_TIMEOUT', kind: 'transient' });
    expect(Date.now() - started).toBeLessThan(4_000 + 1_500);
    for (const other of others as Array<{ text: string }>) expect(other.text).toContain('still serving');
    // The page that timed out was replaced; the pool serves on.
    expect(await renderText(content('<p>after</p>'))).toContain('after');
  });
});
