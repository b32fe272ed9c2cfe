// Page furniture, metadata and print options with real Chromium: "Page X of Y" in the body
// (CSS @page margin boxes) and in Liquid header/footer templates that use the version's CSS,
// a different first page both ways, the PDF Title from the Liquid title (pdfinfo), author,
// subject, keywords and language, scale, page ranges, CSS page size, encryption (qpdf), and
// the sample invoice's CJK line in a Noto CJK font.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFRef } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInvoiceFixture } from '../../bench/lib/measure.ts';
import { type TemplateVersionContent } from '../../src/domain/template.ts';
import { DEFAULT_PDF_OPTIONS, type PdfOptions } from '../../src/domain/document-settings.ts';
import { RenderError } from '../../src/render/render-error.ts';
import { createRenderEngine, type RenderEngine } from '../../src/render/render-engine.ts';
import { chromiumPath, uniqueRunDir } from '../harness/dependencies.ts';
import { leftovers, pdfInfo, pdfText } from './render-support.ts';

const run = promisify(execFile);
let engine: RenderEngine;
let profiles: string;
let dir: string;

beforeAll(async () => {
  profiles = uniqueRunDir('chromium-settings');
  dir = uniqueRunDir('settings-pdfs');
  await run('mkdir', ['-p', dir]);
  engine = await createRenderEngine({
    chromiumPath: chromiumPath(),
    noSandbox: true,
    concurrency: 2,
    timeoutMs: 20_000,
    liquidTimeoutMs: 2_000,
    liquidMemoryMb: 64,
    browserRecycleAfterRenders: 1000,
    browserMaxRssMb: 4096,
    maxAttempts: 3,
    userDataDir: profiles,
  });
});

afterAll(async () => {
  await engine?.close();
  expect(leftovers({ dir: profiles })).toEqual([]);
});

function content(
  body: string,
  patch: Partial<TemplateVersionContent> = {},
  pdf: Partial<PdfOptions> = {},
): TemplateVersionContent {
  return {
    body,
    css: '',
    partials: {},
    variables: [{ name: 'number', required: false, description: '', default: 'INV-7' }],
    ...patch,
    pdfOptions: {
      ...DEFAULT_PDF_OPTIONS,
      margins: { top: '20mm', right: '15mm', bottom: '20mm', left: '15mm' },
      ...pdf,
    },
  };
}

async function saved(pdf: Buffer): Promise<string> {
  const path = join(dir, `${Date.now()}-${Math.random().toString(36).slice(2)}.pdf`);
  await writeFile(path, pdf);
  return path;
}

async function pageText(pdf: Buffer, page: number): Promise<string> {
  return (
    await run('pdftotext', ['-enc', 'UTF-8', '-f', String(page), '-l', String(page), await saved(pdf), '-'], {
      encoding: 'utf8',
    })
  ).stdout;
}

async function info(pdf: Buffer, ...args: string[]): Promise<string> {
  return (await run('pdfinfo', [...args, await saved(pdf)], { encoding: 'utf8' })).stdout;
}

/** Pages the PDF's structure tree (tagging) points at with /Pg, and the pages it has. */
async function structurePages(pdf: Buffer): Promise<{ pages: string[]; referenced: string[] }> {
  const doc = await PDFDocument.load(pdf);
  const referenced = new Set<string>();
  const seen = new Set<string>();
  const walk = (o: unknown): void => {
    if (o instanceof PDFRef) {
      if (!seen.has(o.toString())) {
        seen.add(o.toString());
        walk(doc.context.lookup(o));
      }
    } else if (o instanceof PDFDict) {
      for (const [key, value] of o.entries()) {
        if (key.toString() === '/Pg' && value instanceof PDFRef) referenced.add(value.toString());
        else if (!['/P', '/Pg', '/ParentTree'].includes(key.toString())) walk(value);
      }
    } else if (o instanceof PDFArray) {
      for (const value of o.asArray()) walk(value);
    }
  };
  walk(doc.catalog.get(PDFName.of('StructTreeRoot')));
  return { pages: doc.getPages().map((p) => p.ref.toString()), referenced: [...referenced] };
}

const TWO_PAGES =
  '<h1>Report {{ number }}</h1><p>First page body</p><p style="break-before: page">Second page body</p>';

