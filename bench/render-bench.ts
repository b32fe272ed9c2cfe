// `npm run bench`: end-to-end render throughput and latency of docgen (POST /v1/generations
// to COMPLETED) for the sample invoice at concurrency 1, 4 and 16, next to, in the same run
// on the same machine,
//   (a) a bare puppeteer loop re-using one page per client (what a puppeteer program does),
//   (b) stock puppeteer-cluster with CONCURRENCY_CONTEXT (what a typical service does) and
//   (e) the loop of (a) on docgen's own Chromium,
// plus the peak RSS of all Chromium processes, (c) the docgen engine alone with its stages,
// and "cost as work grows" (1 to 20 pages, 25 and 200 rows per page).
//
// docgen runs first, as `serve --role all` (child process) on the embedded stack, seeded with
// a key and the templates. Then bench/render-engine-bench.ts (a child process) measures (a),
// (b), (e), (c) and (d) docgen end to end side by side, taking turns in short rounds at each
// concurrency, so that a slower minute of a shared machine hits all of them alike
// (bench/lib/end-to-end-client.ts is (d)'s client). End to end, each client creates a
// generation and waits for its final-state event (a plain NATS subscription to docgen's event
// subject: the moment the generation is COMPLETED, before webhook fan-out adds its own hop),
// then creates the next (closed loop). Latency is what the client sees, from sending the POST
// to receiving the event; throughput is completions per second. Stages come from docgen's own
// Prometheus histograms (ops port /metrics), per cell: api create (POST /v1/generations),
// render job (the render role's whole job: claim, template, Liquid, Chromium, upload, status,
// event) and its stages, next to the mean create->completed of the generations' own
// timestamps (createdAt, updatedAt). End to end also renders the 20-page report once at a
// time (how time grows with pages).
//
// Any variant or cell that fails keeps its row (errors, first message); the run goes on.
//
// Chromium: docgen prints with DOCGEN_CHROMIUM_PATH (default: Debian's chromium-headless-shell,
// docs/architecture.md#print-path); (a) and (b) run what a puppeteer program runs, the full
// browser (/usr/bin/chromium, or BENCH_BASELINE_CHROMIUM); (e) is (a)'s loop on docgen's
// Chromium. Fonts: docgen's Chromium reads DOCGEN_CHROMIUM_FONTCONFIG (default auto: the CJK
// everyday subsets from `docgen fonts build`); (a), (b) and (e) print with the system's fonts,
// as any puppeteer program does. The run says which docgen had.
//
//   npm run bench                              # everything, human tables on stdout
//   npm run bench -- --json                    # one JSON object on stdout, progress on stderr
//   npm run bench -- --quick                   # concurrency 1,4, fewer rounds and renders
//   npm run bench -- --concurrency=1,4,16      # or BENCH_CONCURRENCY
//   BENCH_VARIANTS=a,d npm run bench           # only some of (a) to (e); BENCH_GROWTH=0: no growth
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ObjectId } from 'mongodb';
import { displayPrefix, generateApiKey, hashApiKey, SCOPES } from '../src/auth/api-keys.ts';
import { sampleInvoiceContent, sampleInvoiceValues } from '../src/dev/dev-seed.ts';
import type { TemplateVersionContent } from '../src/domain/template.ts';
import { formatId } from '../src/domain/ids.ts';
import { ApiKeysRepository } from '../src/store/api-keys-repository.ts';
import { connectMongo } from '../src/store/mongo.ts';
import { resolveChromiumFontconfig } from '../src/render/fonts/chromium-fontconfig.ts';
import { TemplatesRepository } from '../src/store/templates-repository.ts';
import { WorkspacesRepository } from '../src/store/workspaces-repository.ts';
import { startBenchStack, type BenchStack } from './lib/bench-stack.ts';
import { baselineChromium, docgenChromium, runLoad, sampleTreeMemory } from './lib/measure.ts';
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
import { tableReport } from './lib/workloads.ts';
import { connectEndToEnd, createToCompleted, endToEndStages, type EndToEndTarget } from './lib/end-to-end-client.ts';
import { randomBytes } from 'node:crypto';

const OPTIONS = parseBenchOptions(process.argv.slice(2));
const PAGES = process.env.DOCGEN_RENDER_CONCURRENCY ?? '4';
const ROOT = fileURLToPath(new URL('../', import.meta.url));

