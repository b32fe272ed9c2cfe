// Render engine benchmark (module level, no API/queue/DB): the sample invoice at client
// concurrency 1, 4 and 16 through
//   (a) a bare puppeteer loop, one reused page per concurrent client, on what a puppeteer
//       program runs: the full browser (Debian's chromium; BENCH_BASELINE_CHROMIUM) in
//       puppeteer's default headless mode;
//   (b) stock puppeteer-cluster with CONCURRENCY_CONTEXT (a context + page per job), what a
//       typical service does, on the same browser as (a);
//   (e) the loop of (a) on docgen's Chromium (chrome-headless-shell by default): what the
//       binary alone gives, so that (c) and (d) are also compared with a loop on the binary
//       they use (left out when it is the same binary as (a));
//   (c) docgen's engine: resolveVariables + Liquid worker process + the reused-page Chromium
//       pool (DOCGEN_RENDER_CONCURRENCY pages, default 4; more clients than pages queue) on
//       docgen's Chromium (DOCGEN_CHROMIUM_PATH, default as docgen's).
//   (d) docgen end to end, when bench/render-bench.ts passes a running, seeded docgen in
//       BENCH_END_TO_END (bench/lib/end-to-end-client.ts): POST /v1/generations, then the
//       generation's final-state event; its stages come from docgen's own histograms.
// (a), (b) and (e) print the already-rendered HTML (Chromium only); (c) does the whole render.
// Per concurrency, the variants run side by side and take turns in BENCH_ROUNDS short rounds
// (default 6) after a warm-up; PDF/s is the median round, p50/p95 over all rounds, memory the
// peak of the summed RSS of the variant's Chromium processes. (Not PSS: with three browsers of
// the same binary alive, PSS would split their shared pages between the variants.)
// (c) also reports its stages as the engine reports them to the render role's metrics
// (src/render/render-stages.ts: liquid, header_footer_check, set_content, print, finish_*) and
// other (the rest: variables, deadlines, waiting for a page).
// A variant that fails (e.g. puppeteer-cluster's "Unable to get browser page", thrown where
// nobody awaits it) keeps its row with the error count and first message; the run goes on.
// Then "cost as work grows": (c) renders the table reports of bench/lib/workloads.ts (1 to 20
// pages, 25 and 200 rows per page) one at a time; ms per page = p50 / pages.
//
//   node bench/render-engine-bench.ts [--json] [--quick] [--concurrency=1,4,16]
//   BENCH_RENDERS=200 BENCH_ROUNDS=5 BENCH_VARIANTS=a,e,c node bench/render-engine-bench.ts
//   BENCH_GROWTH=0 skips the growth part.

import { writeFileSync } from 'node:fs';
import puppeteer from 'puppeteer';
import type { Browser, Page, PDFOptions } from 'puppeteer';
import { Cluster } from 'puppeteer-cluster';
import { resolveChromiumExecutable } from '../src/render/chromium/launch-options.ts';
import { LiquidRenderer } from '../src/render/liquid/liquid-renderer.ts';
import { resolveVariables } from '../src/render/liquid/variables.ts';
import { toPrintParams } from '../src/render/pdf-options.ts';
import { createRenderEngine } from '../src/render/render-engine.ts';
import { resolveChromiumFontconfig } from '../src/render/fonts/chromium-fontconfig.ts';
import type { JsonObject, TemplateVersionContent } from '../src/domain/template.ts';
import {
  baselineChromium,
  CHROMIUM_PROCESS,
  docgenChromium,
  docgenChromiumNoSandbox,
  formatTable,
  loadInvoiceFixture,
  percentile,
  processName,
  runLoad,
  sampleMemory,
} from './lib/measure.ts';
import type { LoadResult, MemoryPeak } from './lib/measure.ts';
import {
  failedRow,
  growthTable,
  guarded,
  parseBenchOptions,
  progress,
  round1,
  stageTable,
  throughputTable,
} from './lib/report.ts';
import type { BenchRow } from './lib/report.ts';
import { growthWorkloads, pdfPageCount } from './lib/workloads.ts';
import { connectEndToEnd, createToCompleted, endToEndStages, type EndToEndTarget } from './lib/end-to-end-client.ts';
import { listProcesses } from '../src/render/chromium/process-tree.ts';
import type { HistogramTotals } from './lib/prometheus-text.ts';

