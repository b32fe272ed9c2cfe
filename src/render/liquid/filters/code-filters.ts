// qr_code, barcode and epc_qr (docs/templates.md#barcodes-and-qr-codes): codes drawn as inline
// SVG while Liquid renders, so the page needs neither JavaScript nor a network. QR codes come
// from `qrcode` (about ten times faster than bwip-js's QR encoder: a page of 100 codes stays
// well inside the Liquid time budget), every other symbology from bwip-js (Barcode Writer in
// Pure PostScript). Both load on first use: most renders draw no code.

import { createRequire } from 'node:module';
import { EPC_FIELDS, epcPaymentOf, epcPayload } from './epc-payment.ts';
import {
  FilterError,
  filteredExpression,
  onlyKnown,
  plain,
  shown,
  splitArguments,
  type FilterThis,
} from './filter-input.ts';
import { SafeHtml } from '../safe-html.ts';
import { RecentResults } from './recent-results.ts';

const require = createRequire(import.meta.url);

interface QrModules {
  size: number;
  get(row: number, col: number): number | boolean;
}
interface QrLibrary {
  create(text: string, options: { errorCorrectionLevel: string }): { modules: QrModules };
}
interface BwipLibrary {
  toSVG(options: Record<string, unknown>): string;
  /** The symbol as a matrix: pixx x pixy pixels (1 dark), `width`/`height` its size in inches. */
  raw(
    options: Record<string, unknown>,
  ): Array<{ pixs: number[]; pixx: number; pixy: number; width: number; height: number }>;
}

let qrLibrary: QrLibrary | undefined;
/** Codes drawn lately in this process (a preview draws the same ones at every keystroke). */
const recent = new RecentResults(2 * 1024 * 1024);
let bwipLibrary: BwipLibrary | undefined;

function qrcode(): QrLibrary {
  return (qrLibrary ??= require('qrcode') as QrLibrary);
}

function bwip(): BwipLibrary {
  return (bwipLibrary ??= require('bwip-js') as BwipLibrary);
}

/** CSS lengths a code may be sized with. */
const LENGTH = /^\d+(?:\.\d+)?(?:mm|cm|in|pt|px)$/;

function lengthOf(filter: string, name: string, value: unknown, fallback: string): string {
  if (value === undefined || value === null) return fallback;
  const text = typeof value === 'number' ? `${value}mm` : String(value).trim();
  if (!LENGTH.test(text))
    throw new FilterError(`${filter}: ${name} ${shown(value)} is not a length; use e.g. '30mm', '1in', '90pt'`);
  return text;
}

function svg(
  viewWidth: number,
  viewHeight: number,
  size: { width?: string; height?: string },
  label: string,
  inner: string,
): SafeHtml {
  const width = size.width ? ` width="${size.width}"` : '';
  const height = size.height ? ` height="${size.height}"` : '';
  return new SafeHtml(
    `<svg class="docgen-code" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${viewWidth} ${viewHeight}"${width}${height} role="img" aria-label="${label}">${inner}</svg>`,
  );
}

// --------------------------------------------------------------------------------------------
// QR codes

const EC_LEVELS = ['L', 'M', 'Q', 'H'] as const;
/** Bytes a QR code (version 40, byte mode) holds at each error-correction level. */
const QR_CAPACITY: Record<(typeof EC_LEVELS)[number], number> = { L: 2953, M: 2331, Q: 1663, H: 1273 };

/** Dark modules as one path, a run of dark modules in a row one rectangle, `margin` modules in. */
function matrixPath(
  columns: number,
  rows: number,
  dark: (row: number, col: number) => boolean,
  margin: number,
): string {
  const parts: string[] = [];
  for (let row = 0; row < rows; row++) {
    let col = 0;
    while (col < columns) {
      if (!dark(row, col)) {
        col += 1;
        continue;
      }
      const start = col;
      while (col < columns && dark(row, col)) col += 1;
      parts.push(`M${start + margin} ${row + margin}h${col - start}v1h${start - col}z`);
    }
  }
  return parts.join('');
}

