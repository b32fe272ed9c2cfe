// The benchmark's plumbing that tools rely on: its options, and the stage means it reads out of
// docgen's Prometheus text.
import { describe, expect, it } from 'vitest';
import { parseBenchOptions } from '../../bench/lib/report.ts';
import { histogramTotals } from '../../bench/lib/prometheus-text.ts';
import { readmeTables, type BenchResult } from '../../bench/lib/readme-table.ts';
import type { BenchRow } from '../../bench/lib/report.ts';

describe('bench options', () => {
  it('defaults to every concurrency, --quick to fewer, --concurrency overrides both', () => {
    expect(parseBenchOptions([], {})).toEqual({ json: false, quick: false, concurrencies: [1, 4, 16] });
    expect(parseBenchOptions(['--json', '--quick'], {})).toEqual({ json: true, quick: true, concurrencies: [1, 4] });
    expect(parseBenchOptions(['--quick', '--concurrency=16'], {}).concurrencies).toEqual([16]);
  });

  it('refuses an unknown option or a bad concurrency in words', () => {
    expect(() => parseBenchOptions(['--jsn'], {})).toThrow(/unknown option --jsn/);
    expect(() => parseBenchOptions(['--concurrency=0,x'], {})).toThrow(/positive integers/);
  });
});

describe('histogramTotals', () => {
  it('sums series that differ only in ignored labels and keys by the kept ones', () => {
    const text = [
      '# TYPE docgen_render_duration_seconds histogram',
      'docgen_render_duration_seconds_bucket{le="0.1",outcome="completed",role="all"} 1',
      'docgen_render_duration_seconds_sum{outcome="completed",role="all"} 0.5',
      'docgen_render_duration_seconds_count{outcome="completed",role="all"} 2',
      'docgen_render_duration_seconds_sum{outcome="completed",role="render"} 1.5',
      'docgen_render_duration_seconds_count{outcome="completed",role="render"} 2',
      'docgen_http_request_duration_seconds_sum{route="/v1/generations",method="POST",code="201"} 0.03',
      'docgen_http_request_duration_seconds_count{route="/v1/generations",method="POST",code="201"} 3',
      'docgen_render_stage_duration_seconds_sum{role="render",stage="print"} 0.4',
      'docgen_render_stage_duration_seconds_count{role="render",stage="print"} 5',
    ].join('\n');
    const totals = histogramTotals(text);
    expect(totals.get('docgen_render_duration_seconds{outcome="completed"}')).toEqual({ sum: 2, count: 4 });
    expect(totals.get('docgen_http_request_duration_seconds{method="POST",route="/v1/generations"}')).toEqual({
      sum: 0.03,
      count: 3,
    });
    expect(totals.get('docgen_render_stage_duration_seconds{stage="print"}')).toEqual({ sum: 0.4, count: 5 });
  });
});

describe('readmeTables', () => {
  const row = (
    variant: string,
    concurrency: number,
    pdfPerSecond: number,
    extra: Partial<BenchRow> = {},
  ): BenchRow => ({
    variant,
    concurrency,
    pdfPerSecond,
    p50Ms: 1000 / pdfPerSecond,
    p95Ms: 2000 / pdfPerSecond,
    peakRssMb: 1000,
    completed: 10,
    errors: 0,
    errorMessage: null,
    ...extra,
  });
  const run = (e2e: number): BenchResult => ({
    benchmark: 'render',
    startedAt: '2026-11-23T00:00:00Z',
    quick: false,
    concurrencies: [1, 4],
    machine: { cpus: 2, node: 'v24', browserPages: 4 },
    rows: [
      row('(a) bare puppeteer, reused page', 1, 10),
      row('(a) bare puppeteer, reused page', 4, 20),
      row('(b) puppeteer-cluster CONTEXT', 1, 2),
      // A baseline that failed keeps its row but has no figures.
      {
        ...row('(b) puppeteer-cluster CONTEXT', 4, 0),
        completed: 0,
        errors: 3,
        errorMessage: 'Unable to get browser page',
      },
      row("(e) bare puppeteer, docgen's Chromium", 1, 20),
      row("(e) bare puppeteer, docgen's Chromium", 4, 40),
      row('(c) docgen engine (4 pages)', 1, 11),
      row('(c) docgen engine (4 pages)', 4, 21),
      row('docgen end to end', 1, e2e, { stagesMs: { print: 40, upload: 2 } }),
      row('docgen end to end', 4, e2e * 2),
      row('docgen end to end, 20 pages x 25 rows', 1, 2, { pages: 20, rowsPerPage: 25, msPerPage: 25 }),
    ],
  });

  it("shows medians over the runs, every run's ratios, stages and growth; a failed cell is a dash", () => {
    const text = readmeTables([run(12), run(8), run(10)]);
    expect(text).toContain('| **docgen end to end** | 1 / 4 | 10.0 / 20.0 | 100 / 50 | 200 / 100 | 1000 / 1000 MB |');
    expect(text).toContain('| (b) puppeteer-cluster | 1 / 4 | 2.0 / - |');
    expect(text).toContain('| end to end ÷ (a) | 1.20, 0.80, 1.00 | 1.20, 0.80, 1.00 |');
    expect(text).toContain('| end to end ÷ (b) | 6.0, 4.0, 5.0 | -, -, - |');
    expect(text).toContain('| median of the runs | 40.0 | 2.0 |');
    expect(text).toContain('| docgen end to end, 20 pages x 25 rows | 20 | 25 | 500 | 25.0 |');
    expect(text).toContain("| (e) bare puppeteer on docgen's Chromium | 1 / 4 | 20.0 / 40.0 |");
    expect(text).toContain('| end to end ÷ (e) | 0.60, 0.40, 0.50 | 0.60, 0.40, 0.50 |');
  });

  it('leaves (e) out when no run has it (docgen and the baselines on one Chromium)', () => {
    const withoutE = (e2e: number): BenchResult => ({
      ...run(e2e),
      rows: run(e2e).rows.filter((r) => !r.variant.startsWith('(e)')),
    });
    const text = readmeTables([withoutE(12), withoutE(8)]);
    expect(text).not.toContain('(e)');
    expect(text).toContain('| end to end ÷ (a) | 1.20, 0.80 | 1.20, 0.80 |');
  });
});