describe('page furniture', () => {
  it('numbers pages "Page X of Y" from the body CSS (@page margin boxes), with a different first page', async () => {
    const css = `@page { @bottom-center { content: "Page " counter(page) " of " counter(pages); font-size: 9pt; } }
@page :first { @bottom-center { content: "{{ number }} - Page " counter(page) " of " counter(pages) " - first page"; font-size: 9pt; } }`;
    const { pdf } = await engine.renderer.render(content(TWO_PAGES, { css }), {});
    expect((await pdfInfo(pdf)).pages).toBe(2);
    const first = await pageText(pdf, 1);
    const second = await pageText(pdf, 2);
    expect(first).toContain('INV-7 - Page 1 of 2 - first page');
    expect(second).toContain('Page 2 of 2');
    expect(second).not.toContain('first page');
  });

  it('renders Liquid header/footer templates with the version CSS, page numbers and a first-page footer of their own', async () => {
    const css =
      '.furniture { font-size: 9pt; width: 100%; text-align: center; color: #123456; } .strong { font-weight: bold; }';
    const c = content(
      TWO_PAGES,
      { css },
      {
        headerTemplate: '<div class="furniture">Header {{ number }}</div>',
        footerTemplate:
          '<div class="furniture">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>',
        firstPageFooterTemplate:
          '<div class="furniture"><span class="strong">Thank you</span> - Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>',
      },
    );
    const { pdf } = await engine.renderer.render(c, {});
    expect((await pdfInfo(pdf)).pages).toBe(2);
    const first = await pageText(pdf, 1);
    const second = await pageText(pdf, 2);
    expect(first).toContain('First page body');
    expect(first).toContain('Header INV-7');
    expect(first).toContain('Thank you - Page 1 of 2');
    expect(second).toContain('Second page body');
    expect(second).toContain('Header INV-7');
    expect(second).toContain('Page 2 of 2');
    expect(second).not.toContain('Thank you');
    // The version's CSS reached the footer: its bold class picked a bold font there.
    const fonts = (await run('pdffonts', [await saved(pdf)], { encoding: 'utf8' })).stdout;
    expect(fonts).toMatch(/Bold/);
    expect(await info(pdf)).toMatch(/^Tagged:\s+yes/m);
    // The first page's drawing comes from a second print; the tagging still points at pages
    // of this document.
    const structure = await structurePages(pdf);
    expect(structure.referenced.length).toBeGreaterThan(0);
    for (const ref of structure.referenced) expect(structure.pages).toContain(ref);
  });

  it('gives header/footer templates the version CSS without what would load from elsewhere', async () => {
    const css = `@import url("http://127.0.0.1:9/remote.css");
@font-face { font-family: "Remote"; src: url(http://127.0.0.1:9/remote.woff2); }
.furniture { font-size: 9pt; font-family: "Remote", sans-serif; background: url('http://127.0.0.1:9/bg.png'); }`;
    const c = content(
      '<p>Body</p>',
      { css },
      { footerTemplate: '<div class="furniture">Footer <span class="pageNumber"></span></div>' },
    );
    const { pdf } = await engine.renderer.render(c, {});
    expect(await pdfText(pdf)).toMatch(/Footer 1/);
  });
});

describe('metadata', () => {
  it('takes the PDF Title from the Liquid title, else the template name; sets author, subject, keywords and language', async () => {
    const c = content('<p>Hello</p>', {
      title: 'Invoice {{ number }} <draft> & co',
      metadata: {
        author: 'Müller & Söhne KG',
        subject: 'Invoice for March',
        keywords: 'invoice, march',
        language: 'de-DE',
      },
    });
    const { pdf } = await engine.renderer.render(c, { number: 'A-9' }, { templateName: 'Invoice template' });
    const out = await info(pdf);
    expect(out).toMatch(/^Title:\s+Invoice A-9 <draft> & co$/m);
    expect(out).toMatch(/^Author:\s+Müller & Söhne KG$/m);
    expect(out).toMatch(/^Subject:\s+Invoice for March$/m);
    expect(out).toMatch(/^Keywords:\s+invoice.*march$/m);
    expect(out).toMatch(/^Tagged:\s+yes/m);
    const qdf = (
      await run('qpdf', ['--qdf', '--object-streams=disable', await saved(pdf), '-'], {
        encoding: 'latin1',
        maxBuffer: 64 << 20,
      })
    ).stdout;
    expect(qdf).toMatch(/\/Lang \(de-DE\)/);

    const plain = await engine.renderer.render(content('<p>Hello</p>'), {}, { templateName: 'Quarterly report' });
    expect(await info(plain.pdf)).toMatch(/^Title:\s+Quarterly report$/m);
  });
});