// A stray rejection (a client call nobody awaits any more) is reported, never the end of the run.
process.on('unhandledRejection', (reason) =>
  progress(`unhandled rejection: ${reason instanceof Error ? reason.message : String(reason)}`),
);

async function runEngineBench(target: EndToEndTarget | null): Promise<BenchRow[]> {
  // A temporary file, not in the checkout: a run that is killed leaves it behind.
  const out = join(tmpdir(), `docgen-bench-engine-${process.pid}.json`);
  progress(
    `running bench/render-engine-bench.ts ((a) bare puppeteer, (b) puppeteer-cluster, (c) docgen engine${target ? ', (d) docgen end to end' : ''})…`,
  );
  const args = [
    join(ROOT, 'bench/render-engine-bench.ts'),
    `--concurrency=${OPTIONS.concurrencies.join(',')}`,
    ...(OPTIONS.quick ? ['--quick'] : []),
  ];
  // Not spawnSync: the embedded stack (database stand-in, object store) lives in this process
  // and must go on answering docgen while the child drives it.
  const child = spawn(process.execPath, args, {
    env: { ...process.env, BENCH_JSON_OUT: out, ...(target ? { BENCH_END_TO_END: JSON.stringify(target) } : {}) },
    // Its stdout is progress here: ours carries only the result.
    stdio: ['ignore', 2, 'inherit'],
  });
  const ended = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  // The child saves its rows after every cell, so a crash keeps what ran.
  const rows = existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as BenchRow[]) : [];
  rmSync(out, { force: true });
  if (ended.code !== 0) {
    const why = ended.error?.message ?? (ended.signal ? `killed by ${ended.signal}` : `exited with ${ended.code}`);
    rows.push(
      failedRow('render-engine-bench', 0, `bench/render-engine-bench.ts ${why}; rows above are what it finished`),
    );
  }
  return rows;
}

async function seed(stack: BenchStack, contents: Record<string, TemplateVersionContent>) {
  const mongo = await connectMongo({ url: stack.mongoUrl, database: stack.database });
  try {
    // A workspace, a key and the published templates (as `docgen dev` does).
    const workspace = await new WorkspacesRepository(mongo.db).create('bench');
    const key = generateApiKey();
    await new ApiKeysRepository(mongo.db).insert({
      _id: new ObjectId(),
      workspaceId: workspace._id,
      name: 'bench',
      scopes: [...SCOPES],
      hash: hashApiKey(key),
      prefix: displayPrefix(key),
      createdAt: new Date(),
      lastUsedAt: null,
      revokedAt: null,
      rateLimitPerSecond: null,
      rateLimitBurst: null,
    });
    const templates = new TemplatesRepository(mongo.db, randomBytes(32));
    const ids: Record<string, string> = {};
    for (const [name, content] of Object.entries(contents)) {
      const { template } = await templates.create(workspace._id, name, content);
      await templates.publish(template._id, 1);
      ids[name] = formatId('template', template._id);
    }
    return { key, templateIds: ids };
  } finally {
    await mongo.close();
  }
}

/** Cost as work grows, end to end: the 20-page report, one generation at a time. */
async function endToEndGrowth(
  target: EndToEndTarget,
  reportBody: string,
  report: ReturnType<typeof tableReport>,
): Promise<BenchRow> {
  const variant = `docgen end to end, ${report.name}`;
  const client = await connectEndToEnd(target);
  try {
    await client.generate(reportBody); // warm-up
    const before = await client.metrics();
    const memory = sampleTreeMemory(target.docgenPid);
    const ids: string[] = [];
    const load = await runLoad(async () => ids.push(await client.generate(reportBody)), {
      concurrency: 1,
      total: OPTIONS.quick ? 3 : 8,
      warmup: 0,
    });
    const peak = memory.stop();
    const stagesMs = endToEndStages(before, await client.metrics(), await createToCompleted(client, ids));
    const p50 = round1(load.p50Ms);
    return {
      variant,
      concurrency: 1,
      pdfPerSecond: round1(load.perSecond) ?? 0,
      p50Ms: p50,
      p95Ms: round1(load.p95Ms),
      peakRssMb: round1(peak.rssBytes / (1024 * 1024)),
      completed: load.completed,
      errors: load.errors,
      errorMessage: load.firstError ?? null,
      stagesMs,
      pages: report.pages,
      rowsPerPage: report.rowsPerPage,
      msPerPage: p50 === null ? null : round1(p50 / report.pages),
    };
  } finally {
    await client.close();
  }
}

