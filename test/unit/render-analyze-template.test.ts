import { describe, expect, it } from 'vitest';
import { cssLengthToInches, DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import type { TemplateVersionContent } from '../../src/domain/template.ts';
import type { PdfOptions } from '../../src/domain/document-settings.ts';
import { analyzeTemplate, diagnoseTemplate } from '../../src/render/liquid/analyze-template.ts';
import { toPrintParams, validatePdfOptions } from '../../src/render/pdf-options.ts';
import { loadInvoiceFixture } from '../../bench/lib/measure.ts';

function version(patch: Partial<TemplateVersionContent> = {}): TemplateVersionContent {
  return {
    body: '<h1>{{ title }}</h1>',
    css: '',
    partials: {},
    variables: [{ name: 'title', required: true, description: '' }],
    pdfOptions: DEFAULT_PDF_OPTIONS,
    ...patch,
  };
}

describe('analyzeTemplate', () => {
  it('accepts the sample invoice', () => {
    expect(analyzeTemplate(loadInvoiceFixture().content)).toEqual([]);
  });

  it('names an undeclared variable, where it is used and what is declared', () => {
    const problems = analyzeTemplate(version({ body: '<h1>{{ title }}</h1>\n<p>{{ customer.name }}</p>' }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('variable "customer"');
    expect(problems[0]).toContain('template body (line 2, column 7)');
    expect(problems[0]).toContain('declared: title');
  });

  it('does not count locals, loop variables or captures as globals', () => {
    const body = `{% assign x = title | upcase %}{% capture y %}{{ x }}{% endcapture %}
      {% for item in items %}{{ forloop.index }} {{ item.name }}{% endfor %}{{ y }}{% increment n %}`;
    const problems = analyzeTemplate(
      version({
        body,
        variables: [
          { name: 'title', required: true, description: '' },
          { name: 'items', required: false, default: [], description: '' },
        ],
      }),
    );
    expect(problems).toEqual([]);
  });

  it('reports Liquid parse errors with their position', () => {
    const problems = analyzeTemplate(version({ body: '<p>{% if title %}unclosed</p>' }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^template body: .*not closed.*line:1/);
    expect(analyzeTemplate(version({ body: '{{ title | no_such_filter }}' }))[0]).toContain(
      'undefined filter: no_such_filter',
    );
    expect(analyzeTemplate(version({ body: '{% no_such_tag %}' }))[0]).toContain('tag "no_such_tag" not found');
  });

  it('checks partials: syntax, missing ones, and the variables they use', () => {
    const problems = analyzeTemplate(
      version({
        body: '{{ title }}{% render "header" %}{% include "ghost" %}{% render "broken" %}',
        partials: { header: '<b>{{ company }}</b>', broken: '{{ title' },
      }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^partial "broken": /),
        'template body references partial "ghost", which this version does not define',
        expect.stringContaining('variable "company" is used in partial "header"'),
      ]),
    );
    expect(problems).toHaveLength(3);
  });

  it('follows includes through partials that include each other without looping', () => {
    const problems = analyzeTemplate(
      version({
        body: '{% include "a" %}',
        partials: { a: '{{ title }}{% include "b" %}', b: '{{ deep }}{% include "a" %}' },
      }),
    );
    expect(problems).toEqual([expect.stringContaining('variable "deep" is used in partial "b"')]);
  });

  it('checks the header and footer templates like the body', () => {
    const pdfOptions: PdfOptions = {
      ...DEFAULT_PDF_OPTIONS,
      footerTemplate: '{{ invoiceNo }} <span class="pageNumber"></span>',
      headerTemplate: '{% if %}',
    };
    const problems = analyzeTemplate(version({ pdfOptions }));
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^header template: /),
        expect.stringContaining('variable "invoiceNo" is used in footer template'),
      ]),
    );
  });

  it('reports an unsupported page size and bad margins', () => {
    const pdfOptions = {
      ...DEFAULT_PDF_OPTIONS,
      pageSize: 'B5',
      margins: { top: '10 furlongs', right: '0', bottom: '1in', left: '-3mm' },
    };
    const problems = analyzeTemplate(version({ pdfOptions: pdfOptions as unknown as PdfOptions }));
    expect(problems).toEqual([
      'pdfOptions.pageSize: "B5" is not a page size; use one of A3, A4, A5, Letter, Legal, Tabloid',
      expect.stringContaining('pdfOptions.margins.top: "10 furlongs" is not a length'),
      expect.stringContaining('pdfOptions.margins.left: "-3mm" is not a length'),
    ]);
  });

  it('reports invalid declarations', () => {
    const problems = analyzeTemplate(
      version({
        variables: [
          { name: 'title', required: true, description: '' },
          { name: 'title', required: false, description: '' },
          { name: 'bad name', required: false, description: '' },
          { name: 'x', required: true, default: 1, description: '' },
        ],
      }),
    );
    expect(problems).toEqual([
      'variable "title" is declared more than once',
      expect.stringContaining('variable name "bad name" is not valid'),
      expect.stringContaining('variable "x" is required and has a default'),
    ]);
  });
});

