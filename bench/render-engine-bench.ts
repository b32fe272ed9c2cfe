// Render engine benchmark (module level, no API/queue/DB): the sample invoice at client
// concurrency 1, 4 and 16 through
//   (a) a bare puppeteer loop, one reused page per concurrent client: the machine's limit;
//   (b) stock puppeteer-cluster with CONCURRENCY_CONTEXT (a context + page per job), what a
//       typical service does;
//   (c) docgen's engine: resolveVariables + Liquid worker process + the reused-page Chromium
//       pool (DOCGEN_RENDER_CONCURRENCY pages, default 4; more clients than pages queue).
// (a) and (b) print the already-rendered HTML (Chromium only); (c) does the whole render.
// Per concurrency, the variants run side by side and take turns in BENCH_ROUNDS short rounds
// (default 6) after a warm-up; PDF/s is the median round, p50/p95 over all rounds, memory the
// peak of the summed RSS of the variant's Chromium processes. (Not PSS: with three browsers of
// the same binary alive, PSS would split their shared pages between the variants.)
//
//   npx node bench/render-engine-bench.ts            # all variants, concurrency 1,4,16
//   BENCH_CONCURRENCY=4 BENCH_RENDERS=200 BENCH_ROUNDS=5 BENCH_VARIANTS=a,c npx node bench/render-engine-bench.ts

import { writeFileSync } from 'node:fs';
import puppeteer from 'puppeteer';
import type { Browser, Page, PDFOptions } from 'puppeteer';
import { Cluster } from 'puppeteer-cluster';
import { resolveChromiumExecutable } from '../src/render/chromium/launch-options.ts';
import { LiquidRenderer } from '../src/render/liquid/liquid-renderer.ts';
import { resolveVariables } from '../src/render/liquid/variables.ts';
import { toPuppeteerPdfOptions } from '../src/render/pdf-options.ts';
import { createRenderEngine } from '../src/render/render-engine.ts';
import { treeMemory } from '../src/render/chromium/process-tree.ts';
import { formatTable, loadInvoiceFixture, mb, percentile, runLoad } from './lib/measure.ts';
import type { LoadResult, MemoryPeak } from './lib/measure.ts';

const env = process.env;
const CONCURRENCIES = (env.BENCH_CONCURRENCY ?? '1,4,16').split(',').map(Number);
const VARIANTS = (env.BENCH_VARIANTS ?? 'a,b,c').split(',');
const RENDERS = env.BENCH_RENDERS ? Number(env.BENCH_RENDERS) : undefined;
const POOL_PAGES = Number(env.DOCGEN_RENDER_CONCURRENCY ?? 4);
const CHROMIUM = resolveChromiumExecutable(env.DOCGEN_CHROMIUM_PATH ?? '/usr/bin/chromium');
// What a typical service passes: the sandbox cannot run as root in a container.
const TYPICAL_ARGS = process.getuid?.() === 0 ? ['--no-sandbox'] : [];

const ROUNDS = Number(env.BENCH_ROUNDS ?? 6);
const renders = (concurrency: number) => RENDERS ?? Math.max(24, concurrency * 3);

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

interface Instance {
  request: () => Promise<unknown>;
  close: () => Promise<void>;
  /** Chromium browser processes (each the leader of its process group) of this instance. */
  browserPids: () => number[];
}

interface Variant {
  start(concurrency: number): Promise<Instance>;
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
        puppeteerOptions: { executablePath: CHROMIUM, headless: true, args: TYPICAL_ARGS },
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
        browserPids: () => {
          const pid = engine.pool.stats().browserPid;
          return pid === null ? [] : [pid];
        },
      };
    },
  };
}

interface Row {
  variant: string;
  result: LoadResult;
  memory: MemoryPeak;
}

/** Peak memory of the instance's Chromium process trees, sampled until stopped. */
function sampleInstanceMemory(instance: Instance, intervalMs = 100): { stop(): MemoryPeak } {
  const peak: MemoryPeak = { rssBytes: 0, pssBytes: 0, samples: 0 };
  const sample = () => {
    let rss = 0;
    let pss = 0;
    for (const pid of instance.browserPids()) {
      const memory = treeMemory(pid);
      rss += memory.rssBytes;
      pss += memory.pssBytes;
    }
    peak.rssBytes = Math.max(peak.rssBytes, rss);
    peak.pssBytes = Math.max(peak.pssBytes, pss);
    peak.samples += 1;
  };
  const timer = setInterval(sample, intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return { ...peak };
    },
  };
}