const env = process.env;
const OPTIONS = parseBenchOptions(process.argv.slice(2));
const CONCURRENCIES = OPTIONS.concurrencies;
const END_TO_END = env.BENCH_END_TO_END ? (JSON.parse(env.BENCH_END_TO_END) as EndToEndTarget) : null;
// Chromium of the baselines (a) and (b), and docgen's (c, d, e): see the top of this file.
const BASELINE_CHROMIUM = resolveChromiumExecutable(baselineChromium());
const CHROMIUM = resolveChromiumExecutable(docgenChromium());
const VARIANTS = (env.BENCH_VARIANTS ?? (END_TO_END ? 'a,b,e,c,d' : 'a,b,e,c'))
  .split(',')
  .filter((v) => v !== 'e' || CHROMIUM !== BASELINE_CHROMIUM);
if (VARIANTS.some((v) => !['a', 'b', 'c', 'd', 'e'].includes(v)))
  throw new Error(`BENCH_VARIANTS takes a, b, c, d and e; got ${env.BENCH_VARIANTS}`);
if (VARIANTS.includes('d') && !END_TO_END)
  throw new Error('variant d (docgen end to end) needs BENCH_END_TO_END: run it through npm run bench');
const RENDERS = env.BENCH_RENDERS ? Number(env.BENCH_RENDERS) : undefined;
const POOL_PAGES = Number(env.DOCGEN_RENDER_CONCURRENCY ?? 4);
// What a typical service passes: the sandbox cannot run as root in a container.
const TYPICAL_ARGS = process.getuid?.() === 0 ? ['--no-sandbox'] : [];

const ROUNDS = Number(env.BENCH_ROUNDS ?? (OPTIONS.quick ? 2 : 6));
const renders = (concurrency: number) =>
  RENDERS ?? (OPTIONS.quick ? Math.max(8, concurrency * 2) : Math.max(24, concurrency * 3));
// One render that takes longer than this counts as an error (a wedged pool must not hang the run).
const REQUEST_TIMEOUT_MS = Number(env.BENCH_REQUEST_TIMEOUT_MS ?? 60_000);

// Errors thrown where no one awaits them (puppeteer-cluster does that) are charged to the cell
// that is running, instead of ending the process.
let charge: ((message: string) => void) | null = null;
process.on('unhandledRejection', (reason) => {
  const message = reason instanceof Error ? reason.message : String(reason);
  progress(`unhandled rejection: ${message}`);
  charge?.(message);
});

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const fixture = loadInvoiceFixture();

// The HTML (a) and (b) print: exactly what docgen's Liquid step produces for the fixture.
async function renderFixtureHtml(): Promise<{ html: string; pdf: PDFOptions }> {
  const liquid = new LiquidRenderer({ workers: 1, timeoutMs: 2000, memoryMb: 64 });
  await liquid.start();
  try {
    const c = fixture.content;
    const out = await liquid.render({
      body: c.body,
      css: c.css,
      partials: c.partials,
      headerTemplate: c.pdfOptions.headerTemplate,
      footerTemplate: c.pdfOptions.footerTemplate,
      variables: resolveVariables(c.variables, fixture.variables),
    });
    // The same print parameters docgen passes, in puppeteer's terms (tagged, as docgen prints).
    const p = toPrintParams(
      { ...c.pdfOptions, headerTemplate: out.headerTemplate, footerTemplate: out.footerTemplate },
      { tagged: true },
    );
    const inches = (n: number) => `${n}in`;
    const pdf: PDFOptions = {
      width: inches(p.paperWidth),
      height: inches(p.paperHeight),
      landscape: p.landscape,
      printBackground: p.printBackground,
      margin: {
        top: inches(p.marginTop),
        right: inches(p.marginRight),
        bottom: inches(p.marginBottom),
        left: inches(p.marginLeft),
      },
      displayHeaderFooter: p.displayHeaderFooter,
      headerTemplate: p.headerTemplate,
      footerTemplate: p.footerTemplate,
      preferCSSPageSize: p.preferCSSPageSize,
      scale: p.scale,
      tagged: p.generateTaggedPDF,
    };
    return { html: out.html, pdf };
  } finally {
    await liquid.stop();
  }
}