describe('PDF options', () => {
  it('parses CSS lengths the way Chromium accepts them', () => {
    expect(cssLengthToInches('0')).toBe(0);
    expect(cssLengthToInches('1in')).toBe(1);
    expect(cssLengthToInches('25.4mm')).toBeCloseTo(1);
    expect(cssLengthToInches('2.54cm')).toBeCloseTo(1);
    expect(cssLengthToInches('96px')).toBeCloseTo(1);
    expect(cssLengthToInches(' 10 mm ')).toBeCloseTo(10 / 25.4);
    for (const bad of ['', '-1mm', '1em', '10%', 'auto', '1e3mm', 5]) expect(cssLengthToInches(bad)).toBeUndefined();
  });

  it('refuses margins that leave no room on the page, landscape included', () => {
    const margins = { top: '0', right: '5in', bottom: '0', left: '5in' };
    expect(validatePdfOptions({ ...DEFAULT_PDF_OPTIONS, margins })).toEqual([
      'pdfOptions.margins: left + right leave no room on the page',
    ]);
    expect(validatePdfOptions({ ...DEFAULT_PDF_OPTIONS, pageSize: 'A3', landscape: true, margins })).toEqual([]);
  });

  it('turns options into Chromium print parameters', () => {
    const options: PdfOptions = {
      pageSize: 'Letter',
      landscape: true,
      margins: { top: '1in', right: '10mm', bottom: '2cm', left: '0' },
      printBackground: false,
      headerTemplate: '',
      footerTemplate: '<span class="pageNumber"></span>',
    };
    const params = toPrintParams(options, { tagged: true });
    expect(params).toMatchObject({
      paperWidth: 8.5, // portrait size: Chromium turns the paper for landscape
      paperHeight: 11,
      landscape: true,
      printBackground: false,
      marginTop: 1,
      marginLeft: 0,
      displayHeaderFooter: true,
      headerTemplate: '<span></span>',
      footerTemplate: '<span class="pageNumber"></span>',
      preferCSSPageSize: false,
      scale: 1,
      generateTaggedPDF: true,
    });
    expect(params.marginRight).toBeCloseTo(10 / 25.4, 6);
    expect(params.marginBottom).toBeCloseTo(2 / 2.54, 6);
    expect(params).not.toHaveProperty('pageRanges');
    expect(toPrintParams(DEFAULT_PDF_OPTIONS, { tagged: false })).toMatchObject({
      displayHeaderFooter: false,
      headerTemplate: '',
      generateTaggedPDF: false,
    });
    // A4 as ISO 210 x 297 mm (what puppeteer's format sent): 595.92 x 841.92 pt once printed.
    expect(toPrintParams({ ...DEFAULT_PDF_OPTIONS, pageSize: 'A4' }, { tagged: true })).toMatchObject({
      paperWidth: 8.2677,
      paperHeight: 11.6929,
    });
    expect(toPrintParams({ ...DEFAULT_PDF_OPTIONS, pageRanges: '1-2' }, { tagged: true })).toMatchObject({
      pageRanges: '1-2',
    });
  });
});

