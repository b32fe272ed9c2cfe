// One author's render must not take others down with it: header/footer templates Chromium
// cannot print, documents that never finish loading and documents too large to print fail
// permanently and fast, with a message naming the problem, while renders of other workspaces
// beside them complete. Every hostile URL points at a closed loopback port.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import type { TemplateVersionContent } from '../../src/domain/template.ts';
import { RenderError } from '../../src/render/render-error.ts';
import { createRenderEngine } from '../../src/render/render-engine.ts';
import type { RenderEngine } from '../../src/render/render-engine.ts';
import { chromiumPath, uniqueRunDir } from '../harness/dependencies.ts';
import { leftovers, pdfText } from './render-support.ts';

const HOST = 'http://127.0.0.1:9';
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const FONT = `data:font/ttf;base64,${readFileSync('/usr/share/fonts/truetype/noto/NotoSansThaana-Bold.ttf').toString('base64')}`;
const margins = { top: '20mm', right: '10mm', bottom: '20mm', left: '10mm' };

let engine: RenderEngine;
let profiles: string;

beforeAll(async () => {
  profiles = uniqueRunDir('chromium-isolation');
  engine = await createRenderEngine({
    chromiumPath: chromiumPath(),
    noSandbox: true,
    concurrency: 4,
    timeoutMs: 20_000,
    liquidTimeoutMs: 2_000,
    liquidMemoryMb: 64,
    browserRecycleAfterRenders: 1000,
    browserMaxRssMb: 4096,
    maxAttempts: 3,
    loadTimeoutMs: 1_500,
    maxHtmlBytes: 512 * 1024,
    userDataDir: profiles,
  });
});

afterAll(async () => {
  await engine?.close();
  expect(leftovers({ dir: profiles })).toEqual([]);
});

function content(body: string, header = '', footer = ''): TemplateVersionContent {
  return {
    body,
    css: '',
    partials: {},
    variables: [],
    pdfOptions: { ...DEFAULT_PDF_OPTIONS, margins, headerTemplate: header, footerTemplate: footer },
  };
}

const good = content(
  '<h1>Invoice</h1><p>good render</p>',
  '<span style="font-size:8px">head</span>',
  '<span style="font-size:8px">page <span class="pageNumber"></span></span>',
);

async function outcome(c: TemplateVersionContent): Promise<{ ms: number; error?: RenderError; text?: string }> {
  const started = Date.now();
  try {
    const { pdf } = await engine.renderer.render(c, {});
    return { ms: Date.now() - started, text: await pdfText(pdf) };
  } catch (err) {
    return { ms: Date.now() - started, error: err as RenderError };
  }
}

describe('render isolation', () => {
  it.each([
    [
      'a stylesheet link',
      `<link rel="stylesheet" href="${HOST}/h.css"><span>h</span>`,
      'header',
      'an external stylesheet',
    ],
    ['an @import', `<style>@import url("${HOST}/h.css");</style><span>h</span>`, 'header', 'an external stylesheet'],
    [
      'an @font-face src',
      `<style>@font-face{font-family:X;src:url("${HOST}/f.woff")} span{font-family:X}</style><span>h</span>`,
      'footer',
      'an external font',
    ],
    [
      'a style preload',
      `<link rel="preload" as="style" href="${HOST}/p.css"><span>h</span>`,
      'footer',
      'an external stylesheet',
    ],
    [
      '<base href> and a relative stylesheet',
      `<base href="${HOST}/"><link rel="stylesheet" href="x.css"><span>h</span>`,
      'header',
      'an external stylesheet',
    ],
  ])(
    '%s in the header/footer fails permanently within 2 s; 8 good renders beside it complete',
    async (_, template, slot, what) => {
      const hostile = slot === 'header' ? content('<p>body</p>', template) : content('<p>body</p>', '', template);
      const [bad, ...goods] = await Promise.all([outcome(hostile), ...Array.from({ length: 8 }, () => outcome(good))]);
      expect(bad.error).toBeInstanceOf(RenderError);
      expect({ code: bad.error!.code, message: bad.error!.message }).toMatchObject({ code: 'INVALID_TEMPLATE' });
      expect(bad.error!.permanent).toBe(true);
      expect(bad.error!.message).toContain(`The ${slot} template loads ${what}: not allowed`);
      expect(bad.ms).toBeLessThan(2_000);
      expect(goods.map((g) => g.error?.message)).toEqual(goods.map(() => undefined));
      for (const g of goods) expect(g.text).toContain('good render');
      expect(engine.pool.stats().crashes).toBe(0);
    },
  );

  it('prints inline <style> and data: URLs (image, font, stylesheet, @import) in header and footer', async () => {
    const header =
      `<style>@import url("data:text/css,.i{color:red}"); @font-face{font-family:Embedded;src:url(${FONT})} .h{font-family:Embedded;font-size:9px}</style>` +
      `<link rel="stylesheet" href="data:text/css,.h{font-weight:bold}"><img src="${PNG}" width="8" height="8"><span class="h i">HEADER-OK</span>`;
    const footer = `<div style="font-size:8px;background:url(${PNG})">FOOTER-OK <span class="pageNumber"></span></div>`;
    const result = await outcome(content('<p>body</p>', header, footer));
    expect(result.error).toBeUndefined();
    expect(result.text).toContain('HEADER-OK');
    expect(result.text).toContain('FOOTER-OK');
  });

  it('a document waiting on an external SVG <use> renders or fails permanently at the load bound', async () => {
    const started = Date.now();
    const [bad, ...goods] = await Promise.all([
      outcome(content(`<svg width="10" height="10"><use href="${HOST}/s.svg#a"/></svg><p>body</p>`)),
      ...Array.from({ length: 8 }, () => outcome(good)),
    ]);
    // Refused subresource loads now end at once (asset interception), so it usually renders;
    // when the load does hang, the bound ends it permanently.
    if (bad.error) {
      expect({ code: bad.error.code, permanent: bad.error.permanent }).toEqual({
        code: 'PAGE_LOAD_TIMEOUT',
        permanent: true,
      });
      expect(bad.error.message).toMatch(/did not finish loading within 1500 ms/);
    }
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(goods.map((g) => g.error?.message)).toEqual(goods.map(() => undefined));
  });

  it('a document too large to print fails permanently at once, naming its size', async () => {
    const rows = Array.from({ length: 60_000 }, () => '<div>row</div>').join('');
    const result = await outcome(content(rows));
    expect(result.error?.code).toBe('DOCUMENT_TOO_LARGE');
    expect(result.error?.permanent).toBe(true);
    expect(result.error?.message).toMatch(/The rendered document is 0\.8 MiB of HTML, more than the 0\.5 MiB/);
    expect(result.ms).toBeLessThan(2_000);
  });
});
