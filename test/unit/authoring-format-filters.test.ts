// money, number, percent and format_date (src/render/liquid/filters/format-filters.ts) on the
// engine every render uses, in process: locales (en-US, de-DE, fr-FR, ja-JP, ar-EG), time zones,
// and values a filter cannot format, which fail naming the expression and the line, never NaN.
import { describe, expect, it } from 'vitest';
import { createLiquidEngine, PartialStore } from '../../src/render/liquid/liquid-engine.ts';
import type { FormatSettings } from '../../src/render/liquid/filters/authoring-filters.ts';

function render(source: string, scope: Record<string, unknown> = {}, settings: Partial<FormatSettings> = {}): string {
  const liquid = createLiquidEngine(new PartialStore(), {
    settings: { locale: 'en-US', timeZone: 'UTC', ...settings },
  });
  return String(liquid.parseAndRenderSync(source, scope));
}

function failure(source: string, scope: Record<string, unknown> = {}, settings: Partial<FormatSettings> = {}): string {
  try {
    render(source, scope, settings);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`rendered without an error: ${source}`);
}

// Intl puts narrow no-break spaces and bidi marks where each locale wants them; compare the
// visible characters.
const visible = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ').replace(/[\u061c\u200e\u200f]/g, '');

describe('money', () => {
  it.each([
    ['en-US', '€1,234.50'],
    ['de-DE', '1.234,50 €'],
    ['fr-FR', '1 234,50 €'],
    ['ja-JP', '€1,234.50'],
    ['ar-EG', '١٬٢٣٤٫٥٠ €'],
  ])('formats 1234.5 EUR in %s as %s', (locale, expected) => {
    expect(visible(render(`{{ 1234.5 | money: 'EUR' }}`, {}, { locale }))).toBe(expected);
  });

  it('takes the locale as a second argument, over the version setting', () => {
    expect(visible(render(`{{ 1234.5 | money: 'EUR', 'de-DE' }}`))).toBe('1.234,50 €');
    expect(visible(render(`{{ x | money: 'USD', 'en-US' }}`, { x: 99 }, { locale: 'de-DE' }))).toBe('$99.00');
  });

  it("uses each currency's own decimals, and a person's rounding on the decimal value", () => {
    expect(render(`{{ 1234.5 | money: 'JPY' }}`, {}, { locale: 'ja-JP' })).toBe('￥1,235');
    expect(render(`{{ 2.675 | money: 'USD' }}`)).toBe('$2.68');
    expect(render(`{{ a | plus: b | money: 'USD' }}`, { a: 0.1, b: 0.2 })).toBe('$0.30');
    expect(render(`{{ '1234.505' | money: 'EUR' }}`)).toBe('€1,234.51');
    // Amounts as strings (precise decimals from a client) are taken as written.
    expect(render(`{{ x | money: 'eur' }}`, { x: ' 10.1 ' })).toBe('€10.10');
  });

  it('prints negatives with a sign and never "-0"', () => {
    expect(render(`{{ -45 | money: 'EUR' }}`)).toBe('-€45.00');
    expect(render(`{{ x | money: 'EUR' }}`, { x: -0.001 })).toBe('€0.00');
  });

  it.each([
    [{ x: 'abc' }, 'money: `x` is "abc", not a number'],
    [{ x: null }, 'money: `x` is empty (nil), not a number'],
    [{}, 'money: `x` is empty (nil), not a number'],
    [{ x: true }, 'money: `x` is true, not a number'],
    [{ x: [1] }, 'money: `x` is a list of 1, not a number'],
    [{ x: '1,5' }, 'money: `x` is "1,5", not a number'],
    [{ x: 'NaN' }, 'money: `x` is "NaN", not a number'],
  ])('refuses %j, naming the variable and the line', (scope, message) => {
    const text = failure(`<p>\n  {{ x | money: 'EUR' }}</p>`, scope);
    expect(text).toContain(message);
    expect(text).toMatch(/line:2, col:3/);
    expect(text).not.toMatch(/NaN,|NaN$/);
  });

  it('names the expression a chain feeds it, and refuses unknown currencies and locales', () => {
    expect(failure(`{{ line.price | default: 'n/a' | money: 'EUR' }}`, { line: { price: null } })).toContain(
      'money: `line.price | default: \'n/a\'` is "n/a", not a number',
    );
    expect(failure(`{{ 1 | money: 'EUX' }}`)).toContain('"EUX" is not a currency code');
    expect(failure(`{{ 1 | money }}`)).toContain("money: needs the currency, e.g. money: 'EUR'");
    expect(failure(`{{ 1 | money: 'EUR', 'not a locale' }}`)).toContain('is not a locale');
    expect(failure(`{% assign t = x | money: 'EUR' %}`, { x: 'y' })).toContain('money: `x` is "y"');
  });
});

