// qr_code, barcode, epc_qr and chart on the engine every render uses, in process: what they
// draw (inline SVG, text as text), the EPC payload, and bad input as clear errors. That the
// codes decode with a real reader is test/integration/render-gallery.test.ts (zbarimg).
import { describe, expect, it } from 'vitest';
import { createLiquidEngine, PartialStore } from '../../src/render/liquid/liquid-engine.ts';
import { epcPaymentOf, epcPayload, ibanIsValid } from '../../src/render/liquid/filters/epc-payment.ts';

function render(source: string, scope: Record<string, unknown> = {}, locale = 'en-US'): string {
  const liquid = createLiquidEngine(new PartialStore(), { settings: { locale, timeZone: 'UTC' } });
  return String(liquid.parseAndRenderSync(source, scope));
}

function failure(source: string, scope: Record<string, unknown> = {}): string {
  try {
    render(source, scope);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`rendered without an error: ${source}`);
}

const PAYMENT = { name: 'Nordlicht Software GmbH', iban: 'DE89 3704 0044 0532 0130 00', bic: 'COBADEFFXXX' };

describe('qr_code', () => {
  it('draws an SVG of the size asked, with the quiet zone, not escaped', () => {
    const svg = render(`{{ url | qr_code: ec: 'H', size: '40mm' }}`, { url: 'https://example.com/t/1' });
    expect(svg).toMatch(/^<svg class="docgen-code" [^>]*viewBox="0 0 (\d+) \1" width="40mm" height="40mm"/);
    expect(svg).toMatch(/<path d="M4 4h7v1h-7z/); // the finder pattern's top row, after 4 modules of quiet zone
    expect(svg).not.toContain('&lt;');
  });

  it('grows with the error-correction level and refuses what cannot fit', () => {
    const side = (ec: string) =>
      Number(
        /viewBox="0 0 (\d+)/.exec(render(`{{ 'x' | append: t | qr_code: ec: '${ec}' }}`, { t: 'y'.repeat(200) }))![1],
      );
    expect(side('H')).toBeGreaterThan(side('L'));
    expect(failure(`{{ t | qr_code }}`, { t: 'y'.repeat(2400) })).toContain(
      'qr_code: `t` is too long for a QR code (2400 bytes; at most 2331 at error correction M)',
    );
    expect(failure(`{{ t | qr_code: ec: 'H' }}`, { t: 'é'.repeat(700) })).toContain(
      '(1400 bytes; at most 1273 at error correction H)',
    );
    expect(failure(`{{ t | qr_code }}`, { t: '' })).toContain('qr_code: `t` is empty');
    expect(failure(`{{ t | qr_code }}`, { t: { a: 1 } })).toContain(
      'qr_code: `t` is an object; it needs text to encode',
    );
    expect(failure(`{{ 'x' | qr_code: ec: 'Z' }}`)).toContain(
      "ec \"Z\" is not an error-correction level; use 'L', 'M', 'Q' or 'H'",
    );
    expect(failure(`{{ 'x' | qr_code: size: 'big' }}`)).toContain('size "big" is not a length; use e.g. \'30mm\'');
    expect(failure(`{{ 'x' | qr_code: colour: 'red' }}`)).toContain('unknown option "colour" (options: ec, size)');
  });
});

describe('barcode', () => {
  it.each([
    'code128',
    'ean13',
    'ean8',
    'upca',
    'upce',
    'code39',
    'code93',
    'itf14',
    'interleaved2of5',
    'datamatrix',
    'pdf417',
    'aztec',
    'gs1-128',
  ])('draws %s', (type) => {
    const text: Record<string, string> = {
      ean13: '4006381333931',
      ean8: '96385074',
      upca: '036000291452',
      upce: '01234565',
      itf14: '15400141288763',
      interleaved2of5: '12345678',
      'gs1-128': '(01)09521234543213(3103)000123',
      code39: 'SHIP-42',
    };
    const svg = render(`{{ v | barcode: '${type}' }}`, { v: text[type] ?? 'SHIP-42/1' });
    expect(svg).toMatch(/^<svg class="docgen-code" [^>]*viewBox="0 0 [\d.]+ [\d.]+" width="[\d.]+pt"/);
    expect(svg).toContain(`aria-label="${type} barcode"`);
    expect(svg).not.toMatch(/<script|<text/);
  });

  it('fails on input the symbology cannot carry, with the reason', () => {
    expect(failure(`{{ sku | barcode: 'ean13' }}`, { sku: '4006381333932' })).toContain(
      'barcode: `sku` "4006381333932" cannot be drawn as ean13: Incorrect EAN-13 check digit provided',
    );
    expect(failure(`{{ '123' | barcode: 'itf14' }}`)).toContain(
      'cannot be drawn as itf14: ITF-14 must be 13 or 14 digits',
    );
    expect(failure(`{{ 'abc~' | barcode: 'code39' }}`)).toContain('cannot be drawn as code39');
    expect(failure(`{{ 'x' | barcode: 'code11x' }}`)).toContain('"code11x" is not a symbology; use one of code128');
    expect(failure(`{{ 'x' | barcode }}`)).toContain('barcode: needs a symbology');
    expect(failure(`{{ 'x' | barcode: 'qrcode' }}`)).toContain('for QR codes use the qr_code filter');
    expect(failure(`{{ 'x' | barcode: 'datamatrix', height: 10 }}`)).toContain('datamatrix takes scale and width');
    expect(failure(`{{ 'x' | barcode: 'code128', height: 1 }}`)).toContain(
      "height is the bars' height in mm, 3 to 100",
    );
  });

  it('takes the height, hides the text and scales', () => {
    const h = (svg: string) => Number(/height="([\d.]+)pt"/.exec(svg)![1]);
    const plain = render(`{{ 'A1' | barcode: 'code128', text: false }}`);
    expect(h(render(`{{ 'A1' | barcode: 'code128', height: 20, text: false }}`))).toBeGreaterThan(h(plain));
    expect(h(render(`{{ 'A1' | barcode: 'code128' }}`))).toBeGreaterThan(h(plain)); // room for the text
    expect(render(`{{ 'A1' | barcode: 'datamatrix', width: '20mm' }}`)).toContain('width="20mm"');
  });
});

describe('epc_qr', () => {
  it('builds the EPC069-12 payload: BCD, version 002, UTF-8, SCT, BIC, name, IBAN, amount, reference', () => {
    const payment = epcPaymentOf(
      { ...PAYMENT, amount: 2816.61, reference: 'INV-2026-00042', terms: 'ignored' },
      new Map(),
      'p',
    );
    expect(epcPayload(payment)).toBe(
      'BCD\n002\n1\nSCT\nCOBADEFFXXX\nNordlicht Software GmbH\nDE89370400440532013000\nEUR2816.61\n\n\nINV-2026-00042',
    );
    const structured = epcPaymentOf({ ...PAYMENT, reference: 'RF18 5390 0754 7034', amount: '12.5' }, new Map(), 'p');
    expect(epcPayload(structured)).toBe(
      'BCD\n002\n1\nSCT\nCOBADEFFXXX\nNordlicht Software GmbH\nDE89370400440532013000\nEUR12.50\n\nRF18539007547034',
    );
    // Named options fill in and override the object's fields.
    const svg = render(`{{ p | epc_qr: amount: total, reference: 'R-1' }}`, { p: PAYMENT, total: 10.005 });
    expect(svg).toMatch(/^<svg class="docgen-code"[^>]*width="30mm"/);
  });

  it('checks the IBAN, BIC, amount and reference before drawing', () => {
    expect(ibanIsValid('DE89370400440532013000')).toBe(true);
    expect(ibanIsValid('GB82WEST12345698765432')).toBe(true);
    expect(ibanIsValid('DE89370400440532013001')).toBe(false);
    const bad = (p: Record<string, unknown>) => failure(`{{ p | epc_qr }}`, { p: { ...PAYMENT, ...p } });
    expect(bad({ iban: 'DE89 3704 0044 0532 0130 01' })).toContain(
      'iban "DE89 3704 0044 0532 0130 01" is not a valid IBAN',
    );
    expect(bad({ bic: 'COBA' })).toContain('bic "COBA" is not a BIC');
    expect(bad({ amount: 0 })).toContain('amount 0 must be a number of euros from 0.01 to 999999999.99');
    expect(bad({ amount: 'lots' })).toContain('amount "lots" must be a number of euros');
    expect(bad({ name: '' })).toContain("the payee's name is missing");
    expect(bad({ reference: 'x'.repeat(141) })).toContain('reference must be at most 140 characters');
    expect(bad({ reference: 'RF19 5390 0754 7034' })).toContain(
      'looks like a creditor reference (RF…) but its check digits do not match',
    );
    expect(failure(`{{ p | epc_qr }}`, { p: 'DE89' })).toContain('epc_qr: `p` is "DE89"; it must be an object');
  });
});

describe('chart', () => {
  const sales = [
    { month: 'Jan', online: 1200, retail: 300 },
    { month: 'Feb', online: 1500.5, retail: 450 },
    { month: 'Mär <b>', online: '1700', retail: null },
  ];

  it.each(['bar', 'line', 'stacked_bar'])(
    'draws a %s chart with its titles, axis labels and legend as text',
    (type) => {
      const svg = render(
        `{{ sales | chart: '${type}', x: 'month', y: 'online, retail', names: 'Online, Retail', title: 'Sales & returns', x_title: 'Month', y_title: 'EUR' }}`,
        { sales },
        'de-DE',
      );
      expect(svg).toMatch(/^<svg class="docgen-chart" width="640" height="320"/);
      for (const text of [
        '>Sales &amp; returns<',
        '>Month<',
        '>EUR<',
        '>Jan<',
        '>Mär &lt;b&gt;<',
        '>Online<',
        '>Retail<',
      ])
        expect(svg).toContain(text);
      expect(svg).toMatch(/>1\.500</); // the value axis in the version's locale (de-DE)
      expect(svg).toContain('font-family:inherit');
      expect(svg).not.toMatch(/<style|<script/);
    },
  );

  it('draws a pie with its slices labelled', () => {
    const svg = render(`{{ rows | chart: 'pie', x: 'k', y: 'v', labels: true, width: 300, height: 200 }}`, {
      rows: [
        { k: 'Tents', v: 3 },
        { k: 'Boots', v: 1 },
      ],
    });
    expect(svg).toMatch(/width="300" height="200"/);
    expect(svg).toContain('>Tents<');
    expect(svg).toContain('>75%<');
  });

  it('refuses data and options it cannot draw, saying what it needs', () => {
    expect(failure(`{{ rows | chart: 'bar', x: 'm', y: 'v' }}`, { rows: [{ m: 'a', v: 'n/a' }] })).toContain(
      'chart: `rows`[0].v is "n/a", not a number',
    );
    expect(failure(`{{ rows | chart: 'bar', x: 'm', y: 'v' }}`, { rows: [] })).toContain(
      'it needs a non-empty list of rows',
    );
    expect(failure(`{{ rows | chart: 'donut', x: 'm', y: 'v' }}`, { rows: [{}] })).toContain(
      "\"donut\" is not a chart type; use 'bar', 'line', 'pie', 'stacked_bar'",
    );
    expect(failure(`{{ rows | chart: 'bar', y: 'v' }}`, { rows: [{ v: 1 }] })).toContain('chart: needs x');
    expect(failure(`{{ rows | chart: 'bar', x: 'm' }}`, { rows: [{ m: 'a' }] })).toContain('chart: needs y');
    expect(failure(`{{ rows | chart: 'pie', x: 'm', y: 'a, b' }}`, { rows: [{ m: 'a' }] })).toContain(
      'a pie has one value field',
    );
    expect(failure(`{{ rows | chart: 'bar', x: 'm', y: 'v', width: 5000 }}`, { rows: [{ m: 'a', v: 1 }] })).toContain(
      'width is in CSS pixels, a whole number from 100 to 2000',
    );
    expect(
      failure(`{{ rows | chart: 'bar', x: 'm', y: 'v', colors: 'url(x)' }}`, { rows: [{ m: 'a', v: 1 }] }),
    ).toContain('is not a colour');
    expect(
      failure(`{{ rows | chart: 'bar', x: 'm', y: 'v' }}`, {
        rows: Array.from({ length: 1001 }, () => ({ m: 'a', v: 1 })),
      }),
    ).toContain('has 1001 rows; at most 1000');
  });
});
