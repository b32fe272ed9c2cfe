// The benchmark's plumbing that tools rely on: its options, and the stage means it reads out of
// docgen's Prometheus text.
import { describe, expect, it } from 'vitest';
import { parseBenchOptions } from '../../bench/lib/report.ts';
import { histogramTotals } from '../../bench/lib/prometheus-text.ts';

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
    ].join('\n');
    const totals = histogramTotals(text);
    expect(totals.get('docgen_render_duration_seconds{outcome="completed"}')).toEqual({ sum: 2, count: 4 });
    expect(totals.get('docgen_http_request_duration_seconds{method="POST",route="/v1/generations"}')).toEqual({ sum: 0.03, count: 3 });
  });
});