describe('number and percent', () => {
  it.each([
    ['en-US', '1,234,567.89', '19%', '12.5%'],
    ['de-DE', '1.234.567,89', '19 %', '12,5 %'],
    ['fr-FR', '1 234 567,89', '19 %', '12,5 %'],
    ['ja-JP', '1,234,567.89', '19%', '12.5%'],
    ['ar-EG', '١٬٢٣٤٬٥٦٧٫٨٩', '١٩٪', '١٢٫٥٪'],
  ])('in %s', (locale, grouped, percent, oneDecimal) => {
    const out = (s: string) => visible(render(s, { x: 1234567.891, r: 0.19, q: 0.125 }, { locale }));
    expect(out('{{ x | number: 2 }}')).toBe(grouped);
    expect(out('{{ r | percent }}')).toBe(percent);
    expect(out('{{ q | percent: 1 }}')).toBe(oneDecimal);
  });

  it('fixes the decimals it is given, and keeps up to three without', () => {
    expect(render('{{ 3 | number: 2 }}|{{ 3.14159 | number }}|{{ 12500 | number: 0 }}')).toBe('3.00|3.142|12,500');
    expect(failure('{{ 3 | number: 21 }}')).toContain('decimals must be a whole number from 0 to 20');
    expect(failure('{{ x | percent }}', { x: 'a lot' })).toContain('percent: `x` is "a lot", not a number');
    expect(failure('{{ x | number: 2 }}', { x: {} })).toContain('number: `x` is an object, not a number');
  });
});

describe('format_date', () => {
  it.each([
    ['en-US', 'November 21, 2026', '11/21/26'],
    ['de-DE', '21. November 2026', '21.11.26'],
    ['fr-FR', '21 novembre 2026', '21/11/2026'],
    ['ja-JP', '2026年11月21日', '2026/11/21'],
    ['ar-EG', '٢١ نوفمبر ٢٠٢٦', '٢١‏/١١‏/٢٠٢٦'],
  ])('writes a date in %s', (locale, long, short) => {
    expect(visible(render(`{{ d | format_date: 'long' }}`, { d: '2026-11-21' }, { locale }))).toBe(long);
    expect(visible(render(`{{ d | format_date: 'short' }}`, { d: '2026-11-21' }, { locale }))).toBe(visible(short));
  });

  it('shows an instant in the version time zone, and a date or a time without offset as written', () => {
    const at = { t: '2026-11-21T23:30:00Z', d: '2026-11-21', wall: '2026-11-21T23:30' };
    const s = `{{ t | format_date: dateStyle: 'medium', timeStyle: 'short' }}|{{ d | format_date: 'medium' }}|{{ wall | format_date: timeStyle: 'short' }}`;
    expect(visible(render(s, at, { timeZone: 'UTC' }))).toBe('Nov 21, 2026, 11:30 PM|Nov 21, 2026|11:30 PM');
    expect(visible(render(s, at, { timeZone: 'Europe/Berlin' }))).toBe('Nov 22, 2026, 12:30 AM|Nov 21, 2026|11:30 PM');
    expect(visible(render(s, at, { timeZone: 'America/New_York' }))).toBe(
      'Nov 21, 2026, 6:30 PM|Nov 21, 2026|11:30 PM',
    );
    expect(visible(render(s, at, { timeZone: 'Asia/Tokyo', locale: 'ja-JP' }))).toBe(
      '2026/11/22 8:30|2026/11/21|23:30',
    );
    // Offsets in the value, daylight saving in the zone.
    expect(
      visible(
        render(
          `{{ t | format_date: timeStyle: 'short' }}`,
          { t: '2026-07-01T12:00:00+02:00' },
          { timeZone: 'Europe/London' },
        ),
      ),
    ).toBe('11:00 AM');
  });

  it('takes named options, an options object, and Unix time in seconds', () => {
    expect(render(`{{ d | format_date: month: 'long', year: 'numeric' }}`, { d: '2026-10-01' })).toBe('October 2026');
    expect(render(`{{ d | format_date: o }}`, { d: '2026-10-01', o: { weekday: 'long' } }, { locale: 'de-DE' })).toBe(
      'Donnerstag',
    );
    expect(render(`{{ 0 | format_date: 'long' }}`)).toBe('January 1, 1970');
    expect(render(`{{ d | format_date: 'long', timeZone: 'Asia/Tokyo' }}`, { d: '2026-01-01T20:00:00Z' })).toBe(
      'January 2, 2026',
    );
  });

  it.each([
    [{ d: '21.11.2026' }, 'format_date: `d` is "21.11.2026", not a date'],
    [{ d: '2026-02-30' }, 'format_date: `d` is "2026-02-30", not a date'],
    [{ d: '2026-11-21T25:00:00Z' }, 'not a date'],
    [{ d: null }, 'format_date: `d` is empty (nil), not a date'],
    [{ d: 'yesterday' }, 'not a date'],
  ])('refuses %j', (scope, message) => {
    const text = failure(`\n\n{{ d | format_date: 'long' }}`, scope);
    expect(text).toContain(message);
    expect(text).toContain('line:3');
  });

  it('refuses unknown styles and options, naming what it takes', () => {
    expect(failure(`{{ '2026-01-01' | format_date: 'huge' }}`)).toContain('"huge" is not a style');
    expect(failure(`{{ '2026-01-01' | format_date: colour: 'red' }}`)).toContain('unknown option "colour"');
    expect(failure(`{{ '2026-01-01' | format_date: month: 'sometimes' }}`)).toMatch(/format_date: .*month/i);
  });
});
