// money, number, percent and format_date (docs/templates.md#money-numbers-and-dates): Node's Intl
// in the version's locale and time zone. A value a filter cannot format is an error naming the
// expression (the line comes from liquidjs); nothing here ever prints NaN.

import { canonicalLocale } from '../../../domain/locale-settings.ts';
import {
  FilterError,
  filteredExpression,
  onlyKnown,
  plain,
  shown,
  splitArguments,
  type FilterThis,
} from './filter-input.ts';

/** The version's settings, set by the worker before each render (renders run one at a time). */
export interface FormatSettings {
  locale: string;
  timeZone: string;
}

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The amount as a decimal string Intl formats exactly. Numbers go through 15 significant digits,
 * which drops binary noise (0.1 + 0.2, 2.675 stored as 2.67499…) so that rounding is the one a
 * person does on the decimal value; strings of digits are taken as written.
 */
function decimalOf(filter: string, self: FilterThis | undefined, input: unknown): string {
  const value = plain(input);
  if (typeof value === 'number' && Number.isFinite(value)) return value.toPrecision(15);
  if (typeof value === 'string' && DECIMAL.test(value.trim())) return value.trim();
  throw new FilterError(`${filter}: ${filteredExpression(self)} is ${shown(value)}, not a number`);
}

function localeOf(filter: string, settings: FormatSettings, value: unknown): string {
  if (value === undefined || value === null || value === '') return settings.locale;
  const locale = typeof value === 'string' ? canonicalLocale(value) : undefined;
  if (!locale)
    throw new FilterError(`${filter}: ${shown(value)} is not a locale; use a BCP 47 tag such as 'de-DE' or 'fr-CH'`);
  return locale;
}

function decimalsOf(filter: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 20) return value;
  throw new FilterError(`${filter}: decimals must be a whole number from 0 to 20, got ${shown(value)}`);
}

/** Formatters are costly to build and a render uses few: kept per process, bounded. */
const formatters = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();

function cached<T extends Intl.NumberFormat | Intl.DateTimeFormat>(key: string, make: () => T): T {
  let f = formatters.get(key) as T | undefined;
  if (!f) {
    f = make();
    if (formatters.size >= 500) formatters.clear();
    formatters.set(key, f);
  }
  return f;
}

function numberFormat(locale: string, options: Intl.NumberFormatOptions): Intl.NumberFormat {
  // The options these filters use, spelled out: this runs for every amount of a document.
  const o = options;
  const key = `n|${locale}|${o.style ?? ''}|${o.currency ?? ''}|${o.minimumFractionDigits ?? ''}|${o.maximumFractionDigits ?? ''}`;
  // 'negative': no minus sign on a zero (-0, or an amount that rounds to zero).
  return cached(key, () => new Intl.NumberFormat(locale, { signDisplay: 'negative', ...options }));
}

let currencies: Set<string> | undefined;

function currencyOf(value: unknown): string {
  currencies ??= new Set(Intl.supportedValuesOf('currency'));
  const code = typeof value === 'string' ? value.trim().toUpperCase() : '';
  if (code === '' && (value === undefined || value === null))
    throw new FilterError(`money: needs the currency, e.g. money: 'EUR'`);
  if (!currencies.has(code))
    throw new FilterError(`money: ${shown(value)} is not a currency code; use ISO 4217, e.g. 'EUR', 'USD', 'JPY'`);
  return code;
}

/** `{{ amount | money: 'EUR' }}`, `{{ amount | money: 'EUR', 'de-DE' }}`. */
export function money(settings: FormatSettings) {
  return function (this: FilterThis, value: unknown, currency?: unknown, locale?: unknown): string {
    const amount = decimalOf('money', this, value);
    const format = numberFormat(localeOf('money', settings, plain(locale)), {
      style: 'currency',
      currency: currencyOf(plain(currency)),
    });
    // Intl.NumberFormat formats decimal strings exactly (ECMA-402's Intl.NumberFormat v3).
    return format.format(amount as unknown as number);
  };
}

/** `{{ x | number }}`, `{{ x | number: 2 }}` (fixed decimals), `{{ x | number: 2, 'de-DE' }}`. */
export function number(settings: FormatSettings) {
  return function (this: FilterThis, value: unknown, decimals?: unknown, locale?: unknown): string {
    const amount = decimalOf('number', this, value);
    const d = decimalsOf('number', plain(decimals));
    const options: Intl.NumberFormatOptions =
      d === undefined ? {} : { minimumFractionDigits: d, maximumFractionDigits: d };
    return numberFormat(localeOf('number', settings, plain(locale)), options).format(amount as unknown as number);
  };
}

/** `{{ 0.19 | percent }}` (19 %), `{{ rate | percent: 1 }}` (one decimal). */
export function percent(settings: FormatSettings) {
  return function (this: FilterThis, value: unknown, decimals?: unknown, locale?: unknown): string {
    const amount = decimalOf('percent', this, value);
    const d = decimalsOf('percent', plain(decimals)) ?? 0;
    return numberFormat(localeOf('percent', settings, plain(locale)), {
      style: 'percent',
      minimumFractionDigits: d,
      maximumFractionDigits: d,
    }).format(amount as unknown as number);
  };
}

