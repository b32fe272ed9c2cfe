// Reusable measuring helpers for docgen's benchmarks: a closed-loop load generator (N workers
// issuing requests back to back), latency percentiles, a memory sampler for a process tree
// (Chromium), the sample invoice fixture and a plain-text table printer.

import { readFileSync } from 'node:fs';
import { configDefault } from '../../src/config/config.ts';
import { sampleInvoiceContent, sampleInvoiceValues } from '../../src/dev/dev-seed.ts';
import type { JsonObject, TemplateVersionContent } from '../../src/domain/template.ts';
import { listProcesses, processTree, rssBytes } from '../../src/render/chromium/process-tree.ts';

export interface LoadOptions {
  /** Requests in flight at once (closed loop: each worker starts the next when one ends). */
  concurrency: number;
  /** Measured requests (after the warm-up). */
  total: number;
  /** Requests run (at the same concurrency) before measuring; default = concurrency. */
  warmup?: number;
}

export interface LoadResult {
  concurrency: number;
  completed: number;
  errors: number;
  /** First error message, for the report. */
  firstError?: string;
  elapsedMs: number;
  perSecond: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** Every measured latency, ascending (to combine several runs). */
  latenciesMs: number[];
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/** Runs `request` `total` times with `concurrency` in flight; measures throughput and latency. */
export async function runLoad(request: () => Promise<unknown>, options: LoadOptions): Promise<LoadResult> {
  const warmup = options.warmup ?? options.concurrency;
  const drive = async (count: number, latencies: number[] | null) => {
    let started = 0;
    let errors = 0;
    let firstError: string | undefined;
    const worker = async () => {
      while (started < count) {
        started += 1;
        const t0 = performance.now();
        try {
          await request();
          latencies?.push(performance.now() - t0);
        } catch (err) {
          errors += 1;
          firstError ??= String((err as Error)?.message ?? err);
        }
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
    return { errors, firstError };
  };
  if (warmup > 0) await drive(warmup, null);
  const latencies: number[] = [];
  const t0 = performance.now();
  const { errors, firstError } = await drive(options.total, latencies);
  const elapsedMs = performance.now() - t0;
  latencies.sort((a, b) => a - b);
  return {
    concurrency: options.concurrency,
    completed: latencies.length,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    elapsedMs,
    perSecond: (latencies.length / elapsedMs) * 1000,
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
    maxMs: latencies[latencies.length - 1] ?? NaN,
    latenciesMs: latencies,
  };
}

export interface MemoryPeak {
  /** Peak over samples of the summed RSS of the processes (shared pages counted per process). */
  rssBytes: number;
  samples: number;
}

/**
 * How often memory is sampled. RSS only (/proc/<pid>/status), with one process listing per
 * sample: PSS (smaps_rollup) of three browsers every 100 ms took about 180 ms per sample here,
 * which left the variants being measured one core short on a 2-core machine.
 */
export const MEMORY_SAMPLE_INTERVAL_MS = 250;

/** Samples the summed RSS of the process trees `roots()` names, until stopped. */
export function sampleMemory(
  roots: () => number[],
  options: { intervalMs?: number; rootIsGroupLeader?: boolean; include?: (pid: number) => boolean } = {},
): { stop(): MemoryPeak; peek(): MemoryPeak } {
  const peak: MemoryPeak = { rssBytes: 0, samples: 0 };
  const sample = () => {
    const processes = listProcesses();
    let rss = 0;
    for (const root of roots()) {
      for (const pid of processTree(root, processes, { rootIsGroupLeader: options.rootIsGroupLeader ?? true })) {
        if (options.include === undefined || options.include(pid)) rss += rssBytes(pid);
      }
    }
    peak.rssBytes = Math.max(peak.rssBytes, rss);
    peak.samples += 1;
  };
  sample();
  const timer = setInterval(sample, options.intervalMs ?? MEMORY_SAMPLE_INTERVAL_MS);
  return {
    peek: () => ({ ...peak }),
    stop: () => {
      clearInterval(timer);
      sample();
      return { ...peak };
    },
  };
}

/** The kernel's name of a process (/proc/<pid>/comm: the executable's name, 15 characters at most). */
export function processName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

export const CHROMIUM_PROCESS = /^(chromium|chrome)/i;

/** The Chromium docgen prints with in a benchmark: DOCGEN_CHROMIUM_PATH or docgen's default. */
export function docgenChromium(): string {
  return process.env.DOCGEN_CHROMIUM_PATH ?? configDefault('DOCGEN_CHROMIUM_PATH')!;
}

/** DOCGEN_CHROMIUM_NO_SANDBOX for the benchmarks' docgen: as set, else (as `docgen dev` does) true
 * only when running as root, where Chromium has no sandbox. */
export function docgenChromiumNoSandbox(): boolean {
  const value = process.env.DOCGEN_CHROMIUM_NO_SANDBOX;
  if (value !== undefined && value !== '') return value === 'true';
  return process.getuid?.() === 0;
}

/** The Chromium of the puppeteer baselines: what a puppeteer program runs, the full browser
 * (BENCH_BASELINE_CHROMIUM to choose another). */
export function baselineChromium(): string {
  return process.env.BENCH_BASELINE_CHROMIUM ?? '/usr/bin/chromium';
}

/**
 * Samples the memory of the processes below `rootPid` (not the root itself) whose name matches
 * `names` (default: Chromium's), until stopped.
 */
export function sampleTreeMemory(
  rootPid: number = process.pid,
  names: RegExp = CHROMIUM_PROCESS,
): { stop(): MemoryPeak; peek(): MemoryPeak } {
  return sampleMemory(() => [rootPid], {
    rootIsGroupLeader: false,
    include: (pid) => pid !== rootPid && names.test(processName(pid)),
  });
}

export interface InvoiceFixture {
  content: TemplateVersionContent;
  variables: JsonObject;
}

/**
 * The sample invoice of `docgen dev` (the gallery invoice, src/gallery/invoice/) as a template
 * version and its variables.
 */
export function loadInvoiceFixture(): InvoiceFixture {
  return { content: sampleInvoiceContent(), variables: sampleInvoiceValues() };
}

export const mb = (bytes: number): string => `${Math.round(bytes / (1024 * 1024))} MB`;

/** Plain-text table with right-aligned numeric columns. */
export function formatTable(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = [
    headers,
    ...rows.map((r) => r.map((c) => (typeof c === 'number' ? (Number.isInteger(c) ? String(c) : c.toFixed(1)) : c))),
  ];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}