const startedAt = new Date().toISOString();
const fontChoice = resolveChromiumFontconfig(process.env.DOCGEN_CHROMIUM_FONTCONFIG ?? 'auto');
const DOCGEN_FONTS = fontChoice.ok ? (fontChoice.file ?? 'system') : fontChoice.problem;
const DOCGEN_CHROMIUM = docgenChromium();
// The engine bench (c, e) reads these two as well: docgen end to end gets the same.
const passedOn = Object.fromEntries(
  ['DOCGEN_CHROMIUM_PATH', 'DOCGEN_CHROMIUM_FONTCONFIG'].flatMap((name) =>
    process.env[name] ? [[name, process.env[name]!]] : [],
  ),
);
const report = tableReport(20, 25);
const rows: BenchRow[] = [];
// docgen runs first, so that (d) can take turns with the others inside the engine bench.
const stack = await guarded('docgen end to end: starting the embedded stack', () =>
  startBenchStack({ roles: 'all', label: 'render-bench', env: { DOCGEN_RENDER_CONCURRENCY: PAGES, ...passedOn } }),
);
try {
  let target: EndToEndTarget | null = null;
  if (stack.ok) {
    const seeded = await guarded('docgen end to end: seeding', () =>
      seed(stack.value, { invoice: sampleInvoiceContent(), report: report.content }),
    );
    if (seeded.ok) {
      const { key, templateIds } = seeded.value;
      target = {
        publicPort: stack.value.publicPort,
        opsPort: stack.value.opsPort,
        natsUrl: stack.value.nats.url,
        key,
        invoiceBody: JSON.stringify({ templateId: templateIds.invoice, variables: sampleInvoiceValues() }),
        docgenPid: stack.value.child.pid!,
      };
      rows.push(...(await runEngineBench(target)));
      if (process.env.BENCH_GROWTH !== '0') {
        const reportBody = JSON.stringify({ templateId: templateIds.report, variables: report.variables });
        const grown = await guarded('docgen end to end, growth', () => endToEndGrowth(target!, reportBody, report));
        rows.push(
          grown.ok
            ? grown.value
            : {
                ...failedRow(`docgen end to end, ${report.name}`, 1, grown.message),
                pages: report.pages,
                rowsPerPage: report.rowsPerPage,
                msPerPage: null,
              },
        );
      }
    } else rows.push(failedRow('docgen end to end', 0, seeded.message));
  } else rows.push(failedRow('docgen end to end', 0, stack.message));
  if (!target) rows.unshift(...(await runEngineBench(null)));
} finally {
  if (stack.ok) await stack.value.stop();
}

if (OPTIONS.json) {
  console.log(
    JSON.stringify({
      benchmark: 'render',
      startedAt,
      quick: OPTIONS.quick,
      concurrencies: OPTIONS.concurrencies,
      machine: { cpus: availableParallelism(), node: process.version, browserPages: Number(PAGES) },
      docgenFonts: DOCGEN_FONTS,
      docgenChromium: DOCGEN_CHROMIUM,
      rows,
    }),
  );
} else {
  const byConcurrency = (a: BenchRow, b: BenchRow) => a.concurrency - b.concurrency;
  console.log(
    `\nsample invoice, ${PAGES} docgen browser pages, embedded stack, one machine (${availableParallelism()} CPUs)`,
  );
  console.log(
    `docgen's Chromium: ${DOCGEN_CHROMIUM}, fonts: ${DOCGEN_FONTS}; (a) and (b): ${baselineChromium()}, the system's fonts`,
  );
  console.log(throughputTable(rows.filter((r) => r.pages === undefined).sort(byConcurrency)));
  const grownRows = rows.filter((r) => r.pages !== undefined);
  if (grownRows.length > 0)
    console.log(`\nCost as work grows (one at a time; ms per page = p50 / pages):\n${growthTable(grownRows)}`);
  console.log(`\nWhere the time goes (mean ms per PDF; end to end from docgen's own histograms):\n${stageTable(rows)}`);
  const failed = rows.filter((r) => r.errors > 0);
  if (failed.length > 0)
    console.log(
      `\n${failed.length} row(s) with errors; the first message of each is in the errors column (full text with --json).`,
    );
}