interface Instance {
  request: () => Promise<unknown>;
  close: () => Promise<void>;
  /** Chromium browser processes (each the leader of its process group) of this instance. */
  browserPids: () => number[];
  /** Where the time goes, for variants that can say: restarted after the warm-up, read at the end. */
  stageReport?: { reset(): Promise<void>; meansMs(): Promise<Record<string, number>> };
}

interface Variant {
  start(concurrency: number): Promise<Instance>;
}

function bareLoop(html: string, pdf: PDFOptions, executablePath: string): Variant {
  return {
    async start(concurrency) {
      const browser: Browser = await puppeteer.launch({ executablePath, headless: true, args: TYPICAL_ARGS });
      const free: Page[] = [];
      for (let i = 0; i < concurrency; i++) free.push(await browser.newPage());
      return {
        request: async () => {
          const page = free.pop()!; // closed loop: never more requests than pages
          try {
            await page.setContent(html, { waitUntil: 'load' });
            return await page.pdf(pdf);
          } finally {
            free.push(page);
          }
        },
        close: () => browser.close(),
        browserPids: () => [browser.process()?.pid].filter((pid): pid is number => pid !== undefined),
      };
    },
  };
}

function stockCluster(html: string, pdf: PDFOptions): Variant {
  return {
    async start(concurrency) {
      const cluster: Cluster = await Cluster.launch({
        concurrency: Cluster.CONCURRENCY_CONTEXT,
        maxConcurrency: concurrency,
        puppeteer,
        puppeteerOptions: { executablePath: BASELINE_CHROMIUM, headless: true, args: TYPICAL_ARGS },
      });
      return {
        request: () =>
          cluster.execute(null, async ({ page }) => {
            await page.setContent(html, { waitUntil: 'load' });
            return page.pdf(pdf);
          }),
        close: () => cluster.close(),
        // puppeteer-cluster does not expose its browser; its concurrency model holds it.
        browserPids: () => {
          const model = (cluster as unknown as { browser?: { browser?: Browser | null } }).browser;
          const pid = model?.browser?.process()?.pid;
          return pid === undefined ? [] : [pid];
        },
      };
    },
  };
}

/** Time spent per stage, summed over renders since the last reset. */
export class StageClock {
  totals = new Map<string, number>();
  renders = 0;
  add(stage: string, ms: number): void {
    this.totals.set(stage, (this.totals.get(stage) ?? 0) + ms);
  }
  /** Mean ms per render of each stage; `other` = whole render minus the named stages. */
  meansMs(): Record<string, number> {
    if (this.renders === 0) return {};
    const out: Record<string, number> = {};
    let named = 0;
    for (const [stage, ms] of this.totals) {
      if (stage === 'total') continue;
      named += ms;
      out[stage] = Math.round((ms / this.renders) * 10) / 10;
    }
    out.other = Math.round((((this.totals.get('total') ?? 0) - named) / this.renders) * 10) / 10;
    return out;
  }
  reset(): void {
    this.totals.clear();
    this.renders = 0;
  }
}

interface EngineInstance extends Instance {
  stages: StageClock;
  render(content: TemplateVersionContent, variables: JsonObject): Promise<Buffer>;
}

