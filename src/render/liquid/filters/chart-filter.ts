// The chart filter (docs/templates.md#charts): bar, line, pie and stacked bar charts from a list
// of rows, drawn as SVG by Apache ECharts' server-side renderer while Liquid renders, inside the
// Liquid worker's CPU and memory bounds. Text stays text (pdftotext finds the labels) in the
// document's font (font-family: inherit); numbers on the value axis follow the version's locale.
// ECharts (its prebuilt "common" bundle: one file, ~80 ms to load) loads on the first chart.

import { createRequire } from 'node:module';
import type { FormatSettings } from './format-filters.ts';
import {
  FilterError,
  filteredExpression,
  onlyKnown,
  plain,
  shown,
  splitArguments,
  type FilterThis,
} from './filter-input.ts';
import { escapeHtml, SafeHtml } from '../safe-html.ts';
import { RecentResults } from './recent-results.ts';

const require = createRequire(import.meta.url);

interface EChartsInstance {
  setOption(option: Record<string, unknown>): void;
  renderToSVGString(): string;
  dispose(): void;
}
interface ECharts {
  init(dom: null, theme: null, options: { renderer: 'svg'; ssr: true; width: number; height: number }): EChartsInstance;
}

let library: ECharts | undefined;
/** Charts drawn lately in this process (a preview draws the same ones at every keystroke). */
const recent = new RecentResults(4 * 1024 * 1024);

function echarts(): ECharts {
  return (library ??= require('echarts/dist/echarts.common.min.js') as ECharts);
}

export const CHART_TYPES = ['bar', 'line', 'pie', 'stacked_bar'] as const;
type ChartType = (typeof CHART_TYPES)[number];

const OPTIONS = [
  'x',
  'y',
  'names',
  'title',
  'x_title',
  'y_title',
  'width',
  'height',
  'colors',
  'labels',
  'legend',
] as const;

/** Rows and series a chart may have: far more than a page shows, far less than the time budget. */
export const MAX_CHART_ROWS = 1000;
const MAX_SERIES = 20;

function list(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  return String(value)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function sizeOf(name: string, value: unknown, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 2000) return value;
  throw new FilterError(`chart: ${name} is in CSS pixels, a whole number from 100 to 2000; got ${shown(value)}`);
}

function textOption(name: string, value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  throw new FilterError(`chart: ${name} must be text, got ${shown(value)}`);
}

interface ChartSpec {
  type: ChartType;
  rows: Record<string, unknown>[];
  x: string;
  y: string[];
  names: string[];
  what: string;
}

function valueAt(spec: ChartSpec, row: number, field: string): number | null {
  const raw = plain(spec.rows[row]![field]);
  if (raw === undefined || raw === null || raw === '') return null; // a gap
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim()) : NaN;
  if (!Number.isFinite(n)) throw new FilterError(`chart: ${spec.what}[${row}].${field} is ${shown(raw)}, not a number`);
  return n;
}

function labelAt(spec: ChartSpec, row: number): string {
  const raw = plain(spec.rows[row]![spec.x]);
  if (raw === undefined || raw === null)
    throw new FilterError(`chart: ${spec.what}[${row}] has no "${spec.x}" (the x option names it)`);
  return typeof raw === 'object' ? JSON.stringify(raw) : String(raw);
}

function specOf(self: FilterThis, value: unknown, positional: unknown[], named: Map<string, unknown>): ChartSpec {
  const what = filteredExpression(self);
  const type = positional[0];
  if (typeof type !== 'string' || !(CHART_TYPES as readonly string[]).includes(type))
    throw new FilterError(
      `chart: ${type === undefined ? 'needs a chart type' : `${shown(type)} is not a chart type`}; use ${CHART_TYPES.map((t) => `'${t}'`).join(', ')}`,
    );
  if (positional.length > 1) throw new FilterError(`chart: takes the type, then named options (${OPTIONS.join(', ')})`);
  const data = plain(value);
  if (!Array.isArray(data) || data.length === 0)
    throw new FilterError(
      `chart: ${what} is ${shown(data)}; it needs a non-empty list of rows such as [{"month": "Jan", "revenue": 120}]`,
    );
  if (data.length > MAX_CHART_ROWS)
    throw new FilterError(`chart: ${what} has ${data.length} rows; at most ${MAX_CHART_ROWS}`);
  const rows = data.map((row, i) => {
    const r = plain(row);
    if (r === null || typeof r !== 'object' || Array.isArray(r))
      throw new FilterError(`chart: ${what}[${i}] is ${shown(r)}, not a row (an object)`);
    return r as Record<string, unknown>;
  });
  const x = textOption('x', named.get('x'));
  const y = list(named.get('y'));
  if (x === '')
    throw new FilterError(
      `chart: needs x, the field with the ${type === 'pie' ? 'slice labels' : 'categories'} (e.g. x: 'month')`,
    );
  if (y.length === 0)
    throw new FilterError(
      `chart: needs y, the field with the values (e.g. y: 'revenue', or y: 'online, retail' for several series)`,
    );
  if (y.length > MAX_SERIES) throw new FilterError(`chart: at most ${MAX_SERIES} series`);
  if (type === 'pie' && y.length > 1) throw new FilterError(`chart: a pie has one value field (y), got ${y.length}`);
  const names = list(named.get('names'));
  if (names.length > 0 && names.length !== y.length)
    throw new FilterError(`chart: names gives ${names.length} series names for ${y.length} fields in y`);
  return { type: type as ChartType, rows, x, y, names: names.length > 0 ? names : y, what };
}