describe('print options', () => {
  it('applies scale, page ranges and a CSS page size when asked to', async () => {
    const long = '{% for i in (1..3) %}<p style="break-after: page">Section {{ i }}</p>{% endfor %}';
    const ranged = await engine.renderer.render(content(long, {}, { pageRanges: '2-3' }), {});
    expect((await pdfInfo(ranged.pdf)).pages).toBe(2);
    expect(await pdfText(ranged.pdf)).not.toContain('Section 1');

    const css = '@page { size: A5 landscape; }';
    const cssSized = await engine.renderer.render(content('<p>A5</p>', { css }, { preferCssPageSize: true }), {});
    const a5 = await pdfInfo(cssSized.pdf);
    expect(Math.round(a5.width)).toBe(595);
    expect(Math.round(a5.height)).toBe(420);
    const ignored = await pdfInfo((await engine.renderer.render(content('<p>A4</p>', { css }), {})).pdf);
    // Without preferCssPageSize the paper stays A4 (Chromium still takes the orientation from CSS).
    const sides = [ignored.width, ignored.height].sort((a, b) => a - b);
    expect(Math.abs(sides[0]! - 595.3)).toBeLessThan(2);
    expect(Math.abs(sides[1]! - 841.9)).toBeLessThan(2);

    // Half the scale: a paragraph twice as tall still fits on one page.
    const tall = '<div style="height: 400mm">tall</div>';
    expect((await pdfInfo((await engine.renderer.render(content(tall), {})).pdf)).pages).toBe(2);
    expect((await pdfInfo((await engine.renderer.render(content(tall, {}, { scale: 0.5 }), {})).pdf)).pages).toBe(1);

    const beyond = await engine.renderer
      .render(content('<p>one page</p>', {}, { pageRanges: '5' }), {})
      .catch((e: unknown) => e);
    expect(beyond).toBeInstanceOf(RenderError);
    expect((beyond as RenderError).kind).toBe('permanent');
  });

  it('encrypts with a password and permissions', async () => {
    const protection = {
      userPassword: 'open-sesame',
      ownerPassword: 'owner-secret',
      allowPrinting: true,
      allowCopying: false,
      allowModifying: false,
    };
    const { pdf } = await engine.renderer.render(content('<p>Secret {{ number }}</p>', {}, { protection }), {});
    const refused = await info(pdf).catch((e: { stderr?: string }) => e.stderr ?? String(e));
    expect(refused).toMatch(/Incorrect password/i);
    const opened = await info(pdf, '-upw', 'open-sesame');
    expect(opened).toMatch(/^Encrypted:\s+yes \(print:yes copy:no change:no addNotes:no algorithm:AES-256\)/m);
    const ownerText = (await run('pdftotext', ['-opw', 'owner-secret', await saved(pdf), '-'], { encoding: 'utf8' }))
      .stdout;
    expect(ownerText).toContain('Secret INV-7');
  });
});

describe('fonts', () => {
  it("prints the sample invoice's CJK line with a Noto CJK font, under the invoice's title", async () => {
    const { content: invoice, variables } = loadInvoiceFixture();
    const { pdf } = await engine.renderer.render(invoice, variables);
    expect(await pdfText(pdf)).toContain('東京');
    // docgen dev's sample: its title, no longer "about:blank".
    expect(await info(pdf)).toMatch(/^Title:\s+Invoice INV-2026-00042$/m);
    // Chromium embeds CFF-outline fonts such as Noto CJK as Type 3 fonts, which poppler's
    // pdffonts lists without a name: the font's descriptor names it.
    const fonts = (await run('pdffonts', [await saved(pdf)], { encoding: 'utf8' })).stdout;
    expect(fonts).toMatch(/Type 3/);
    const qdf = (
      await run('qpdf', ['--qdf', '--object-streams=disable', await saved(pdf), '-'], {
        encoding: 'latin1',
        maxBuffer: 64 << 20,
      })
    ).stdout;
    expect(qdf).toMatch(/\/FontName \/[A-Z]{6}\+NotoSansCJK/);
  });
});
