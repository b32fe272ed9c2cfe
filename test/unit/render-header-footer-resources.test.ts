// Publishing refuses header/footer templates that load external stylesheets or fonts
// (Chromium's header/footer frames crash on them); inline <style> and data: URLs stay allowed.
import { describe, expect, it } from 'vitest';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import type { TemplateVersionContent } from '../../src/domain/template.ts';
import { analyzeTemplate } from '../../src/render/liquid/analyze-template.ts';

function withHeader(headerTemplate: string, footerTemplate = ''): TemplateVersionContent {
  return {
    body: '<p>x</p>',
    css: '',
    partials: {},
    variables: [],
    pdfOptions: { ...DEFAULT_PDF_OPTIONS, headerTemplate, footerTemplate },
  };
}

describe('header/footer resources at publish', () => {
  it.each([
    [
      '<link rel="stylesheet" href="https://cdn.example/x.css"><span>h</span>',
      'header template loads an external stylesheet: not allowed',
    ],
    ["<link href='x.css' rel=stylesheet>", 'header template loads an external stylesheet: not allowed'],
    ['<link rel="preload" as="style" href="/x.css">', 'header template loads an external stylesheet: not allowed'],
    [
      '<link rel="preload" as="font" href="/f.woff2" crossorigin>',
      'header template loads an external font: not allowed',
    ],
    [
      '<style>@import url("https://x/y.css");</style>',
      'header template loads an external stylesheet (@import): not allowed',
    ],
    ["<style>@import 'y.css';</style>", 'header template loads an external stylesheet (@import): not allowed'],
    [
      '<style>@font-face { font-family: X; src: url(https://x/f.woff) }</style>',
      'header template loads an external font (@font-face src): not allowed',
    ],
    ['<base href="https://x/"><img src="a.png">', 'header template sets a base URL (<base href>): not allowed'],
  ])('refuses %s', (header, message) => {
    expect(analyzeTemplate(withHeader(header)).join('\n')).toContain(message);
  });

  it('names the footer when the footer is the one', () => {
    expect(analyzeTemplate(withHeader('', '<link rel="stylesheet" href="x.css">')).join('\n')).toContain(
      'footer template loads an external stylesheet',
    );
  });

  it('accepts inline <style>, data: URLs, Liquid-made URLs and data: images', () => {
    const ok = [
      '<style>span { color: red } @import url("data:text/css,b{}"); @font-face { font-family: X; src: url(data:font/woff2;base64,AAAA) }</style><span>h</span>',
      '<link rel="stylesheet" href="data:text/css,span{color:red}"><img src="data:image/png;base64,AAAA">',
      `<img src="{{ 'logo.png' | asset_url }}"><span class="pageNumber"></span>`,
    ];
    for (const header of ok) expect(analyzeTemplate(withHeader(header))).toEqual([]);
  });

  it('refuses an image from the web, at its line, like any reference that cannot load', () => {
    expect(analyzeTemplate(withHeader('<span>h</span>\n<img src="https://x/logo.png">')).join('\n')).toContain(
      'header template (line 2): <img src> refers to "https://x/logo.png", which cannot load',
    );
  });
});
