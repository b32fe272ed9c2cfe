// The CJK everyday subsets' rules (src/render/fonts/): which characters each regional face
// keeps, which faces are cut, the fontconfig file that offers them, and how
// DOCGEN_CHROMIUM_FONTCONFIG is read.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chromiumEnvironment } from '../../src/render/chromium/chromium-environment.ts';
import { resolveChromiumFontconfig } from '../../src/render/fonts/chromium-fontconfig.ts';
import { nationalStandard, planEverydaySubsets, regionOf } from '../../src/render/fonts/cjk-everyday-subsets.ts';
import { countCharset } from '../../src/render/fonts/cjk-subsets-build.ts';
import { fontconfigFile } from '../../src/render/fonts/fontconfig-file.ts';

const cp = (char: string) => char.codePointAt(0)!;

describe('national standards', () => {
  it("hold the region's everyday characters and not the others'", () => {
    const jp = nationalStandard('JP');
    expect(jp.size).toBeGreaterThan(6_500);
    for (const char of '日本語東京髙﨑ア') expect(jp.has(cp(char)), char).toBe(true);
    expect(jp.has(cp('𠮷'))).toBe(false);
    expect(jp.has(cp('简'))).toBe(false);
    const sc = nationalStandard('SC');
    expect(sc.has(cp('简'))).toBe(true);
    expect(sc.has(cp('體'))).toBe(false);
    const tc = nationalStandard('TC');
    expect(tc.has(cp('體'))).toBe(true);
    expect(tc.has(cp('简'))).toBe(false);
    expect(nationalStandard('HK').size).toBeGreaterThan(tc.size);
    const kr = nationalStandard('KR');
    for (const char of '한국어서울') expect(kr.has(cp(char)), char).toBe(true);
  });

  it("tell a face's region from its family name", () => {
    expect(regionOf('Noto Sans CJK JP')).toBe('JP');
    expect(regionOf('Noto Serif CJK HK')).toBe('HK');
    expect(regionOf('Noto Sans')).toBeUndefined();
  });
});

describe('planEverydaySubsets', () => {
  const all = [cp('A'), cp('é'), cp('あ'), cp('日'), cp('简'), cp('體'), cp('한'), cp('𠮷'), cp('Ａ')];
  const faces = ['Noto Sans CJK JP', 'Noto Sans CJK SC', 'Noto Sans Mono CJK JP', 'Some Other Font'].map((family) => ({
    family,
    codepoints: all,
  }));
  const plans = planEverydaySubsets(faces, 'NotoSansCJK-Regular');

  it('cuts the proportional regional faces only, one file each', () => {
    expect(plans.map((p) => [p.fileName, p.faceIndex])).toEqual([
      ['NotoSansCJK-Regular.f00.otf', 0],
      ['NotoSansCJK-Regular.f01.otf', 1],
    ]);
  });

  it("keeps Latin, kana and full-width forms everywhere, and Han characters by the region's standard", () => {
    const chars = (i: number) => String.fromCodePoint(...plans[i]!.codepoints);
    expect(chars(0)).toBe('Aéあ日體Ａ'); // 體 is in JIS X 0208, 简 is not
    expect(chars(1)).toBe('Aéあ日简Ａ');
  });
});

describe('fontconfigFile', () => {
  const xml = fontconfigFile({
    subsetDir: '/fonts/subsets',
    cacheDir: '/fonts/cache',
    subsets: [{ fileName: 'a.f00.otf', families: ['Noto Sans CJK JP', 'A & B'], languages: ['ja', 'en'] }],
  });

  it('adds the subsets to the system configuration, with their cache first', () => {
    expect(xml.indexOf('<cachedir>/fonts/cache</cachedir>')).toBeLessThan(
      xml.indexOf('<include ignore_missing="yes">/etc/fonts/fonts.conf</include>'),
    );
    expect(xml).toContain('<dir>/fonts/subsets</dir>');
    expect(xml).not.toContain('rejectfont');
  });

  it("gives each subset its face's families and languages and the newest version", () => {
    expect(xml).toContain('<test name="file"><string>/fonts/subsets/a.f00.otf</string></test>');
    expect(xml).toContain(
      '<edit name="family" mode="assign_replace"><string>Noto Sans CJK JP</string><string>A &amp; B</string></edit>',
    );
    expect(xml).toContain('<langset><string>ja</string><string>en</string></langset>');
    expect(xml).toContain('<edit name="fontversion" mode="assign"><int>2147483647</int></edit>');
  });
});

describe('countCharset', () => {
  it("counts fontconfig's ranges", () => {
    expect(countCharset('20-7e a0 4e00-4e0f\n')).toBe(95 + 1 + 16);
    expect(countCharset('')).toBe(0);
  });
});

describe('DOCGEN_CHROMIUM_FONTCONFIG', () => {
  const dir = mkdtempSync(join(tmpdir(), 'docgen-fontconfig-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("auto: the built subsets when there are some, else the system's fonts", () => {
    const built = join(dir, 'built');
    expect(resolveChromiumFontconfig('auto', built)).toEqual({ ok: true, file: null, source: 'system' });
    mkdirSync(built);
    writeFileSync(join(built, 'fonts.conf'), '<fontconfig/>');
    expect(resolveChromiumFontconfig('auto', built)).toEqual({
      ok: true,
      file: join(built, 'fonts.conf'),
      source: 'subsets',
    });
    expect(resolveChromiumFontconfig('', built)).toMatchObject({ ok: true, source: 'subsets' });
    expect(resolveChromiumFontconfig('system', built)).toEqual({ ok: true, file: null, source: 'system' });
  });

  it('a path must be absolute and exist, and the refusal says how to fix it', () => {
    const file = join(dir, 'mine.conf');
    writeFileSync(file, '<fontconfig/>');
    expect(resolveChromiumFontconfig(file)).toEqual({ ok: true, file, source: 'configured' });
    expect(resolveChromiumFontconfig('fonts.conf')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('Use auto, system or an absolute path'),
    });
    expect(resolveChromiumFontconfig(join(dir, 'missing', 'fonts.conf'))).toMatchObject({
      ok: false,
      problem: expect.stringContaining(`docgen fonts build --out ${join(dir, 'missing')}`),
    });
  });

  it('reaches Chromium as FONTCONFIG_FILE, in an environment of named variables only', () => {
    const service = {
      PATH: '/usr/bin',
      HOME: '/home/docgen',
      LANG: 'C.UTF-8',
      DOCGEN_SECRET_KEY: 'k',
      AWS_SECRET: 's',
    };
    expect(chromiumEnvironment({ fontconfigFile: '/x/fonts.conf', from: service })).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/docgen',
      LANG: 'C.UTF-8',
      FONTCONFIG_FILE: '/x/fonts.conf',
    });
    expect(chromiumEnvironment({ fontconfigFile: null, from: {} })).toEqual({ PATH: '/usr/local/bin:/usr/bin:/bin' });
  });
});