describe('diagnoseTemplate: the same checks, placed', () => {
  it('places Liquid errors at their source, line and column, without repeating the position in the message', () => {
    const { diagnostics } = diagnoseTemplate(
      version({ body: '<h1>{{ title }}</h1>\n\n  {{ title | no_such_filter }}' }),
    );
    expect(diagnostics).toEqual([
      { source: 'body', line: 3, column: 3, message: 'undefined filter: no_such_filter', severity: 'error' },
    ]);
  });

  it('names partials, header and footer templates as sources', () => {
    const pdfOptions: PdfOptions = {
      ...DEFAULT_PDF_OPTIONS,
      headerTemplate: 'a\n{% if %}',
      footerTemplate: '{{ pageNo }}',
    };
    const { diagnostics, suggestedVariables } = diagnoseTemplate(
      version({
        body: '{{ title }}{% render "box" %}',
        partials: { box: '<b>\n {{ company }}</b>', broken: '{{ title' },
        pdfOptions,
      }),
    );
    expect(diagnostics).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ source: 'partials/broken', line: 1, severity: 'error' }),
        expect.objectContaining({ source: 'header_template', line: 2, severity: 'error' }),
        expect.objectContaining({
          source: 'partials/box',
          line: 2,
          column: 5,
          message: expect.stringContaining('variable "company" is used but not declared'),
        }),
        expect.objectContaining({
          source: 'footer_template',
          line: 1,
          column: 4,
          message: expect.stringContaining('"pageNo"'),
        }),
      ]),
    );
    expect(suggestedVariables).toEqual(['company', 'pageNo']);
  });

  it('places declaration and PDF option problems without a line', () => {
    const pdfOptions = { ...DEFAULT_PDF_OPTIONS, pageSize: 'B5' } as unknown as PdfOptions;
    const { diagnostics } = diagnoseTemplate(
      version({ pdfOptions, variables: [{ name: 'title', required: true, default: 'x', description: '' }] }),
    );
    expect(diagnostics).toEqual([
      expect.objectContaining({
        source: 'variables',
        line: 0,
        column: 0,
        severity: 'error',
        message: expect.stringContaining('required and has a default'),
      }),
      expect.objectContaining({
        source: 'pdf_options',
        line: 0,
        severity: 'error',
        message: expect.stringContaining('"B5"'),
      }),
    ]);
  });

  it('warns about declared variables nothing uses and sample data a render would refuse; warnings never block publishing', () => {
    const content = version({
      variables: [
        { name: 'title', required: true, description: '' },
        { name: 'unused', required: false, description: '' },
      ],
      sampleData: { titel: 'typo' },
    });
    const { diagnostics, suggestedVariables } = diagnoseTemplate(content);
    expect(diagnostics).toEqual([
      {
        source: 'variables',
        line: 0,
        column: 0,
        message: 'variable "unused" is declared but not used',
        severity: 'warning',
      },
      expect.objectContaining({
        source: 'sample_data',
        severity: 'warning',
        message: expect.stringContaining('"titel"'),
      }),
    ]);
    expect(suggestedVariables).toEqual([]);
    expect(analyzeTemplate(content)).toEqual([]);
  });

  it('does not call a variable unused when a parse error hides what the template uses', () => {
    const { diagnostics } = diagnoseTemplate(version({ body: '{{ title' }));
    expect(diagnostics.filter((d) => d.severity === 'warning')).toEqual([]);
  });

  it('finds nothing in the sample invoice', () => {
    expect(diagnoseTemplate(loadInvoiceFixture().content)).toEqual({ diagnostics: [], suggestedVariables: [] });
  });
});
