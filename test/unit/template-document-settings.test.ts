// The pure parts of assets and document settings: what an upload is (from its bytes), SVG
// sanitising, asset_url and CSS escaping in Liquid, literal asset names for the publish
// check, and validation of titles, metadata and the newer PDF options.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizeContent } from '../../src/admin/template-content.ts';
import { AssetRejected, checkAssetFile, sanitizeSvg } from '../../src/assets/asset-file.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { assetNameFromUrl, assetUrl, literalAssetNamesOf } from '../../src/render/liquid/asset-url.ts';
import { createLiquidEngine, PartialStore } from '../../src/render/liquid/liquid-engine.ts';
import { makePng } from '../fixtures/assets/make-png.ts';

const WOFF2 = readFileSync(join(import.meta.dirname, '../fixtures/assets/docgen-test-sans.woff2'));

async function rejection(name: string, bytes: Buffer, max = 1 << 20): Promise<string> {
  const err = await checkAssetFile(name, bytes, max).then(
    () => new Error('expected a refusal'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AssetRejected);
  return (err as Error).message;
}

describe('asset files', () => {
  it('takes the type from the bytes', async () => {
    const jpeg = Buffer.from([
      0xff,
      0xd8,
      0xff,
      0xe0,
      0x00,
      0x10,
      0x4a,
      0x46,
      0x49,
      0x46,
      0x00,
      0x01,
      ...new Array(64).fill(0),
    ]);
    const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(32)]);
    const webp = Buffer.concat([
      Buffer.from('RIFF'),
      Buffer.from([0x24, 0, 0, 0]),
      Buffer.from('WEBPVP8 '),
      Buffer.alloc(32),
    ]);
    const ttf = Buffer.concat([Buffer.from([0x00, 0x01, 0x00, 0x00, 0x00]), Buffer.alloc(64)]);
    const otf = Buffer.concat([Buffer.from('OTTO'), Buffer.from([0x00]), Buffer.alloc(64)]);
    const cases: Array<[string, Buffer, string, string]> = [
      ['logo.png', makePng(4, 4), 'image/png', 'image'],
      ['photo.jpeg', jpeg, 'image/jpeg', 'image'],
      ['anim.gif', gif, 'image/gif', 'image'],
      ['pic.webp', webp, 'image/webp', 'image'],
      ['brand.woff2', WOFF2, 'font/woff2', 'font'],
      ['body.ttf', ttf, 'font/ttf', 'font'],
      ['head.otf', otf, 'font/otf', 'font'],
    ];
    for (const [name, bytes, contentType, kind] of cases) {
      const checked = await checkAssetFile(name, bytes, 1 << 20);
      expect({ name, contentType: checked.contentType, kind: checked.kind }).toEqual({ name, contentType, kind });
    }
  });

  it('refuses mislabelled, unknown, empty, oversized files and bad names, saying why', async () => {
    expect(await rejection('logo.png', WOFF2)).toBe(
      'logo.png is named as a PNG image but its content is: WOFF2 font (font/woff2); rename it to .woff2',
    );
    expect(await rejection('logo.png', Buffer.from('<html></html>'))).toMatch(
      /^logo\.png is .*; assets must be PNG, JPEG, WebP, GIF, SVG, WOFF2, WOFF, TTF, OTF or PDF$/,
    );
    expect(await rejection('logo.png', Buffer.alloc(0))).toBe('logo.png is empty');
    expect(await rejection('logo.png', makePng(64, 64, { noise: true }), 1000)).toMatch(
      /^logo\.png is \d+ bytes; assets may be at most 1000 bytes/,
    );
    expect(await rejection('../etc/passwd.png', makePng(2, 2))).toMatch(/is not a valid asset name/);
    expect(await rejection('logo', makePng(2, 2))).toMatch(/is not a valid asset name/);
    expect(await rejection('script.js', Buffer.from('alert(1)'))).toMatch(/extension is not one of a supported type/);
  });

  it('sanitises SVG: scripts, event handlers and foreignObject go, local references stay', () => {
    const { svg, warnings } = sanitizeSvg(
      'a.svg',
      `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10" onclick="x()">
<script>alert(1)</script><foreignObject><div>html</div></foreignObject>
<defs><linearGradient id="g"><stop offset="0"/></linearGradient></defs>
<rect width="10" height="10" fill="url(#g)"/><use xlink:href="#g"/><image href="data:image/png;base64,iVBORw0KGgo=" width="1" height="1"/></svg>`,
    );
    expect(svg).not.toMatch(/script|onclick|foreignObject|<div/i);
    expect(svg).toContain('fill="url(#g)"');
    expect(svg).toContain('xlink:href="#g"');
    expect(svg).toContain('data:image/png;base64');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(warnings).toEqual(expect.arrayContaining(['removed <script>', 'removed attribute onclick from <svg>']));
  });

  it('refuses SVG that points outside itself', () => {
    const refused = (body: string) => () =>
      sanitizeSvg(
        'x.svg',
        `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">${body}</svg>`,
      );
    expect(refused('<image href="https://example.invalid/a.png"/>')).toThrow(
      /x\.svg references content outside itself \(image href=/,
    );
    expect(refused('<use xlink:href="other.svg#icon"/>')).toThrow(/references content outside itself/);
    expect(refused('<rect style="fill: url(https://example.invalid/p.svg#x)"/>')).toThrow(
      /references content outside itself/,
    );
    expect(refused('<style>rect { fill: url("file:///etc/passwd") }</style>')).toThrow(
      /references content outside itself/,
    );
    expect(refused('<style>@import "https://example.invalid/a.css";</style>')).toThrow(
      /references content outside itself/,
    );
  });
});

