// A version's PDF options: checked at publish time and before printing, turned into Chromium's
// print parameters at render time. The rules themselves (page sizes, lengths, limits, the
// defaults) are the document settings' (src/domain/document-settings.ts).

import {
  checkPdfOptions,
  cssLengthToInches,
  formatSettingIssue,
  PAPER_INCHES,
  readPdfOptions,
  type MarginSide,
  type PdfOptions,
  type PdfOptionsInput,
} from '../domain/document-settings.ts';
import { isPlainObject } from '../domain/json.ts';
import type { PrintToPdfParams } from './chromium/devtools-print.ts';

/**
 * Problems with a version's PDF options, each naming the field; [] when valid. `rendered`:
 * the header/footer templates are the rendered ones (CSS and data: URLs inlined), which may
 * be longer than a version's source may be.
 */
export function validatePdfOptions(options: unknown, { rendered = false }: { rendered?: boolean } = {}): string[] {
  if (!isPlainObject(options)) return ['pdfOptions must be an object'];
  return checkPdfOptions(options as PdfOptionsInput, { rendered }).map(formatSettingIssue);
}

// Without a template of its own, Chromium prints its default header/footer (title, date, URL)
// in the slot that was left empty.
const EMPTY_TEMPLATE = '<span></span>';

/** Chromium's Page.printToPDF parameters for valid options; header/footer already rendered. */
export function toPrintParams(
  given: PdfOptions,
  { tagged, outline = false }: { tagged: boolean; outline?: boolean },
): PrintToPdfParams {
  // As stored: canonical page size, every setting present (older versions lack the newer ones).
  const options = readPdfOptions(given, { rendered: true }).options;
  const headerFooter = options.headerTemplate !== '' || options.footerTemplate !== '';
  const paper = PAPER_INCHES[options.pageSize];
  const margin = (side: MarginSide) => cssLengthToInches(options.margins[side]) ?? 0;
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
    preferCSSPageSize: options.preferCssPageSize,
    scale: options.scale,
    ...(options.pageRanges ? { pageRanges: options.pageRanges } : {}),
    // Tagged (accessible) PDF: Chromium's default, kept unless the pool is told otherwise.
    generateTaggedPDF: tagged,
    // Bookmarks from the headings (h1-h6), built by Chromium from the same layout it prints;
    // sent only when asked so that plain prints stay as they were.
    ...(outline ? { generateDocumentOutline: true } : {}),
  };
}