/** A QR code as SVG; kept for the next identical one (the output does not name `what`). */
function drawQr(filter: string, text: string, what: string, ec: (typeof EC_LEVELS)[number], size: string): SafeHtml {
  const key = JSON.stringify(['qr', text, ec, size]);
  return new SafeHtml(recent.get(key, () => drawQrOnce(filter, text, what, ec, size)));
}

function drawQrOnce(filter: string, text: string, what: string, ec: (typeof EC_LEVELS)[number], size: string): string {
  if (text === '') throw new FilterError(`${filter}: ${what} is empty; there is nothing to encode`);
  let modules: QrModules;
  try {
    modules = qrcode().create(text, { errorCorrectionLevel: ec }).modules;
  } catch (err) {
    const bytes = new TextEncoder().encode(text).length;
    if (bytes > QR_CAPACITY[ec] || /too big|amount of data/i.test((err as Error).message))
      throw new FilterError(
        `${filter}: ${what} is too long for a QR code (${bytes} bytes; at most ${QR_CAPACITY[ec]} at error correction ${ec})`,
      );
    throw new FilterError(`${filter}: cannot encode ${what} (${(err as Error).message})`);
  }
  const margin = 4; // the quiet zone the standard asks for
  const side = modules.size + 2 * margin;
  const path = matrixPath(modules.size, modules.size, (row, col) => Boolean(modules.get(row, col)), margin);
  return svg(side, side, { width: size, height: size }, 'QR code', `<path d="${path}"/>`).html;
}

function ecOf(filter: string, value: unknown, fallback: (typeof EC_LEVELS)[number]): (typeof EC_LEVELS)[number] {
  if (value === undefined || value === null) return fallback;
  const level = String(value).toUpperCase();
  if (!(EC_LEVELS as readonly string[]).includes(level))
    throw new FilterError(`${filter}: ec ${shown(value)} is not an error-correction level; use 'L', 'M', 'Q' or 'H'`);
  return level as (typeof EC_LEVELS)[number];
}

function textOf(filter: string, self: FilterThis | undefined, value: unknown): string {
  const v = plain(value);
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  throw new FilterError(`${filter}: ${filteredExpression(self)} is ${shown(v)}; it needs text to encode`);
}

/** `{{ url | qr_code }}`, `{{ url | qr_code: ec: 'H', size: '40mm' }}`. */
export function qrCode(this: FilterThis, value: unknown, ...args: unknown[]): SafeHtml {
  const { positional, named } = splitArguments(args);
  onlyKnown('qr_code', named, ['ec', 'size']);
  if (positional.length > 0)
    throw new FilterError(`qr_code: takes only named options, e.g. qr_code: ec: 'H', size: '40mm'`);
  const text = textOf('qr_code', this, value);
  return drawQr(
    'qr_code',
    text,
    filteredExpression(this),
    ecOf('qr_code', named.get('ec'), 'M'),
    lengthOf('qr_code', 'size', named.get('size'), '30mm'),
  );
}

/** `{{ payment | epc_qr }}`: a SEPA credit transfer ("GiroCode") from {name, iban, bic, amount, reference}. */
export function epcQr(this: FilterThis, value: unknown, ...args: unknown[]): SafeHtml {
  const { positional, named } = splitArguments(args);
  onlyKnown('epc_qr', named, [...EPC_FIELDS, 'size']);
  if (positional.length > 0)
    throw new FilterError(
      `epc_qr: takes named options only, e.g. epc_qr: amount: total, reference: number, size: '35mm'`,
    );
  const payment = epcPaymentOf(plain(value), named, filteredExpression(this));
  // EPC069-12 asks for error-correction level M.
  return drawQr(
    'epc_qr',
    epcPayload(payment),
    filteredExpression(this),
    'M',
    lengthOf('epc_qr', 'size', named.get('size'), '30mm'),
  );
}

// --------------------------------------------------------------------------------------------
// Other symbologies (bwip-js)