describe('asset_url and Liquid in CSS', () => {
  const store = new PartialStore();
  const seen: string[] = [];
  const html = createLiquidEngine(store, { onAsset: (n) => seen.push(n) });
  const css = createLiquidEngine(store, { output: 'css' });

  it('gives the renderer-served URL of a named asset and reports the name', () => {
    expect(html.parseAndRenderSync(`<img src="{{ 'logo.png' | asset_url }}">`)).toBe(
      `<img src="${assetUrl('logo.png')}">`,
    );
    expect(seen).toContain('logo.png');
    expect(assetNameFromUrl(assetUrl('brand-2.woff2'))).toBe('brand-2.woff2');
    expect(assetNameFromUrl('https://example.invalid/logo.png')).toBeUndefined();
    expect(() => html.parseAndRenderSync(`{{ '../x.png' | asset_url }}`)).toThrow(/is not an asset name/);
  });

  it('escapes values for CSS strings in the CSS', () => {
    const out = css.parseAndRenderSync('.x::after { content: "{{ v }}"; }', {
      v: 'a"; } body { color: red } </style><b>',
    });
    expect(out).not.toMatch(/[<>]/);
    expect(out).toBe(
      '.x::after { content: "a\\22 \\3b  \\7d  body \\7b  color: red \\7d  \\3c \\2f style\\3e \\3c b\\3e "; }',
    );
    expect(css.parseAndRenderSync(`src: url({{ 'f.woff2' | asset_url }})`)).toBe(`src: url(${assetUrl('f.woff2')})`);
  });

  it('finds the literal asset names a version uses, for the publish check', () => {
    const names = literalAssetNamesOf({
      body: `<img src="{{ 'logo.png' | asset_url }}"><img src="{{ name | asset_url }}">`,
      css: `@font-face { src: url({{ "brand.woff2" | asset_url }}) }`,
      partials: { footer: `{{'seal.svg'|asset_url}}` },
      pdfOptions: {
        headerTemplate: `{{ 'logo.png' | asset_url }}`,
        footerTemplate: '',
        firstPageFooterTemplate: `{{ 'first.png' | asset_url }}`,
      },
    });
    expect(names.sort()).toEqual(['brand.woff2', 'first.png', 'logo.png', 'seal.svg']);
  });
});

describe('document settings in submitted content', () => {
  function issues(patch: Record<string, unknown>, pdfOptions: Record<string, unknown> = {}): string[] {
    try {
      normalizeContent({ body: '<p>x</p>', ...patch, pdfOptions } as never);
      return [];
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      return ((err as DomainError).details ?? []).map((d) => `${d.field}: ${d.issue}`);
    }
  }

  it('keeps valid settings and fills defaults', () => {
    const c = normalizeContent({
      body: '<p>x</p>',
      title: 'Invoice {{ n }}',
      metadata: { author: ' Acme ', language: 'de-CH' },
      pdfOptions: {
        scale: 0.8,
        pageRanges: '1-2, 4',
        preferCssPageSize: true,
        protection: { ownerPassword: 'owner-pass', allowPrinting: true },
      },
    });
    expect(c.title).toBe('Invoice {{ n }}');
    expect(c.metadata).toEqual({ author: 'Acme', subject: '', keywords: '', language: 'de-CH' });
    expect(c.pdfOptions).toMatchObject({
      scale: 0.8,
      pageRanges: '1-2, 4',
      preferCssPageSize: true,
      firstPageFooterTemplate: '',
    });
    expect(c.pdfOptions.protection).toEqual({
      userPassword: '',
      ownerPassword: 'owner-pass',
      allowPrinting: true,
      allowCopying: false,
      allowModifying: false,
    });
    expect(normalizeContent({ body: 'x', pdfOptions: { scale: 0 } }).pdfOptions.scale).toBe(1);
  });

  it('refuses bad values naming the field', () => {
    expect(issues({}, { scale: 3 })).toEqual([
      'content.pdfOptions.scale: 3 is out of range; use 0.1 to 2 (1 is 100 %)',
    ]);
    expect(issues({}, { pageRanges: '1-2,x' })[0]).toMatch(
      /^content\.pdfOptions\.pageRanges: "1-2,x" is not a page range list/,
    );
    expect(issues({}, { pageRanges: '0-2' })[0]).toMatch(/pages count from 1/);
    expect(issues({}, { protection: { userPassword: 'reader' } })[0]).toMatch(
      /^content\.pdfOptions\.protection\.ownerPassword: is required/,
    );
    expect(issues({}, { protection: { userPassword: 'same-pass', ownerPassword: 'same-pass' } })[0]).toMatch(
      /must differ from ownerPassword/,
    );
    expect(issues({ metadata: { language: 'not a language' } })[0]).toMatch(
      /^content\.metadata\.language: "not a language" is not a language tag/,
    );
  });
});
