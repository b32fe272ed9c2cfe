// The benchmarks' result rows, their command-line options, and their output: one JSON object on
// stdout with --json (progress goes to stderr so that stdout parses), a plain table otherwise.
import { formatTable } from './measure.ts';

/** One cell of a benchmark: a variant at a client concurrency. A failed variant keeps its row. */
export interface BenchRow {
  variant: string;
  concurrency: number;
  /** Completed PDFs per second (0 when nothing completed). */
  pdfPerSecond: number;
  p50Ms: number | null;
  p95Ms: number | null;
  /** Peak summed RSS of the variant's Chromium processes, MB. */
  peakRssMb: number | null;
  completed: number;
  errors: number;
  /** The first error, in words; null when there was none. */
  errorMessage: string | null;
  /** Growth rows: pages of the document and rows per page, and p50 divided by pages. */
  pages?: number;
  rowsPerPage?: number;
  msPerPage?: number | null;
  /** Mean time per PDF in each stage the code exposes (see the benchmark's header), ms. */
  stagesMs?: Record<string, number>;
}

export interface BenchOptions {
  json: boolean;
  quick: boolean;
  concurrencies: number[];
}

/** `--json`, `--quick`, `--concurrency=1,4,16` (or BENCH_CONCURRENCY); quick means 1,4 and fewer rounds. */
export function parseBenchOptions(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const json = argv.includes('--json') || env.BENCH_JSON === '1';
  const quick = argv.includes('--quick') || env.BENCH_QUICK === '1';
  for (const arg of argv) {
    if (!['--json', '--quick'].includes(arg) && !arg.startsWith('--concurrency=')) {
      throw new Error(`unknown option ${arg}; options: --json, --quick, --concurrency=1,4,16`);
    }
  }
  const listed =
    argv.find((a) => a.startsWith('--concurrency='))?.slice('--concurrency='.length) ?? env.BENCH_CONCURRENCY;
  const concurrencies = (listed ?? (quick ? '1,4' : '1,4,16')).split(',').map(Number);
  if (concurrencies.some((c) => !Number.isInteger(c) || c < 1))
    throw new Error(`--concurrency wants positive integers, got ${listed}`);
  return { json, quick, concurrencies };
}

/** Progress and log lines: always stderr, so stdout carries only the result. */
export function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

export const round1 = (n: number | null): number | null =>
  n === null || !Number.isFinite(n) ? null : Math.round(n * 10) / 10;

/** Runs `step`; a throw becomes an error row instead of ending the benchmark. */
export async function guarded<T>(
  what: string,
  step: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; message: string }> {
  try {
    return { ok: true, value: await step() };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    progress(`${what} failed: ${message}`);
    return { ok: false, message };
  }
}

export function failedRow(variant: string, concurrency: number, message: string): BenchRow {
  return {
    variant,
    concurrency,
    pdfPerSecond: 0,
    p50Ms: null,
    p95Ms: null,
    peakRssMb: null,
    completed: 0,
    errors: 1,
    errorMessage: message,
  };
}

const cell = (n: number | null | undefined, digits = 0): string =>
  n === null || n === undefined ? '-' : digits === 0 ? String(Math.round(n)) : n.toFixed(digits);

/** The human table of the throughput rows (those without `pages`). */
export function throughputTable(rows: readonly BenchRow[]): string {
  return formatTable(
    ['variant', 'conc.', 'PDF/s', 'p50 ms', 'p95 ms', 'Chromium peak RSS', 'errors'],
    rows.map((r) => [
      r.variant,
      r.concurrency,
      cell(r.pdfPerSecond, 1),
      cell(r.p50Ms),
      cell(r.p95Ms),
      r.peakRssMb === null ? '-' : `${Math.round(r.peakRssMb)} MB`,
      r.errors === 0 ? '0' : `${r.errors}: ${(r.errorMessage ?? '').slice(0, 60)}`,
    ]),
  );
}

/** The human table of the growth rows: how time grows with pages. */
export function growthTable(rows: readonly BenchRow[]): string {
  return formatTable(
    ['variant', 'pages', 'rows/page', 'p50 ms', 'p95 ms', 'ms per page', 'errors'],
    rows.map((r) => [
      r.variant,
      r.pages ?? '-',
      r.rowsPerPage ?? '-',
      cell(r.p50Ms),
      cell(r.p95Ms),
      cell(r.msPerPage ?? null, 1),
      r.errors === 0 ? '0' : `${r.errors}: ${(r.errorMessage ?? '').slice(0, 60)}`,
    ]),
  );
}

/** Where the time goes: mean ms per PDF in each stage, for the rows that measured stages. */
export function stageTable(rows: readonly BenchRow[]): string {
  const timed = rows.filter((r) => r.stagesMs && Object.keys(r.stagesMs).length > 0);
  const stageNames = [...new Set(timed.flatMap((r) => Object.keys(r.stagesMs!)))];
  return formatTable(
    ['variant', 'conc.', ...stageNames],
    timed.map((r) => [r.variant, r.concurrency, ...stageNames.map((s) => cell(r.stagesMs?.[s], 1))]),
  );
}
