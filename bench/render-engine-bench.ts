// Render engine benchmark (module level, no API/queue/DB): the sample invoice at client
// concurrency 1, 4 and 16 through
//   (a) a bare puppeteer loop, one reused page per concurrent client: the machine's limit;
//   (b) stock puppeteer-cluster with CONCURRENCY_CONTEXT (a context + page per job), what a
//       typical service does;
//   (c) docgen's engine: resolveVariables + Liquid worker + the reused-page Chromium pool
//       (DOCGEN_RENDER_CONCURRENCY pages, default 4; more clients than pages queue).
// (a) and (b) print the already-rendered HTML (Chromium only); (c) does the whole render.
//
//   npx node bench/render-engine-bench.ts            # all variants, concurrency 1,4,16
//   BENCH_CONCURRENCY=4 BENCH_RENDERS=200 BENCH_VARIANTS=a,c npx node bench/render-engine-bench.ts

import puppeteer from 'puppeteer';
import type { Browser, Page, PDFOptions } from 'puppeteer';
import { Cluster } from 'puppeteer-cluster';
import { resolveChromiumExecutable } from '../src/render/chromium/launch-options.ts';
import { LiquidRenderer } from '../src/render/liquid/liquid-renderer.ts';
import { resolveVariables } from '../src/render/liquid/variables.ts';
import { toPuppeteerPdfOptions } from '../src/render/pdf-options.ts';
import { createRenderEngine } from '../src/render/render-engine.ts';
import { formatTable, loadInvoiceFixture, mb, percentile, runLoad, sampleTreeMemory } from './lib/measure.ts';
import type { LoadResult, MemoryPeak } from './lib/measure.ts';

const env = process.env;
const CONCURRENCIES = (env.BENCH_CONCURRENCY ?? '1,4,16').split(',').map(Number);
const VARIANTS = (env.BENCH_VARIANTS ?? 'a,b,c').split(',');
const RENDERS = env.BENCH_RENDERS ? Number(env.BENCH_RENDERS) : undefined;
const POOL_PAGES = Number(env.DOCGEN_RENDER_CONCURRENCY ?? 4);
const CHROMIUM = resolveChromiumExecutable(env.DOCGEN_CHROMIUM_PATH ?? '/usr/bin/chromium');
// What a typical service passes: the sandbox cannot run as root in a container.
const TYPICAL_ARGS = process.getuid?.() === 0 ? ['--no-sandbox'] : [];

const ROUNDS = Number(env.BENCH_ROUNDS ?? 3);
const renders = (concurrency: number) => RENDERS ?? Math.max(40, concurrency * 6);

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
    const pdf = toPuppeteerPdfOptions({ ...c.pdfOptions, headerTemplate: out.headerTemplate, footerTemplate: out.footerTemplate });
    return { html: out.html, pdf };
  } finally {
    await liquid.stop();
  }
}

interface Variant {
  start(concurrency: number): Promise<{ request: () => Promise<unknown>; close: () => Promise<void> }>;
}

function bareLoop(html: string, pdf: PDFOptions): Variant {
  return {
    async start(concurrency) {
      const browser: Browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: TYPICAL_ARGS });
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
        puppeteerOptions: { executablePath: CHROMIUM, headless: true, args: TYPICAL_ARGS },
      });
      return {
        request: () =>
          cluster.execute(null, async ({ page }) => {
            await page.setContent(html, { waitUntil: 'load' });
            return page.pdf(pdf);
          }),
        close: () => cluster.close(),
      };
    },
  };
}

function docgenEngine(): Variant {
  return {
    async start() {
      const engine = await createRenderEngine({
        chromiumPath: CHROMIUM,
        concurrency: POOL_PAGES,
        timeoutMs: 30_000,
        liquidTimeoutMs: 2_000,
        liquidMemoryMb: 64,
        browserRecycleAfterRenders: 1_000_000,
        browserMaxRssMb: 65_536,
        maxAttempts: 1,
      });
      return {
        request: () => engine.renderer.render(fixture.content, fixture.variables),
        close: () => engine.close(),
      };
    },
  };
}

interface Row {
  variant: string;
  result: LoadResult;
  memory: MemoryPeak;
}

/** One round: a fresh instance of the variant, warm-up, then the measured renders. */
async function measureRound(variant: Variant, concurrency: number, total: number): Promise<{ result: LoadResult; memory: MemoryPeak }> {
  const memory = sampleTreeMemory(process.pid, 100);
  const instance = await variant.start(concurrency);
  try {
    const result = await runLoad(instance.request, { concurrency, total, warmup: concurrency * 2 });
    return { result, memory: memory.peek() };
  } finally {
    await instance.close();
    memory.stop();
  }
}