/** The rounds of one cell combined: median throughput, percentiles over all latencies, peak memory. */
function combine(variant: string, rounds: LoadResult[], memory: MemoryPeak): Row {
  const perSecond = rounds.map((r) => r.perSecond).sort((a, b) => a - b);
  const latencies = rounds.flatMap((r) => r.latenciesMs).sort((a, b) => a - b);
  const first = rounds[0]!;
  return {
    variant,
    result: {
      ...first,
      completed: rounds.reduce((n, r) => n + r.completed, 0),
      errors: rounds.reduce((n, r) => n + r.errors, 0),
      elapsedMs: rounds.reduce((n, r) => n + r.elapsedMs, 0),
      perSecond: perSecond[Math.floor(perSecond.length / 2)]!,
      p50Ms: percentile(latencies, 50),
      p95Ms: percentile(latencies, 95),
      maxMs: latencies[latencies.length - 1] ?? NaN,
      latenciesMs: latencies,
    },
    memory,
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
    // All variants run side by side (idle browsers cost next to nothing) and take turns in short
    // rounds (a b c a b c ...): on a shared machine, load from elsewhere then hits every variant
    // alike instead of whichever happened to run during a busy minute.
    const instances = new Map<string, { name: string; instance: Instance; memory: { stop(): MemoryPeak } }>();
    for (const key of VARIANTS) {
      const [name, variant] = variants[key]!;
      const instance = await variant.start(concurrency);
      await runLoad(instance.request, { concurrency, total: concurrency * 2, warmup: 0 });
      instances.set(key, { name, instance, memory: sampleInstanceMemory(instance) });
    }
    const rounds = new Map<string, LoadResult[]>();
    try {
      for (let round = 0; round < ROUNDS; round++) {
        for (const [key, { name, instance }] of instances) {
          // (b) is several times slower: fewer renders keep its cells from dominating the run.
          const total = key === 'b' ? Math.ceil(renders(concurrency) / 2) : renders(concurrency);
          const r = await runLoad(instance.request, { concurrency, total, warmup: 0 });
          process.stderr.write(
            `${name} c=${concurrency} round ${round + 1}/${ROUNDS}: ${r.perSecond.toFixed(1)} PDF/s, p50 ${r.p50Ms.toFixed(0)} ms, ` +
              `p95 ${r.p95Ms.toFixed(0)} ms${r.errors ? `, ${r.errors} errors (${r.firstError})` : ''}\n`,
          );
          rounds.set(key, [...(rounds.get(key) ?? []), r]);
        }
      }
    } finally {
      for (const [key, { name, instance, memory }] of instances) {
        const peak = memory.stop();
        await instance.close();
        const list = rounds.get(key);
        if (list) rows.push(combine(name, list, peak));
      }
    }
  }

  console.log(`\nRender engine benchmark: sample invoice (${fixture.content.variables.length} variables, 10 lines, footer with page numbers)`);
  console.log(
    `Chromium ${CHROMIUM}; ${ROUNDS} interleaved rounds per cell, ${renders(1)}+ renders per round after warm-up ((b): half);\n` +
      'PDF/s = median round; p50/p95 over all rounds; memory = peak over all Chromium processes of the variant\n',
  );
  console.log(
    formatTable(
      ['variant', 'conc.', 'PDF/s', 'p50 ms', 'p95 ms', 'errors', 'Chromium peak RSS'],
      rows.map((r) => [
        r.variant,
        r.result.concurrency,
        r.result.perSecond,
        Math.round(r.result.p50Ms),
        Math.round(r.result.p95Ms),
        r.result.errors,
        mb(r.memory.rssBytes),
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
  // For bench/render-bench.ts, which sets the end-to-end numbers next to these.
  if (env.BENCH_JSON_OUT) {
    const out = rows.map((r) => ({ variant: r.variant, concurrency: r.result.concurrency, perSecond: r.result.perSecond, p50Ms: r.result.p50Ms, p95Ms: r.result.p95Ms, chromiumPeakRssBytes: r.memory.rssBytes }));
    writeFileSync(env.BENCH_JSON_OUT, JSON.stringify(out));
  }
}

await main();
