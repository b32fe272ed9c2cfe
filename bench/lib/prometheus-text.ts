// Reads histogram totals (_sum, _count) out of Prometheus text exposition, to turn docgen's own
// stage histograms into mean times per stage for one benchmark cell (difference of two scrapes).

export type HistogramTotals = Map<string, { sum: number; count: number }>;

/**
 * Totals keyed by `name{label="value",...}` with only the labels that matter kept, sorted:
 * method, route, outcome, stage. Series that differ in other labels (role, le) are summed.
 */
export function histogramTotals(text: string): HistogramTotals {
  const totals: HistogramTotals = new Map();
  const kept = new Set(['method', 'route', 'outcome', 'stage']);
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)_(sum|count)(?:\{(.*)\})? ([^ ]+)/.exec(line);
    if (!m) continue;
    const labels = [...(m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)]
      .filter((l) => kept.has(l[1]!))
      .map((l) => `${l[1]}="${l[2]}"`)
      .sort();
    const key = `${m[1]}${labels.length ? `{${labels.join(',')}}` : ''}`;
    const value = Number(m[4]);
    if (!Number.isFinite(value)) continue;
    const entry = totals.get(key) ?? { sum: 0, count: 0 };
    entry[m[2] as 'sum' | 'count'] += value;
    totals.set(key, entry);
  }
  return totals;
}
