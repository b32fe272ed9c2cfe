// Publishing refuses references to resources that cannot load (src/render/liquid/resource-references.ts):
// an SVG <use href>/xlink:href to another file, an <img src> on the web, a CSS url() or @import,
// each at its line, while data: URLs, asset_url, fragments (#id) and links stay fine. And a load
// time-out names the reference that held it up.
import { describe, expect, it } from 'vitest';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import type { TemplateVersionContent } from '../../src/domain/template.ts';
import { analyzeTemplate, diagnoseTemplate } from '../../src/render/liquid/analyze-template.ts';
import { loadTimeoutMessage, unloadableReferences } from '../../src/render/liquid/resource-references.ts';

function content(body: string, more: Partial<TemplateVersionContent> = {}): TemplateVersionContent {
  return { body, css: '', partials: {}, variables: [], pdfOptions: { ...DEFAULT_PDF_OPTIONS }, ...more };
}

describe('references that cannot load', () => {
  it('are found with their place and kind', () => {
    const refs = unloadableReferences(
      [
        '<svg><use href="https://icons.example/set.svg#cart"/></svg>',
        '<svg><use xlink:href="sprite.svg#a"/></svg>',
        '<p>ok</p><img alt="x" src="logo.png">',
        '<img srcset="data:image/png;base64,AA 1x, https://x/2x.png 2x">',
        '<div style="background: url(https://x/bg.jpg)"></div>',
        '<style>@import "https://fonts.example/css";</style>',
        '<link rel="stylesheet" href="/print.css"><object data="x.pdf"></object><video poster="p.jpg"></video>',
      ].join('\n'),
    );
    expect(refs.map((r) => [r.line, r.where, r.url])).toEqual([
      [1, '<use href>', 'https://icons.example/set.svg#cart'],
      [2, '<use xlink:href>', 'sprite.svg#a'],
      [3, '<img src>', 'logo.png'],
      [4, '<img srcset>', 'https://x/2x.png'],
      [5, 'url()', 'https://x/bg.jpg'],
      [6, '@import', 'https://fonts.example/css'],
      [7, '<link href>', '/print.css'],
      [7, '<object data>', 'x.pdf'],
      [7, '<video poster>', 'p.jpg'],
    ]);
  });

  it('leave data: URLs, assets, fragments, links and comments alone', () => {
    expect(
      unloadableReferences(
        [
          `<img src="{{ 'logo.png' | asset_url }}"><img src="data:image/png;base64,AAAA">`,
          '<svg><defs><linearGradient id="g"/></defs><rect fill="url(#g)"/><use href="#g"/><use xlink:href="#g"/></svg>',
          '<a href="https://docgen.example/terms">terms</a><a xlink:href="https://x">x</a>',
          '<style>.x { background: url("data:image/svg+xml,%3Csvg%3E"); } .y { background: url({{ bg }}) }</style>',
          '<!-- <img src="https://old.example/x.png"> -->{% comment %}<img src="y.png">{% endcomment %}',
          '<img src="{{ product.image }}">',
        ].join('\n'),
      ),
    ).toEqual([]);
  });

  it('make publishing refuse the version, at their line, with what to do', () => {
    const problems = analyzeTemplate(
      content('<h1>Hi</h1>\n\n  <svg><use href="https://icons.example/set.svg#cart"/></svg>'),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(
      'template body (line 3): <use href> refers to "https://icons.example/set.svg#cart", which cannot load',
    );
    expect(problems[0]).toContain(`{{ 'set.svg' | asset_url }}`);
    expect(problems[0]).toContain('point <use> at an element of the document (href="#id")');
    const diagnostics = diagnoseTemplate(
      content('<p>x</p>', {
        css: 'body {\n  background: url(paper.png);\n}',
        partials: { logo: '\n<img src="https://cdn.example/logo.svg">' },
        pdfOptions: { ...DEFAULT_PDF_OPTIONS, footerTemplate: '<svg><image href="https://x/f.png"/></svg>' },
      }),
    ).diagnostics.filter((d) => d.severity === 'error');
    expect(diagnostics.map((d) => [d.source, d.line])).toEqual([
      ['footer_template', 1],
      ['css', 2],
      ['partials/logo', 2],
    ]);
  });
});

describe('the scan', () => {
  it('takes time in proportion to the text, whatever the text (no quadratic corner)', () => {
    // Open ends that never close: a regular expression retrying from every start would take
    // hours on each of these (1 MiB, the largest version).
    const started = performance.now();
    for (const unit of ['<a "', '<a b="', 'url(', 'url("', '<!--', '{% comment %}', '@import "', '/*'])
      unloadableReferences(unit.repeat(Math.floor(1_000_000 / unit.length)));
    expect(performance.now() - started).toBeLessThan(30_000);
  });
});

describe('a load that times out', () => {
  it('names the reference that held it up', () => {
    expect(
      loadTimeoutMessage('The footer template', 5000, '<style>x</style>\n<svg><use href="https://x/s.svg#a"/></svg>'),
    ).toBe(
      'The footer template did not finish loading within 5000 ms because <use href> at line 2 of the rendered HTML refers to "https://x/s.svg#a", which cannot load: docgen renders without a network, so only data: URLs and workspace assets load (upload the file as an asset and use {{ \'s.svg\' | asset_url }}, or embed it as a data: URL; or point <use> at an element of the document (href="#id"))',
    );
    expect(loadTimeoutMessage('The document', 5000, '<p>nothing to see</p>')).toMatch(
      /^The document did not finish loading within 5000 ms: something in it waits for a resource that never arrives/,
    );
  });
});