async function startDocgenEngine(): Promise<EngineInstance> {
  // The fonts the service would print with (DOCGEN_CHROMIUM_FONTCONFIG, default auto).
  const fonts = resolveChromiumFontconfig(process.env.DOCGEN_CHROMIUM_FONTCONFIG ?? 'auto');
  const engine = await createRenderEngine({
    chromiumPath: CHROMIUM,
    noSandbox: docgenChromiumNoSandbox(),
    fontconfigFile: fonts.ok ? fonts.file : null,
    concurrency: POOL_PAGES,
    timeoutMs: 30_000,
    liquidTimeoutMs: 2_000,
    liquidMemoryMb: 64,
    browserRecycleAfterRenders: 1_000_000,
    browserMaxRssMb: 65_536,
    maxAttempts: 1,
  });
  // The engine's own stage reports (src/render/render-stages.ts), as the render role gets them.
  const stages = new StageClock();
  const render = async (content: TemplateVersionContent, variables: JsonObject) => {
    const t0 = performance.now();
    const out = await engine.renderer.render(content, variables, { onStage: (stage, ms) => stages.add(stage, ms) });
    stages.add('total', performance.now() - t0);
    stages.renders += 1;
    return out.pdf;
  };
  return {
    stages,
    stageReport: { reset: async () => stages.reset(), meansMs: async () => stages.meansMs() },
    render,
    request: () => render(fixture.content, fixture.variables),
    close: () => engine.close(),
    browserPids: () => {
      const pid = engine.pool.stats().browserPid;
      return pid === null ? [] : [pid];
    },
  };
}

function docgenEngine(): Variant {
  return { start: () => startDocgenEngine() };
}

/** (d): the running docgen of bench/render-bench.ts, one generation per request. */
function docgenEndToEnd(target: EndToEndTarget): Variant {
  return {
    async start() {
      const client = await connectEndToEnd(target);
      let ids: string[] = [];
      // Taken again by stageReport.reset() once the warm-up is over.
      let before: HistogramTotals = new Map();
      return {
        request: async () => ids.push(await client.generate(target.invoiceBody)),
        close: () => client.close(),
        // docgen's Chromium: the browsers docgen started (each leads its process group).
        browserPids: () =>
          listProcesses()
            .filter((p) => p.ppid === target.docgenPid && p.pgid === p.pid && CHROMIUM_PROCESS.test(processName(p.pid)))
            .map((p) => p.pid),
        stageReport: {
          reset: async () => {
            ids = [];
            before = await client.metrics();
          },
          meansMs: async () => endToEndStages(before, await client.metrics(), await createToCompleted(client, ids)),
        },
      };
    },
  };
}

/** Peak memory of the instance's Chromium process trees, sampled until stopped. */
function sampleInstanceMemory(instance: Instance): { stop(): MemoryPeak } {
  return sampleMemory(() => instance.browserPids());
}

/** The rounds of one cell as a row: median throughput, percentiles over all latencies, peak memory. */
function combine(
  variant: string,
  concurrency: number,
  rounds: LoadResult[],
  memory: MemoryPeak,
  extraErrors: string[],
): BenchRow {
  const perSecond = rounds.map((r) => r.perSecond).sort((a, b) => a - b);
  const latencies = rounds.flatMap((r) => r.latenciesMs).sort((a, b) => a - b);
  const firstError = rounds.find((r) => r.firstError !== undefined)?.firstError ?? extraErrors[0] ?? null;
  return {
    variant,
    concurrency,
    pdfPerSecond: round1(perSecond[Math.floor(perSecond.length / 2)] ?? 0) ?? 0,
    p50Ms: round1(percentile(latencies, 50)),
    p95Ms: round1(percentile(latencies, 95)),
    peakRssMb: round1(memory.rssBytes / (1024 * 1024)),
    completed: latencies.length,
    errors: rounds.reduce((n, r) => n + r.errors, 0) + extraErrors.length,
    errorMessage: firstError,
  };
}