const DATE_STYLES = ['short', 'medium', 'long', 'full'] as const;
const DATE_OPTIONS = [
  'dateStyle',
  'timeStyle',
  'weekday',
  'era',
  'year',
  'month',
  'day',
  'hour',
  'minute',
  'second',
  'fractionalSecondDigits',
  'timeZoneName',
  'hour12',
  'hourCycle',
  'dayPeriod',
  'timeZone',
  'locale',
] as const;

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** A point in time, and whether it is one (an offset or Unix time) or a calendar date / wall-clock time. */
interface When {
  date: Date;
  /** false: a date or a time without offset, shown as written whatever the time zone. */
  instant: boolean;
}

function validParts(y: string, m: string, d: string, date: Date): boolean {
  // JavaScript rolls 2026-02-30 over into March: refuse instead.
  return date.getUTCFullYear() === Number(y) && date.getUTCMonth() + 1 === Number(m) && date.getUTCDate() === Number(d);
}

function whenOf(self: FilterThis | undefined, input: unknown): When {
  const value = plain(input);
  if (value instanceof Date && !Number.isNaN(value.getTime())) return { date: value, instant: true };
  if (typeof value === 'number' && Number.isFinite(value)) {
    // Unix time in seconds, as Liquid's date filter takes it.
    const date = new Date(value * 1000);
    if (!Number.isNaN(date.getTime())) return { date, instant: true };
  }
  if (typeof value === 'string') {
    const text = value.trim();
    if (text === 'now' || text === 'today') return { date: new Date(), instant: true };
    const day = DATE_ONLY.exec(text);
    if (day) {
      const date = new Date(`${text}T00:00:00Z`);
      if (validParts(day[1]!, day[2]!, day[3]!, date)) return { date, instant: false };
    }
    const at = DATE_TIME.exec(text);
    if (at) {
      const [, y, m, d, hh, mm, ss = '00', frac = '', offset] = at;
      const fraction = frac === '' ? '' : `.${frac.padEnd(3, '0').slice(0, 3)}`;
      const zone =
        offset === undefined
          ? 'Z'
          : offset.toUpperCase() === 'Z'
            ? 'Z'
            : offset.replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
      const date = new Date(`${y}-${m}-${d}T${hh}:${mm}:${ss}${fraction}${zone}`);
      const wall = new Date(`${y}-${m}-${d}T00:00:00Z`);
      if (
        !Number.isNaN(date.getTime()) &&
        validParts(y!, m!, d!, wall) &&
        Number(hh) < 24 &&
        Number(mm) < 60 &&
        Number(ss) < 60
      )
        return { date, instant: offset !== undefined };
    }
  }
  throw new FilterError(
    `format_date: ${filteredExpression(self)} is ${shown(value)}, not a date; use ISO 8601 such as "2026-11-21" or "2026-11-21T14:30:00Z", or Unix time in seconds`,
  );
}

function dateOptions(args: unknown[]): Record<string, unknown> {
  const { positional, named } = splitArguments(args);
  const options: Record<string, unknown> = {};
  const [first, ...rest] = positional;
  if (rest.length > 0)
    throw new FilterError(`format_date: takes one style ('short', 'medium', 'long', 'full') or named options`);
  if (typeof first === 'string') {
    if (!(DATE_STYLES as readonly string[]).includes(first))
      throw new FilterError(
        `format_date: ${shown(first)} is not a style; use 'short', 'medium', 'long' or 'full', or options such as month: 'long', year: 'numeric'`,
      );
    options.dateStyle = first;
  } else if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
    Object.assign(options, first);
  } else if (first !== undefined && first !== null) {
    throw new FilterError(`format_date: ${shown(first)} is not a style or an options object`);
  }
  for (const [name, value] of named) options[name] = value;
  onlyKnown('format_date', new Map(Object.entries(options)), DATE_OPTIONS);
  if (Object.keys(options).every((k) => k === 'locale' || k === 'timeZone')) options.dateStyle = 'medium';
  return options;
}

/**
 * `{{ d | format_date: 'long' }}`, `{{ d | format_date: month: 'long', year: 'numeric' }}` or an
 * options object: Intl.DateTimeFormat in the version's locale and time zone (an instant) or as
 * written (a date, a time without offset).
 */
export function formatDate(settings: FormatSettings) {
  return function (this: FilterThis, value: unknown, ...args: unknown[]): string {
    const when = whenOf(this, value);
    const { locale: localeOption, timeZone: zoneOption, ...options } = dateOptions(args);
    const locale = localeOf('format_date', settings, localeOption);
    let timeZone = settings.timeZone;
    if (zoneOption !== undefined) {
      if (typeof zoneOption !== 'string') throw new FilterError(`format_date: timeZone must be a time zone name`);
      timeZone = zoneOption;
    }
    const all = { ...options, timeZone: when.instant ? timeZone : 'UTC' } as Intl.DateTimeFormatOptions;
    let format: Intl.DateTimeFormat;
    try {
      format = cached(`d|${locale}|${JSON.stringify(all)}`, () => new Intl.DateTimeFormat(locale, all));
    } catch (err) {
      throw new FilterError(`format_date: ${(err as Error).message}`);
    }
    return format.format(when.date);
  };
}

/** The formatting filters by name. */
export function formatFilters(settings: FormatSettings): Record<string, (...args: never[]) => unknown> {
  return {
    money: money(settings),
    number: number(settings),
    percent: percent(settings),
    format_date: formatDate(settings),
  };
}