/** Symbologies by the name templates use, and bwip-js's name for each. */
export const BARCODE_TYPES: Record<string, { bcid: string; linear: boolean }> = {
  code128: { bcid: 'code128', linear: true },
  'gs1-128': { bcid: 'gs1-128', linear: true },
  ean13: { bcid: 'ean13', linear: true },
  ean8: { bcid: 'ean8', linear: true },
  upca: { bcid: 'upca', linear: true },
  upce: { bcid: 'upce', linear: true },
  code39: { bcid: 'code39', linear: true },
  code93: { bcid: 'code93', linear: true },
  itf14: { bcid: 'itf14', linear: true },
  interleaved2of5: { bcid: 'interleaved2of5', linear: true },
  datamatrix: { bcid: 'datamatrix', linear: false },
  pdf417: { bcid: 'pdf417', linear: false },
  aztec: { bcid: 'azteccode', linear: false },
};

/** bwip-js errors read "bwipp.ean13badCheckDigit#6915: Incorrect EAN-13 check digit provided". */
function bwipReason(err: unknown): string {
  return String((err as Error)?.message ?? err).replace(/^bwip(?:p|-js)\.\w+#?\d*:\s*/, '');
}

/**
 * `{{ sku | barcode: 'ean13' }}`, `{{ tracking | barcode: 'code128', height: 15, text: false }}`.
 * One unit of the drawing is a point, so a module is 1/72 in (0.35 mm) at scale 1.
 */
export function barcode(this: FilterThis, value: unknown, ...args: unknown[]): SafeHtml {
  const { positional, named } = splitArguments(args);
  onlyKnown('barcode', named, ['height', 'text', 'scale', 'width']);
  const typeName = positional[0];
  const names = Object.keys(BARCODE_TYPES).join(', ');
  if (typeof typeName === 'string' && /^qr_?code$/i.test(typeName))
    throw new FilterError(`barcode: for QR codes use the qr_code filter ({{ text | qr_code }})`);
  if (typeof typeName !== 'string' || !Object.hasOwn(BARCODE_TYPES, typeName.toLowerCase()))
    throw new FilterError(
      `barcode: ${typeName === undefined ? 'needs a symbology' : `${shown(typeName)} is not a symbology`}; use one of ${names}`,
    );
  const type = typeName.toLowerCase();
  const { bcid, linear } = BARCODE_TYPES[type]!;
  const text = textOf('barcode', this, value);
  const what = filteredExpression(this);
  if (text === '') throw new FilterError(`barcode: ${what} is empty; there is nothing to encode`);
  const scale = named.get('scale') ?? 1;
  if (typeof scale !== 'number' || !Number.isInteger(scale) || scale < 1 || scale > 10)
    throw new FilterError(`barcode: scale must be a whole number from 1 to 10, got ${shown(scale)}`);
  if (!linear && (named.has('height') || named.has('text')))
    throw new FilterError(`barcode: ${type} takes scale and width, not height or text`);
  // Quiet zones belong to the code (a scanner needs them): ten modules beside linear codes, a
  // few around 2D ones. Code 93's two check characters are part of the symbology, not an option.
  const options: Record<string, unknown> = {
    bcid,
    text,
    scale,
    paddingwidth: linear ? 10 : 4,
    paddingheight: linear ? 0 : 4,
    ...(type === 'code93' ? { includecheck: true } : {}),
  };
  if (linear) {
    const height = named.get('height') ?? 12;
    if (typeof height !== 'number' || !(height >= 3 && height <= 100))
      throw new FilterError(`barcode: height is the bars' height in mm, 3 to 100; got ${shown(height)}`);
    Object.assign(options, { height, includetext: named.get('text') !== false, textxalign: 'center' });
  }
  let drawn: string;
  try {
    drawn = recent.get(JSON.stringify(options), () => bwip().toSVG(options));
  } catch (err) {
    throw new FilterError(`barcode: ${what} ${shown(text)} cannot be drawn as ${type}: ${bwipReason(err)}`);
  }
  const box = /viewBox="0 0 (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)"/.exec(drawn);
  if (!box) throw new FilterError(`barcode: ${type} drawing failed`);
  const inner = drawn.slice(drawn.indexOf('>') + 1, drawn.lastIndexOf('</svg>'));
  const w = Number(box[1]);
  const h = Number(box[2]);
  const width = lengthOf('barcode', 'width', named.get('width'), `${w}pt`);
  return svg(w, h, named.has('width') ? { width } : { width, height: `${h}pt` }, `${type} barcode`, inner);
}

/** The code filters by name. */
export const CODE_FILTERS = { qr_code: qrCode, epc_qr: epcQr, barcode };
