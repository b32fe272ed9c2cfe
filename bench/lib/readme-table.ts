// README's performance tables, made from the JSON of one or more `npm run -s bench -- --json`
// runs (bench/readme-table.ts): figures are the median over the runs, ratios are listed per run.
import type { BenchRow } from './report.ts';

export interface BenchResult {
  benchmark: string;
  startedAt: string;
  quick: boolean;
  concurrencies: number[];
  machine: { cpus: number; node: string; browserPages: number };
  rows: BenchRow[];
}

/** The variants of README's table, in its order: the label there and the row name's start. */
const VARIANTS: Array<[label: string, prefix: string]> = [
  ['(a) bare puppeteer', '(a)'],
  ['(b) puppeteer-cluster', '(b)'],
  ["(e) bare puppeteer on docgen's Chromium", '(e)'],
  ['docgen engine only', '(c)'],
  ['**docgen end to end**', 'docgen end to end'],
];

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The throughput row of a variant at a concurrency (not a growth row), if it completed anything. */
function rowOf(run: BenchResult, prefix: string, concurrency: number): BenchRow | undefined {
  return run.rows.find(
    (r) =>
      r.pages === undefined &&
      r.concurrency === concurrency &&
      r.completed > 0 &&
      (r.variant === prefix || r.variant.startsWith(`${prefix} `)),
  );
}

const fixed = (n: number | null, digits: number) => (n === null ? '-' : n.toFixed(digits));

export function readmeTables(runs: readonly BenchResult[]): string {
  if (runs.length === 0) throw new Error('no benchmark runs given');
  const concurrencies = runs[0]!.concurrencies;
  const across = (prefix: string, pick: (r: BenchRow) => number | null) =>
    concurrencies.map((c) =>
      median(
        runs
          .map((run) => rowOf(run, prefix, c))
          .filter((r): r is BenchRow => r !== undefined)
          .map(pick)
          .filter((v): v is number => v !== null),
      ),
    );
  const lines = [
    '| variant | concurrency | PDF/s | p50 ms | p95 ms | Chromium peak RSS |',
    '|---|---|---|---|---|---|',
  ];
  // (e) exists only in runs where docgen's Chromium differs from the baselines'.
  const measured = (prefix: string) =>
    runs.some((run) => concurrencies.some((c) => rowOf(run, prefix, c) !== undefined));
  for (const [label, prefix] of VARIANTS.filter(([, prefix]) => prefix !== '(e)' || measured(prefix))) {
    const join = (values: Array<number | null>, digits: number) => values.map((v) => fixed(v, digits)).join(' / ');
    lines.push(
      `| ${label} | ${concurrencies.join(' / ')} | ${join(
        across(prefix, (r) => r.pdfPerSecond),
        1,
      )} | ${join(
        across(prefix, (r) => r.p50Ms),
        0,
      )} | ` +
        `${join(
          across(prefix, (r) => r.p95Ms),
          0,
        )} | ${join(
          across(prefix, (r) => r.peakRssMb),
          0,
        )} MB |`,
    );
  }
  lines.push(
    '',
    `| PDF/s ratio, each run | ${concurrencies.map((c) => `conc. ${c}`).join(' | ')} |`,
    `|---|${concurrencies.map(() => '---').join('|')}|`,
  );
  const ratio = (label: string, top: string, bottom: string, digits: number) => {
    if (bottom === '(e)' && !measured(bottom)) return;
    const cells = concurrencies.map((c) =>
      runs
        .map((run) => {
          const t = rowOf(run, top, c)?.pdfPerSecond;
          const b = rowOf(run, bottom, c)?.pdfPerSecond;
          return t !== undefined && b !== undefined && b > 0 ? (t / b).toFixed(digits) : '-';
        })
        .join(', '),
    );
    lines.push(`| ${label} | ${cells.join(' | ')} |`);
  };
  ratio('end to end ÷ (a)', 'docgen end to end', '(a)', 2);
  ratio('end to end ÷ (b)', 'docgen end to end', '(b)', 1);
  ratio('engine ÷ (a)', '(c)', '(a)', 2);
  ratio('end to end ÷ (e)', 'docgen end to end', '(e)', 2);
  ratio('engine ÷ (e)', '(c)', '(e)', 2);
  const stages = runs
    .map((run) => rowOf(run, 'docgen end to end', concurrencies[0]!)?.stagesMs)
    .filter((s): s is Record<string, number> => s !== undefined);
  const names = [...new Set(stages.flatMap((s) => Object.keys(s)))];
  if (names.length > 0) {
    lines.push(
      '',
      `| end to end, conc. ${concurrencies[0]}, mean ms per PDF | ${names.join(' | ')} |`,
      `|---|${names.map(() => '---').join('|')}|`,
      `| median of the runs | ${names.map((n) => fixed(median(stages.map((s) => s[n]).filter((v): v is number => v !== undefined)), 1)).join(' | ')} |`,
    );
  }
  const growth = runs[0]!.rows.filter((r) => r.pages !== undefined);
  if (growth.length > 0) {
    lines.push(
      '',
      '| cost as work grows (one at a time) | pages | rows/page | p50 ms | ms per page |',
      '|---|---|---|---|---|',
    );
    for (const g of growth) {
      const same = runs
        .map((run) => run.rows.find((r) => r.variant === g.variant))
        .filter((r): r is BenchRow => r !== undefined);
      const p50 = median(same.map((r) => r.p50Ms).filter((v): v is number => v !== null));
      const perPage = median(same.map((r) => r.msPerPage ?? null).filter((v): v is number => v !== null));
      lines.push(`| ${g.variant} | ${g.pages} | ${g.rowsPerPage ?? '-'} | ${fixed(p50, 0)} | ${fixed(perPage, 1)} |`);
    }
  }
  return lines.join('\n');
}