/** Closes an instance; one that does not close in time has its browser killed (it is ours). */
async function closeInstance(name: string, instance: Instance): Promise<void> {
  const pids = instance.browserPids();
  const closed = await guarded(`closing ${name}`, () => withTimeout(instance.close(), 15_000, `closing ${name}`));
  if (!closed.ok) {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

/** One concurrency: all variants side by side, taking turns in rounds. */
async function throughputCell(
  concurrency: number,
  variants: Record<string, [string, Variant]>,
  rows: BenchRow[],
): Promise<void> {
  // All variants run side by side (idle browsers cost next to nothing) and take turns in short
  // rounds (a b c a b c ...): on a shared machine, load from elsewhere then hits every variant
  // alike instead of whichever happened to run during a busy minute.
  const cells = new Map<
    string,
    { name: string; instance: Instance; memory: { stop(): MemoryPeak }; rounds: LoadResult[]; unawaited: string[] }
  >();
  const request = (instance: Instance, name: string) => () =>
    withTimeout(Promise.resolve(instance.request()), REQUEST_TIMEOUT_MS, `${name} render`);
  for (const key of VARIANTS) {
    const [name, variant] = variants[key]!;
    const unawaited: string[] = [];
    charge = (message) => unawaited.push(message);
    const started = await guarded(`${name} c=${concurrency} start`, async () => {
      const instance = await variant.start(concurrency);
      await runLoad(request(instance, name), { concurrency, total: concurrency * 2, warmup: 0 });
      return instance;
    });
    if (!started.ok) {
      rows.push(failedRow(name, concurrency, started.message));
      continue;
    }
    cells.set(key, {
      name,
      instance: started.value,
      memory: sampleInstanceMemory(started.value),
      rounds: [],
      unawaited,
    });
  }
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const [key, cell] of cells) {
        // A variant that failed every render of a round is broken at this concurrency: stop.
        if (cell.rounds.some((r) => r.completed === 0 && r.errors > 0)) continue;
        if (round === 0) await cell.instance.stageReport?.reset(); // not the warm-up
        charge = (message) => cell.unawaited.push(message);
        // (b) is several times slower: fewer renders keep its cells from dominating the run. (d)
        // adds rows to the embedded MongoDB stand-in, which scans whole collections: fewer
        // renders keep that from slowing it down as the run goes on.
        const total = key === 'b' || key === 'd' ? Math.ceil(renders(concurrency) / 2) : renders(concurrency);
        const r = await runLoad(request(cell.instance, cell.name), { concurrency, total, warmup: 0 });
        progress(
          `${cell.name} c=${concurrency} round ${round + 1}/${ROUNDS}: ${r.perSecond.toFixed(1)} PDF/s, p50 ${r.p50Ms.toFixed(0)} ms, ` +
            `p95 ${r.p95Ms.toFixed(0)} ms${r.errors ? `, ${r.errors} errors (${r.firstError})` : ''}`,
        );
        cell.rounds.push(r);
      }
    }
  } finally {
    charge = null;
    for (const { name, instance, memory, rounds, unawaited } of cells.values()) {
      const peak = memory.stop();
      const stagesMs = await instance.stageReport?.meansMs().catch(() => undefined);
      await closeInstance(name, instance);
      rows.push({ ...combine(name, concurrency, rounds, peak, unawaited), ...(stagesMs ? { stagesMs } : {}) });
    }
  }
}

/** "Cost as work grows": (c) renders each workload one at a time. */
async function growth(rows: BenchRow[]): Promise<void> {
  const started = await guarded('(c) docgen engine start for growth', () => startDocgenEngine());
  if (!started.ok) {
    rows.push({
      ...failedRow('(c) docgen engine, growth', 1, started.message),
      pages: 0,
      rowsPerPage: 0,
      msPerPage: null,
    });
    return;
  }
  const engine = started.value;
  const count = OPTIONS.quick ? 3 : 8;
  try {
    for (const workload of growthWorkloads(OPTIONS.quick)) {
      const variant = `(c) docgen engine, ${workload.name}`;
      const render = () =>
        withTimeout(engine.render(workload.content, workload.variables), REQUEST_TIMEOUT_MS, variant);
      // Warm-up, and a check that the document has the pages it claims.
      const first = await guarded(variant, async () => {
        const pages = await pdfPageCount(await render());
        if (pages !== workload.pages) throw new Error(`printed ${pages} pages, expected ${workload.pages}`);
      });
      if (!first.ok) {
        rows.push({
          ...failedRow(variant, 1, first.message),
          pages: workload.pages,
          rowsPerPage: workload.rowsPerPage,
          msPerPage: null,
        });
        continue;
      }
      engine.stages.reset();
      const memory = sampleInstanceMemory(engine);
      const r = await runLoad(render, { concurrency: 1, total: count, warmup: 0 });
      const row = combine(variant, 1, [r], memory.stop(), []);
      progress(`${variant}: p50 ${row.p50Ms} ms${r.errors ? `, ${r.errors} errors (${r.firstError})` : ''}`);
      rows.push({
        ...row,
        pages: workload.pages,
        rowsPerPage: workload.rowsPerPage,
        msPerPage: row.p50Ms === null ? null : round1(row.p50Ms / workload.pages),
        stagesMs: engine.stages.meansMs(),
      });
    }
  } finally {
    await closeInstance('(c) docgen engine, growth', engine);
  }
}

