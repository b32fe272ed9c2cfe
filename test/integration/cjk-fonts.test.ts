// The CJK everyday subsets (src/render/fonts/) against the whole fonts, with real Chromium:
// `docgen fonts build` makes them, fontconfig offers them first, and a page of CJK text in every
// region, style and writing mode prints the same pixels and the same text with them as without.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFonts } from '../../src/cli/fonts-command.ts';
import { type TemplateVersionContent } from '../../src/domain/template.ts';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import { buildCjkSubsets, installedCjkCollections } from '../../src/render/fonts/cjk-subsets-build.ts';
import { createRenderEngine, type RenderEngine } from '../../src/render/render-engine.ts';
import { loadInvoiceFixture } from '../../bench/lib/measure.ts';
import { uniqueRunDir } from '../harness/dependencies.ts';
import { renderEngineTestConfig } from '../harness/test-config.ts';
import { leftovers, pdfText } from './render-support.ts';

const PAGE = `
<p lang="ja">日本語の文章を印刷します。東京都港区の請求書、合計金額は税込みです。直骨令角 カタカナ ＡＢＣ１２３</p>
<p lang="ko">한국어 문서를 인쇄합니다. 서울특별시 청구서 합계 금액은 세금 포함입니다. 直骨令角</p>
<p lang="zh-CN">简体中文文档打印测试。北京市发票，总金额含税。直骨令角写边</p>
<p lang="zh-TW">繁體中文文件列印測試。臺北市發票，總金額含稅。直骨令角寫邊</p>
<p lang="zh-HK">香港特別行政區發票，總金額含稅。</p>
<p lang="zh">No region: 简体中文 直骨令角 繁體 寫邊</p>
<p style='font-family:"Noto Sans CJK JP"' lang="zh-CN">JP face, Chinese text (its locl forms): 直骨令角写边</p>
<p>No language: 直骨令角 東京 서울 北京</p>
<p class="serif" lang="ja">明朝体：日本語の文章を印刷します。</p>
<p class="serif" lang="zh-CN">宋体：简体中文文档打印测试。</p>
<p class="bold" lang="ja">太字：日本語の文章を印刷します。</p>
<p class="bold serif" lang="ko">굵은 명조: 한국어 문서</p>
<p class="mono" lang="ja">等幅 code: 日本語 abc 123</p>
<p style='font-family:"Noto Sans CJK SC"' lang="zh-CN">Explicit SC: 简体中文文档 abc</p>
<p style='font-family:"Noto Sans CJK JP"; font-weight: bold' lang="ja">Explicit JP bold: 日本語の文章 abc</p>
<p style='font-family:"Noto Serif CJK TC"' lang="zh-TW">Explicit TC serif: 繁體中文 abc</p>
<p lang="ja" style="writing-mode: vertical-rl; height: 50mm">縦書きの日本語、「括弧」と句読点。ー〜</p>
<p lang="ja">Rare, from the whole font: 𠮷野家 𩸽 鷗外</p>`;

const CSS = `body { font-family: "Noto Sans", sans-serif; font-size: 11pt; }
.serif { font-family: serif; } .mono { font-family: monospace; } .bold { font-weight: bold; }`;

const collections = installedCjkCollections();
let workDir: string;
let fontsDir: string;
let profiles: string;
let buildResult: Awaited<ReturnType<typeof buildCjkSubsets>>;
let wholeFonts: RenderEngine;
let subsets: RenderEngine;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'docgen-cjk-'));
  fontsDir = join(workDir, 'fonts');
  profiles = uniqueRunDir('chromium-cjk-fonts');
  buildResult = await buildCjkSubsets({ sources: collections, outDir: fontsDir });
  [wholeFonts, subsets] = await Promise.all([
    createRenderEngine(renderEngineTestConfig({ userDataDir: profiles, concurrency: 1 })),
    createRenderEngine(
      renderEngineTestConfig({ userDataDir: profiles, concurrency: 1, fontconfigFile: buildResult.fontconfigFile }),
    ),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([wholeFonts?.close(), subsets?.close()]);
  expect(leftovers({ dir: profiles })).toEqual([]);
  rmSync(workDir, { recursive: true, force: true });
});

