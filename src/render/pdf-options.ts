// A version's PDF options: checked at publish time, turned into Chromium's print parameters
// at render time.

import { PAGE_SIZES } from '../domain/template.ts';
import type { PageSize, PdfOptions } from '../domain/template.ts';
import { isPlainObject } from '../domain/json.ts';
import type { PrintToPdfParams } from './chromium/devtools-print.ts';

/**
 * Paper sizes in inches (portrait): the ISO sizes to four decimals, the same figures puppeteer's
 * `format` sends to Chromium, so pages keep the size they had when printing went through it
 * (A4 prints as 595.92 x 841.92 pt).
 */
const PAPER_INCHES: Record<PageSize, { width: number; height: number }> = {
  A3: { width: 11.6929, height: 16.5354 },
  A4: { width: 8.2677, height: 11.6929 },
  A5: { width: 5.8268, height: 8.2677 },
  Letter: { width: 8.5, height: 11 },
  Legal: { width: 8.5, height: 14 },
  Tabloid: { width: 11, height: 17 },
};

const UNIT_INCHES: Record<string, number> = { px: 1 / 96, in: 1, cm: 1 / 2.54, mm: 1 / 25.4 };

/** Largest header/footer template accepted (they are rendered for every page). */
export const MAX_HEADER_FOOTER_CHARS = 64 * 1024;

/**
 * Parses a margin length the way Chromium's print parameters accept it: a non-negative number
 * with an optional unit px, in, cm or mm (no unit means px). Returns inches, or undefined.
 */
export function cssLengthToInches(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(px|in|cm|mm)?\s*$/i.exec(value);
  if (!match) return undefined;
  const unit = (match[2] ?? 'px').toLowerCase();
  return Number(match[1]) * UNIT_INCHES[unit]!;
}

/** Page ranges as Chromium takes them: "1-3, 5", "2-". */
const PAGE_RANGES = /^\s*\d+\s*(-\s*\d*\s*)?(,\s*\d+\s*(-\s*\d*\s*)?)*$/;

/**
 * Problems with a version's PDF options, each naming the field; [] when valid. `rendered`:
 * the header/footer templates are the rendered ones (CSS and data: URLs inlined), which may
 * be longer than a version's source may be.
 */
export function validatePdfOptions(options: unknown, { rendered = false }: { rendered?: boolean } = {}): string[] {
  if (!isPlainObject(options)) {
    return ['pdfOptions must be an object'];
  }
  const o = options as Partial<Record<keyof PdfOptions, unknown>>;
  const problems: string[] = [];
  const size = o.pageSize;
  const validSize = typeof size === 'string' && (PAGE_SIZES as readonly string[]).includes(size);
  if (!validSize) {
    problems.push(`pdfOptions.pageSize ${JSON.stringify(size)} is not supported; use one of ${PAGE_SIZES.join(', ')}`);
  }
  if (typeof o.landscape !== 'boolean') problems.push('pdfOptions.landscape must be true or false');
  if (typeof o.printBackground !== 'boolean') problems.push('pdfOptions.printBackground must be true or false');

  const margins = o.margins as Record<string, unknown> | undefined;
  const inches: Record<string, number> = {};
  if (!isPlainObject(margins)) {
    problems.push('pdfOptions.margins must be an object with top, right, bottom and left');
  } else {
    for (const side of ['top', 'right', 'bottom', 'left'] as const) {
      const value = cssLengthToInches(margins[side]);
      if (value === undefined) {
        problems.push(
          `pdfOptions.margins.${side} ${JSON.stringify(margins[side])} is not a valid length; use a number with px, in, cm or mm (e.g. "10mm")`,
        );
      } else {
        inches[side] = value;
      }
    }
    if (validSize && typeof o.landscape === 'boolean' && Object.keys(inches).length === 4) {
      const paper = PAPER_INCHES[size as PageSize];
      const width = o.landscape ? paper.height : paper.width;
      const height = o.landscape ? paper.width : paper.height;
      if (inches.left! + inches.right! >= width)
        problems.push('pdfOptions.margins: left + right leave no room on the page');
      if (inches.top! + inches.bottom! >= height)
        problems.push('pdfOptions.margins: top + bottom leave no room on the page');
    }
  }
  for (const field of [
    'headerTemplate',
    'footerTemplate',
    'firstPageHeaderTemplate',
    'firstPageFooterTemplate',
  ] as const) {
    const value = o[field];
    if (value === undefined && field.startsWith('firstPage')) continue;
    if (typeof value !== 'string') problems.push(`pdfOptions.${field} must be a string ('' for none)`);
    else if (!rendered && value.length > MAX_HEADER_FOOTER_CHARS)
      problems.push(`pdfOptions.${field} is longer than ${MAX_HEADER_FOOTER_CHARS} characters`);
  }
  // Absent on versions stored before these options existed: the defaults apply.
  if (o.scale !== undefined && !(typeof o.scale === 'number' && o.scale >= 0.1 && o.scale <= 2)) {
    problems.push(`pdfOptions.scale ${JSON.stringify(o.scale)} is out of range; use 0.1 to 2`);
  }
  if (
    o.pageRanges !== undefined &&
    o.pageRanges !== '' &&
    !(typeof o.pageRanges === 'string' && PAGE_RANGES.test(o.pageRanges))
  ) {
    problems.push(`pdfOptions.pageRanges ${JSON.stringify(o.pageRanges)} is not a page range list; use e.g. "1-3, 5"`);
  }
  return problems;
}

// Without a template of its own, Chromium prints its default header/footer (title, date, URL)
// in the slot that was left empty.
const EMPTY_TEMPLATE = '<span></span>';

/** Chromium's Page.printToPDF parameters for valid options; header/footer already rendered. */
export function toPrintParams(
  options: PdfOptions,
  { tagged, outline = false }: { tagged: boolean; outline?: boolean },
): PrintToPdfParams {
  const headerFooter = options.headerTemplate !== '' || options.footerTemplate !== '';
  const paper = PAPER_INCHES[options.pageSize];
  const margin = (side: 'top' | 'right' | 'bottom' | 'left') => cssLengthToInches(options.margins[side]) ?? 0;
  return {
    // Portrait size: Chromium turns the paper itself when landscape is set.
    paperWidth: paper.width,
    paperHeight: paper.height,
    landscape: options.landscape,
    printBackground: options.printBackground,
    marginTop: margin('top'),
    marginRight: margin('right'),
    marginBottom: margin('bottom'),
    marginLeft: margin('left'),
    displayHeaderFooter: headerFooter,
    headerTemplate: headerFooter ? options.headerTemplate || EMPTY_TEMPLATE : '',
    footerTemplate: headerFooter ? options.footerTemplate || EMPTY_TEMPLATE : '',
    // The version's page size wins unless the version lets a CSS @page size decide.
    preferCSSPageSize: options.preferCssPageSize === true,
    scale: options.scale ?? 1,
    ...(options.pageRanges ? { pageRanges: options.pageRanges } : {}),
    // Tagged (accessible) PDF: Chromium's default, kept unless the pool is told otherwise.
    generateTaggedPDF: tagged,
    // Bookmarks from the headings (h1-h6), built by Chromium from the same layout it prints;
    // sent only when asked so that plain prints stay as they were.
    ...(outline ? { generateDocumentOutline: true } : {}),
  };
}
