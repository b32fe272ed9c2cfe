// The cheap screen in front of the header/footer load check: it may only let through markup that
// cannot load a resource; everything that could (even spelled with escapes) goes to the check.
import { describe, expect, it } from 'vitest';
import { mayLoadResources } from '../../src/render/chromium/header-footer-check.ts';

describe('header/footer resource screen', () => {
  it.each([
    [
      'page numbers',
      '<div style="font-size:7pt;text-align:center">INV-1 &amp; co · page <span class="pageNumber"></span> of <span class="totalPages"></span></div>',
    ],
    [
      'the version CSS with data: URLs and @page',
      '<style>@page { size: A4 } .a { background: url("data:,") } @font-face { font-family: X; src: url(data:font/woff2;base64,AAAA) }</style><p>x</p>',
    ],
    ['Liquid escapes', '<p>&lt;b&gt; &quot;q&quot; &#39;s&#39;</p>'],
  ])('skips the load for %s', (_, html) => {
    expect(mayLoadResources(html)).toBe(false);
  });

  it.each([
    ['a stylesheet link', '<LINK rel=stylesheet href="http://127.0.0.1:1/x.css">'],
    ['a preload', '<link rel=preload as=font href=/f.woff2>'],
    ['@import', '<style>@import "x.css";</style>'],
    ['@font-face from a URL', '<style>@font-face { font-family: X; src: url(http://127.0.0.1:1/f.woff2) }</style>'],
    ['a quoted non-data url()', '<div style="background:url( \'x.png\')"></div>'],
    ['a CSS escape', '<style>@\\69mport "x.css";</style>'],
    ['a character reference', '<div style="background:u&#114;l(x.png)"></div>'],
    ['a named reference', '<div style="background:url&lpar;x.png)"></div>'],
    ['<base>', '<base href="http://127.0.0.1:1/"><img src=a.png>'],
    ['an iframe srcdoc', '<iframe srcdoc="&lt;link rel=stylesheet href=x&gt;"></iframe>'],
    ['SVG', '<svg><use href="http://127.0.0.1:1/s.svg#a"/></svg>'],
    ['image-set', '<div style="background-image:image-set(\'x.png\' 1x)"></div>'],
    ['a meta element', '<meta http-equiv="Link" content="<x.css>; rel=stylesheet">'],
  ])('sends %s to the load check', (_, html) => {
    expect(mayLoadResources(html)).toBe(true);
  });
});