/** The rounds of one cell combined: median throughput, percentiles over all latencies, peak memory. */
function combine(variant: string, rounds: Array<{ result: LoadResult; memory: MemoryPeak }>): Row {
  const perSecond = rounds.map((r) => r.result.perSecond).sort((a, b) => a - b);
  const latencies = rounds.flatMap((r) => r.result.latenciesMs).sort((a, b) => a - b);
  const first = rounds[0]!.result;
  return {
    variant,
    result: {
      ...first,
      completed: rounds.reduce((n, r) => n + r.result.completed, 0),
      errors: rounds.reduce((n, r) => n + r.result.errors, 0),
      elapsedMs: rounds.reduce((n, r) => n + r.result.elapsedMs, 0),
      perSecond: perSecond[Math.floor(perSecond.length / 2)]!,
      p50Ms: percentile(latencies, 50),
      p95Ms: percentile(latencies, 95),
      maxMs: latencies[latencies.length - 1] ?? NaN,
      latenciesMs: latencies,
    },
    memory: {
      rssBytes: Math.max(...rounds.map((r) => r.memory.rssBytes)),
      pssBytes: Math.max(...rounds.map((r) => r.memory.pssBytes)),
      samples: rounds.reduce((n, r) => n + r.memory.samples, 0),
    },
  };
}

async function main(): Promise<void> {
  const { html, pdf } = await renderFixtureHtml();
  const variants: Record<string, [string, Variant]> = {
    a: ['(a) bare puppeteer, reused page', bareLoop(html, pdf)],
    b: ['(b) puppeteer-cluster CONTEXT', stockCluster(html, pdf)],
    c: [`(c) docgen engine (${POOL_PAGES} pages)`, docgenEngine()],
  };
  const rows: Row[] = [];
  for (const concurrency of CONCURRENCIES) {
    // Rounds of the variants interleave (a b c a b c ...): on a shared machine, load from
    // elsewhere then hits every variant alike instead of whichever ran during a busy minute.
    const rounds = new Map<string, Array<{ result: LoadResult; memory: MemoryPeak }>>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const key of VARIANTS) {
        const [name, variant] = variants[key]!;
        // (b) is several times slower: fewer renders keep its cells from dominating the run.
        const total = key === 'b' ? Math.ceil(renders(concurrency) / 2) : renders(concurrency);
        const measured = await measureRound(variant, concurrency, total);
        const r = measured.result;
        process.stderr.write(
          `${name} c=${concurrency} round ${round + 1}/${ROUNDS}: ${r.perSecond.toFixed(1)} PDF/s, p50 ${r.p50Ms.toFixed(0)} ms, ` +
            `p95 ${r.p95Ms.toFixed(0)} ms${r.errors ? `, ${r.errors} errors (${r.firstError})` : ''}\n`,
        );
        const list = rounds.get(name) ?? [];
        list.push(measured);
        rounds.set(name, list);
      }
    }
    for (const [name, list] of rounds) rows.push(combine(name, list));
  }

  console.log(`\nRender engine benchmark: sample invoice (${fixture.content.variables.length} variables, 10 lines, footer with page numbers)`);
  console.log(
    `Chromium ${CHROMIUM}; ${ROUNDS} interleaved rounds per cell, ${renders(1)}+ renders per round after warm-up ((b): half);\n` +
      'PDF/s = median round; p50/p95 over all rounds; memory = peak over all Chromium processes of the variant\n',
  );
  console.log(
    formatTable(
      ['variant', 'conc.', 'PDF/s', 'p50 ms', 'p95 ms', 'errors', 'peak RSS (sum)', 'peak PSS'],
      rows.map((r) => [
        r.variant,
        r.result.concurrency,
        r.result.perSecond,
        Math.round(r.result.p50Ms),
        Math.round(r.result.p95Ms),
        r.result.errors,
        mb(r.memory.rssBytes),
        mb(r.memory.pssBytes),
      ]),
    ),
  );
  const ratios: Array<Array<string | number>> = [];
  for (const concurrency of CONCURRENCIES) {
    const at = (prefix: string) => rows.find((r) => r.variant.startsWith(prefix) && r.result.concurrency === concurrency)?.result.perSecond;
    const a = at('(a)');
    const b = at('(b)');
    const c = at('(c)');
    if (c === undefined) continue;
    ratios.push([
      concurrency,
      a === undefined ? '-' : `${Math.round((c / a) * 100)} %`,
      b === undefined ? '-' : `${(c / b).toFixed(1)}x`,
    ]);
  }
  if (ratios.length > 0) {
    console.log('\n' + formatTable(['conc.', '(c) vs (a) [target >= 70 %]', '(c) vs (b) [target >= 3x]'], ratios));
  }
}

await main();