function colorsOf(value: unknown): string[] | undefined {
  const colors = list(value);
  for (const c of colors) {
    if (!/^(#[0-9a-fA-F]{3,8}|[a-z]{3,20}|rgba?\([\d\s.,%]+\))$/.test(c))
      throw new FilterError(`chart: colors: ${shown(c)} is not a colour (use e.g. '#0b6e4f' or 'teal')`);
  }
  return colors.length > 0 ? colors : undefined;
}

function optionFor(spec: ChartSpec, named: Map<string, unknown>, settings: FormatSettings): Record<string, unknown> {
  const numbers = new Intl.NumberFormat(settings.locale, { maximumFractionDigits: 2 });
  const shares = new Intl.NumberFormat(settings.locale, { style: 'percent', maximumFractionDigits: 1 });
  const showLabels = named.get('labels') === true;
  // A pie's labels name its slices; several series need a legend to tell them apart.
  const legendWanted = named.get('legend') ?? (spec.type !== 'pie' && spec.y.length > 1);
  const title = textOption('title', named.get('title'));
  const categories = spec.rows.map((_, i) => labelAt(spec, i));
  const top = title === '' ? 16 : 44;
  const bottom = legendWanted ? 56 : 36;
  const option: Record<string, unknown> = {
    animation: false,
    // The document's font, whatever it is; ECharts writes font-family into every text element.
    textStyle: { fontFamily: 'inherit' },
    title:
      title === ''
        ? undefined
        : { text: title, left: 'center', top: 4, textStyle: { fontSize: 15, fontWeight: 'bold' } },
    legend: legendWanted ? { bottom: 4, selectedMode: false } : undefined,
  };
  // Only when given: an undefined palette would replace ECharts' own with nothing.
  const colors = colorsOf(named.get('colors'));
  if (colors) option.color = colors;
  if (spec.type === 'pie') {
    option.series = [
      {
        type: 'pie',
        name: spec.names[0],
        radius: '50%',
        center: ['50%', title === '' ? '50%' : '55%'],
        data: spec.rows.map((_, i) => ({ name: categories[i], value: valueAt(spec, i, spec.y[0]!) })),
        label: {
          formatter: (p: { name: string; percent: number }) =>
            showLabels ? `${p.name}\n${shares.format(p.percent / 100)}` : p.name,
          overflow: 'none',
        },
        silent: true,
      },
    ];
    return option;
  }
  const xTitle = textOption('x_title', named.get('x_title'));
  const yTitle = textOption('y_title', named.get('y_title'));
  option.grid = {
    left: yTitle === '' ? 16 : 40,
    right: 24,
    top,
    bottom: bottom + (xTitle === '' ? 0 : 20),
    containLabel: true,
  };
  option.xAxis = {
    type: 'category',
    data: categories,
    name: xTitle || undefined,
    nameLocation: 'middle',
    nameGap: 30,
    axisLabel: { interval: 0, hideOverlap: true },
  };
  option.yAxis = {
    type: 'value',
    name: yTitle || undefined,
    nameLocation: 'middle',
    nameGap: 50,
    axisLabel: { formatter: (v: number) => numbers.format(v) },
  };
  option.series = spec.y.map((field, s) => ({
    type: spec.type === 'line' ? 'line' : 'bar',
    name: spec.names[s],
    stack: spec.type === 'stacked_bar' ? 'total' : undefined,
    data: spec.rows.map((_, i) => valueAt(spec, i, field)),
    label: showLabels
      ? {
          show: true,
          position: spec.type === 'stacked_bar' ? 'inside' : 'top',
          formatter: (p: { value: number }) => numbers.format(p.value),
        }
      : undefined,
    silent: true,
  }));
  return option;
}

/**
 * `{{ sales | chart: 'bar', x: 'month', y: 'revenue', title: 'Revenue', x_title: 'Month', y_title: 'EUR' }}`.
 * Named options: x (category or slice label field), y (value field; several, comma-separated,
 * make several series), names (series names), title, x_title, y_title, width/height (CSS px,
 * default 640 x 320), colors, labels (values on the bars/slices), legend.
 */
export function chart(settings: FormatSettings) {
  return function (this: FilterThis, value: unknown, ...args: unknown[]): SafeHtml {
    const { positional, named } = splitArguments(args);
    onlyKnown('chart', named, OPTIONS);
    const spec = specOf(this, value, positional, named);
    const width = sizeOf('width', named.get('width'), 640);
    const height = sizeOf('height', named.get('height'), 320);
    const option = optionFor(spec, named, settings);
    // Everything the drawing depends on: the rows' fields in use, the options, the locale.
    const key = JSON.stringify([
      spec.type,
      spec.rows.map((row) => [plain(row[spec.x]), ...spec.y.map((field) => plain(row[field]))]),
      [...named.entries()],
      settings.locale,
    ]);
    const svg = recent.get(key, () => draw(spec, option, width, height, named));
    return new SafeHtml(svg);
  };
}

function draw(
  spec: ChartSpec,
  option: Record<string, unknown>,
  width: number,
  height: number,
  named: Map<string, unknown>,
): string {
  const instance = echarts().init(null, null, { renderer: 'svg', ssr: true, width, height });
  let drawn: string;
  try {
    instance.setOption(option);
    drawn = instance.renderToSVGString();
  } catch (err) {
    throw new FilterError(`chart: cannot draw ${spec.what} (${(err as Error).message})`);
  } finally {
    instance.dispose();
  }
  // Hover styles mean nothing on paper; the size scales down to the column it is in.
  const title = escapeHtml(textOption('title', named.get('title')) || 'Chart');
  return drawn
    .replace(/<style[\s\S]*?<\/style>/g, '')
    .replace(
      /^<svg width="\d+" height="\d+"/,
      `<svg class="docgen-chart" width="${width}" height="${height}" style="max-width:100%;height:auto;overflow:visible" role="img" aria-label="${title}"`,
    );
}
