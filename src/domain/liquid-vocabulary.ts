// The Liquid filters docgen adds to the standard ones (docs/templates.md), each with how it is
// called and what it does: the one home of their names. The engine registers exactly these
// (src/render/liquid/filters/authoring-filters.ts refuses to start on a mismatch) and the
// portal's editor offers them as completions. Browser-safe: plain data.

export interface FilterSummary {
  /** How it is called, e.g. `money: 'EUR'`. */
  usage: string;
  /** What it does, in a sentence. */
  summary: string;
}

/** The formatting, code and chart filters (docs/templates.md#money-numbers-and-dates and on). */
export const AUTHORING_FILTERS = {
  money: { usage: "money: 'EUR'", summary: "An amount in a currency, in the version's locale (€1,234.50)." },
  number: { usage: 'number: 2', summary: "A number with fixed decimals and the locale's grouping." },
  percent: { usage: 'percent', summary: 'A fraction as a percentage (0.19 → 19%).' },
  format_date: {
    usage: "format_date: 'long'",
    summary: "A date in the version's locale and time zone: short, medium, long, full or options.",
  },
  qr_code: { usage: "qr_code: ec: 'M', size: '30mm'", summary: 'A QR code of the text, as inline SVG.' },
  barcode: {
    usage: "barcode: 'code128'",
    summary: 'A barcode (code128, ean13, upca, code39, itf14, datamatrix, pdf417…).',
  },
  epc_qr: {
    usage: 'epc_qr: amount: total, reference: number',
    summary: 'A SEPA credit-transfer QR code (GiroCode) from name, IBAN, BIC, amount and reference.',
  },
  chart: {
    usage: "chart: 'bar', x: 'month', y: 'revenue'",
    summary: 'A bar, line, pie or stacked_bar chart of a list of rows, as SVG.',
  },
} as const satisfies Record<string, FilterSummary>;

export type AuthoringFilterName = keyof typeof AUTHORING_FILTERS;

/** docgen's filters beyond the standard Liquid ones: the authoring filters and workspace assets. */
export const DOCGEN_FILTERS: Record<AuthoringFilterName | 'asset_url', FilterSummary> = {
  ...AUTHORING_FILTERS,
  asset_url: { usage: 'asset_url', summary: "The URL of a workspace asset by name ('logo.png' | asset_url)." },
};