function fcMatch(pattern: string): string {
  return execFileSync('fc-match', ['--format', '%{file}', pattern], {
    encoding: 'utf8',
    env: { ...process.env, FONTCONFIG_FILE: buildResult.fontconfigFile },
  });
}

/** The page rasterised in grey at 110 dpi (pdftoppm), to compare pixel for pixel. */
function raster(pdf: Buffer, name: string): Buffer {
  const file = join(workDir, `${name}.pdf`);
  writeFileSync(file, pdf);
  execFileSync('pdftoppm', ['-r', '110', '-gray', '-singlefile', file, join(workDir, name)]);
  return readFileSync(join(workDir, `${name}.pgm`));
}

describe('CJK everyday subsets', () => {
  it('are built for the proportional regional faces, and fontconfig offers them first', () => {
    expect(collections.length).toBeGreaterThan(0);
    // Sans: JP, KR, SC, TC, HK per weight (the monospace faces stay whole); Serif likewise.
    expect(buildResult.subsets).toBe(collections.length * 5);
    expect(fcMatch('sans-serif:lang=ja')).toContain(join(fontsDir, 'subsets'));
    expect(fcMatch('Noto Serif CJK TC:bold')).toMatch(/NotoSerifCJK-Bold\.f03\.otf$/);
    expect(fcMatch('sans-serif:lang=zh-cn:charset=7b80')).toMatch(/NotoSansCJK-Regular\.f02\.otf$/);
    // A character no subset has (U+20BB7) still finds the whole font.
    expect(fcMatch('sans-serif:lang=ja:charset=20bb7')).toMatch(/NotoSansCJK-Regular\.ttc$/);
  });

  it("reach Chromium: the subsets engine's browser has FONTCONFIG_FILE, the other none", () => {
    const environment = (engine: RenderEngine) => {
      const pid = engine.stats().pool.browserPid;
      expect(pid).not.toBeNull();
      return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    };
    expect(environment(subsets)).toContain(`FONTCONFIG_FILE=${buildResult.fontconfigFile}`);
    expect(environment(wholeFonts).some((entry) => entry.startsWith('FONTCONFIG_FILE='))).toBe(false);
  });

  it('print a page of every region, style and writing mode with the same pixels and text as the whole fonts', async () => {
    const content: TemplateVersionContent = {
      body: PAGE,
      css: CSS,
      partials: {},
      variables: [],
      pdfOptions: DEFAULT_PDF_OPTIONS,
    };
    const [whole, cut] = await Promise.all([
      wholeFonts.renderer.render(content, {}),
      subsets.renderer.render(content, {}),
    ]);
    expect(await pdfText(cut.pdf)).toBe(await pdfText(whole.pdf));
    expect(await pdfText(cut.pdf)).toContain('굵은 명조');
    expect(raster(cut.pdf, 'subsets').equals(raster(whole.pdf, 'whole'))).toBe(true);
  });

  it('print the sample invoice (its Japanese line from the JP subset) with the same pixels and the text it always had', async () => {
    const { content, variables } = loadInvoiceFixture();
    const [whole, cut] = await Promise.all([
      wholeFonts.renderer.render(content, variables),
      subsets.renderer.render(content, variables),
    ]);
    const expected = readFileSync(new URL('../fixtures/sample-invoice/expected-text.txt', import.meta.url), 'utf8');
    expect(await pdfText(cut.pdf)).toBe(expected);
    expect(raster(cut.pdf, 'invoice-subsets').equals(raster(whole.pdf, 'invoice-whole'))).toBe(true);
  });

  it('`docgen fonts build --if-stale` leaves an unchanged build alone', async () => {
    const out: string[] = [];
    const sink = { write: (chunk: string) => out.push(chunk) } as unknown as NodeJS.WritableStream;
    expect(await runFonts(['build', '--out', fontsDir, '--if-stale'], sink, sink)).toBe(0);
    expect(out.join('')).toContain('is up to date');
    expect(await runFonts(['build', '--bogus'], sink, sink)).toBe(2);
  });
});