/** Rows so far, for bench/render-bench.ts (written after every cell: a crash keeps what ran). */
function saveRows(rows: BenchRow[]): void {
  if (env.BENCH_JSON_OUT) writeFileSync(env.BENCH_JSON_OUT, JSON.stringify(rows));
}

async function main(): Promise<void> {
  const { html, pdf } = await renderFixtureHtml();
  const variants: Record<string, [string, Variant]> = {
    a: ['(a) bare puppeteer, reused page', bareLoop(html, pdf, BASELINE_CHROMIUM)],
    b: ['(b) puppeteer-cluster CONTEXT', stockCluster(html, pdf)],
    e: ["(e) bare puppeteer, docgen's Chromium", bareLoop(html, pdf, CHROMIUM)],
    c: [`(c) docgen engine (${POOL_PAGES} pages)`, docgenEngine()],
    ...(END_TO_END ? { d: ['docgen end to end', docgenEndToEnd(END_TO_END)] as [string, Variant] } : {}),
  };
  const rows: BenchRow[] = [];
  for (const concurrency of CONCURRENCIES) {
    await throughputCell(concurrency, variants, rows);
    saveRows(rows);
  }
  if (env.BENCH_GROWTH !== '0') {
    await growth(rows);
    saveRows(rows);
  }
  if (OPTIONS.json) {
    console.log(JSON.stringify({ benchmark: 'render-engine', quick: OPTIONS.quick, rows }));
    return;
  }
  // Inside bench/render-bench.ts this goes to stderr with the rest of the progress.
  const out = env.BENCH_JSON_OUT ? progress : console.log;
  out(
    `\nRender engine benchmark: sample invoice (${fixture.content.variables.length} variables, 10 lines, footer with page numbers)`,
  );
  out(
    `Chromium: (a), (b) ${BASELINE_CHROMIUM}; docgen and (e) ${CHROMIUM}; ${ROUNDS} interleaved rounds per cell, ${renders(1)}+ renders per round after warm-up ((b): half);\n` +
      'PDF/s = median round; p50/p95 over all rounds; memory = peak over all Chromium processes of the variant\n',
  );
  out(throughputTable(rows.filter((r) => r.pages === undefined)));
  const grown = rows.filter((r) => r.pages !== undefined);
  if (grown.length > 0) out(`\nCost as work grows (one render at a time):\n${growthTable(grown)}`);
  out(`\nWhere the time goes ((c), mean ms per PDF):\n${stageTable(rows)}`);
  const ratios: Array<Array<string | number>> = [];
  for (const concurrency of CONCURRENCIES) {
    const at = (prefix: string) =>
      rows.find(
        (r) =>
          r.variant.startsWith(prefix) && r.concurrency === concurrency && r.pages === undefined && r.completed > 0,
      )?.pdfPerSecond;
    const a = at('(a)');
    const b = at('(b)');
    const e = at('(e)');
    const c = at('(c)');
    if (c === undefined) continue;
    const percent = (base: number | undefined) => (base === undefined ? '-' : `${Math.round((c / base) * 100)} %`);
    ratios.push([concurrency, percent(a), b === undefined ? '-' : `${(c / b).toFixed(1)}x`, percent(e)]);
  }
  if (ratios.length > 0) out('\n' + formatTable(['conc.', '(c) vs (a)', '(c) vs (b)', '(c) vs (e)'], ratios));
}

await main();
