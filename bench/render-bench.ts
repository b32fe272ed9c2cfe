// `npm run bench`: end-to-end render throughput and latency of docgen (POST /v1/generations
// to COMPLETED) for the sample invoice at concurrency 1, 4 and 16, next to, from the same
// run on the same machine,
//   (a) a bare puppeteer loop re-using one page per client (the machine's limit) and
//   (b) stock puppeteer-cluster with CONCURRENCY_CONTEXT (what a typical service does),
// plus the peak RSS of all Chromium processes. (a), (b) and (c) the docgen engine alone, with
// its stages and "cost as work grows" (1 to 20 pages, 25 and 200 rows per page) come from
// bench/render-engine-bench.ts, run first as a child process.
//
// End to end: docgen runs as `serve --role all` (child process) on the embedded stack; each
// client creates a generation and waits for its final-state event (a plain NATS subscription
// to docgen's event subject: the moment the generation is COMPLETED, before webhook fan-out
// adds its own hop), then creates the next (closed loop). Latency is create -> COMPLETED from
// the generation's own timestamps (createdAt, updatedAt); throughput is completions per second.
// Stages come from docgen's own Prometheus histograms (ops port /metrics), per cell:
// api create (POST /v1/generations) and render job (the render role's whole job: claim,
// template, Liquid, Chromium, upload, status, event), next to the mean create->completed.
// End to end also renders the 20-page report once at a time (how time grows with pages).
//
// Any variant or cell that fails keeps its row (errors, first message); the run goes on.
//
// Fonts: docgen's Chromium reads DOCGEN_CHROMIUM_FONTCONFIG (default auto: the CJK everyday
// subsets from `docgen fonts build`, docs/architecture.md#print-path); (a) and (b) print with
// the system's fonts, as any puppeteer program does. The run says which docgen had.
//
//   npm run bench                              # everything, human tables on stdout
//   npm run bench -- --json                    # one JSON object on stdout, progress on stderr
//   npm run bench -- --quick                   # concurrency 1,4, fewer rounds and renders
//   npm run bench -- --concurrency=1,4,16      # or BENCH_CONCURRENCY
//   BENCH_SKIP_ENGINE=1 npm run bench          # only the end-to-end part
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { ObjectId } from 'mongodb';
import { displayPrefix, generateApiKey, hashApiKey, SCOPES } from '../src/auth/api-keys.ts';
import { sampleInvoiceContent, sampleInvoiceValues } from '../src/dev/dev-seed.ts';
import type { JsonObject, TemplateVersionContent } from '../src/domain/template.ts';
import { formatId } from '../src/domain/ids.ts';
import { ApiKeysRepository } from '../src/store/api-keys-repository.ts';
import { connectMongo } from '../src/store/mongo.ts';
import { resolveChromiumFontconfig } from '../src/render/fonts/chromium-fontconfig.ts';
import { TemplatesRepository } from '../src/store/templates-repository.ts';
import { WorkspacesRepository } from '../src/store/workspaces-repository.ts';
import { startBenchStack, type BenchStack } from './lib/bench-stack.ts';
import { percentile, sampleTreeMemory } from './lib/measure.ts';
import { failedRow, growthTable, guarded, parseBenchOptions, progress, round1, stageTable, throughputTable } from './lib/report.ts';
import type { BenchRow } from './lib/report.ts';
import { tableReport } from './lib/workloads.ts';
import { RENDER_STAGES } from '../src/render/render-stages.ts';
import { histogramTotals, type HistogramTotals } from './lib/prometheus-text.ts';

const OPTIONS = parseBenchOptions(process.argv.slice(2));
const PAGES = process.env.DOCGEN_RENDER_CONCURRENCY ?? '4';
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const GENERATION_TIMEOUT_MS = 60_000;

// A stray rejection (a client call nobody awaits any more) is reported, never the end of the run.
process.on('unhandledRejection', (reason) => progress(`unhandled rejection: ${reason instanceof Error ? reason.message : String(reason)}`));

function runEngineBench(): BenchRow[] {
  if (process.env.BENCH_SKIP_ENGINE) return [];
  // A temporary file, not in the checkout: a run that is killed leaves it behind.
  const out = join(tmpdir(), `docgen-bench-engine-${process.pid}.json`);
  progress('running bench/render-engine-bench.ts ((a) bare puppeteer, (b) puppeteer-cluster, (c) docgen engine)…');
  const args = [join(ROOT, 'bench/render-engine-bench.ts'), `--concurrency=${OPTIONS.concurrencies.join(',')}`, ...(OPTIONS.quick ? ['--quick'] : [])];
  const result = spawnSync(process.execPath, args, {
    env: { ...process.env, BENCH_JSON_OUT: out },
    // Its stdout is progress here: ours carries only the result.
    stdio: ['ignore', 2, 'inherit'],
  });
  // The child saves its rows after every cell, so a crash keeps what ran.
  const rows = existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as BenchRow[]) : [];
  rmSync(out, { force: true });
  if (result.status !== 0) {
    const why = result.error?.message ?? (result.signal ? `killed by ${result.signal}` : `exited with ${result.status}`);
    rows.push(failedRow('render-engine-bench', 0, `bench/render-engine-bench.ts ${why}; rows above are what it finished`));
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
    const templates = new TemplatesRepository(mongo.db);
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

async function runEndToEnd(): Promise<BenchRow[]> {
  const stack = await startBenchStack({ roles: 'all', label: 'render-bench', env: { DOCGEN_RENDER_CONCURRENCY: PAGES } });
  const report = tableReport(20, 25);
  const waiting = new Map<string, () => void>();
  const arrivedEarly = new Set<string>();
  const nc = await connect({ servers: stack.nats.url });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  try {
    nc.subscribe('docgen.events.>', {
      callback: (_err, msg) => {
        const event = msg.json<{ generationId: string }>();
        const waiter = waiting.get(event.generationId);
        if (waiter) waiter();
        else arrivedEarly.add(event.generationId);
      },
    });
    const { key, templateIds } = await seed(stack, { invoice: sampleInvoiceContent(), report: report.content });
    const request = (port: number, method: string, path: string, payload?: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = http.request(
          { host: '127.0.0.1', port, method, path, agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
    const call = async (method: string, path: string, payload?: string) => {
      const res = await request(stack.publicPort, method, path, payload);
      return { status: res.status, json: JSON.parse(res.text) as Record<string, unknown> };
    };
    const metrics = async (): Promise<HistogramTotals> => histogramTotals((await request(stack.opsPort, 'GET', '/metrics')).text);

    /** One generation, closed loop: create, wait for its final event; returns its id. */
    const oneGeneration = async (body: string): Promise<string> => {
      const created = await call('POST', '/v1/generations', body);
      if (created.status !== 201) throw new Error(`create answered ${created.status}: ${JSON.stringify(created.json).slice(0, 200)}`);
      const id = created.json.id as string;
      await new Promise<void>((resolve, reject) => {
        if (arrivedEarly.delete(id)) return resolve();
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`no final event for ${id} within ${GENERATION_TIMEOUT_MS / 1000} s`));
        }, GENERATION_TIMEOUT_MS);
        waiting.set(id, () => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve();
        });
      });
      return id;
    };

    /** One cell: `total` generations of `body` with `concurrency` clients; failures are counted. */
    const cell = async (variant: string, concurrency: number, total: number, body: string): Promise<BenchRow> => {
      const errors: string[] = [];
      const attempt = (ids: string[]) => oneGeneration(body).then((id) => void ids.push(id), (err: unknown) => void errors.push(err instanceof Error ? err.message : String(err)));
      await Promise.all(Array.from({ length: concurrency }, () => attempt([]))); // warm-up
      errors.length = 0;
      const before = await metrics();
      const memory = sampleTreeMemory(stack.child.pid!);
      const ids: string[] = [];
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < total) {
            next += 1;
            await attempt(ids);
          }
        }),
      );
      const elapsedMs = performance.now() - started;
      const peak = memory.stop();
      const after = await metrics();
      const latencies: number[] = [];
      for (const id of ids) {
        const g = (await call('GET', `/v1/generations/${id}`)).json;
        if (g.status !== 'COMPLETED') errors.push(`${id} ended ${String(g.status)}: ${JSON.stringify(g.error)}`);
        else latencies.push(Date.parse(g.updatedAt as string) - Date.parse(g.createdAt as string));
      }
      latencies.sort((x, y) => x - y);
      const meanMs = latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length);
      const mean = (name: string) => {
        const sum = (after.get(name)?.sum ?? 0) - (before.get(name)?.sum ?? 0);
        const count = (after.get(name)?.count ?? 0) - (before.get(name)?.count ?? 0);
        return count > 0 ? (sum / count) * 1000 : NaN;
      };
      const apiCreate = mean('docgen_http_request_duration_seconds{method="POST",route="/v1/generations"}');
      const renderJob = mean('docgen_render_duration_seconds{outcome="completed"}');
      const stagesMs: Record<string, number> = {};
      if (Number.isFinite(apiCreate)) stagesMs['api create'] = round1(apiCreate)!;
      if (Number.isFinite(renderJob)) {
        stagesMs['render job'] = round1(renderJob)!;
      }
      // Inside the job, from docgen_render_stage_duration_seconds (src/render/render-stages.ts).
      for (const stage of RENDER_STAGES) {
        const ms = mean(`docgen_render_stage_duration_seconds{stage="${stage}"}`);
        if (Number.isFinite(ms)) stagesMs[stage] = round1(ms)!;
      }
      // Not "latency minus render job": the job's clock runs on past updatedAt (event, ack).
      if (latencies.length > 0) stagesMs['create->completed'] = round1(meanMs)!;
      progress(`${variant}, concurrency ${concurrency}: ${latencies.length} completed, ${errors.length} errors in ${Math.round(elapsedMs)} ms`);
      return {
        variant,
        concurrency,
        pdfPerSecond: round1((latencies.length / elapsedMs) * 1000) ?? 0,
        p50Ms: round1(percentile(latencies, 50)),
        p95Ms: round1(percentile(latencies, 95)),
        peakRssMb: round1(peak.rssBytes / (1024 * 1024)),
        completed: latencies.length,
        errors: errors.length,
        errorMessage: errors[0] ?? null,
        stagesMs,
      };
    };

    const rows: BenchRow[] = [];
    const invoice = JSON.stringify({ templateId: templateIds.invoice, variables: sampleInvoiceValues() });
    for (const concurrency of OPTIONS.concurrencies) {
      const total = OPTIONS.quick ? Math.max(10, concurrency * 3) : Math.max(30, concurrency * 6);
      const variant = 'docgen end to end';
      const done = await guarded(`${variant} c=${concurrency}`, () => cell(variant, concurrency, total, invoice));
      rows.push(done.ok ? done.value : failedRow(variant, concurrency, done.message));
    }
    // Cost as work grows, end to end: the 1-page invoice above at concurrency 1 vs a 20-page report.
    const variables: JsonObject = report.variables;
    const variant = `docgen end to end, ${report.name}`;
    const grown = await guarded(variant, () => cell(variant, 1, OPTIONS.quick ? 3 : 8, JSON.stringify({ templateId: templateIds.report, variables })));
    const row = grown.ok ? grown.value : failedRow(variant, 1, grown.message);
    rows.push({ ...row, pages: report.pages, rowsPerPage: report.rowsPerPage, msPerPage: row.p50Ms === null ? null : round1(row.p50Ms / report.pages) });
    return rows;
  } finally {
    agent.destroy();
    await nc.close();
    await stack.stop();
  }
}

const startedAt = new Date().toISOString();
const fontChoice = resolveChromiumFontconfig(process.env.DOCGEN_CHROMIUM_FONTCONFIG ?? 'auto');
const DOCGEN_FONTS = fontChoice.ok ? (fontChoice.file ?? 'system') : fontChoice.problem;
const engine = runEngineBench();
const endToEnd = await guarded('docgen end to end', () => runEndToEnd());
const rows = [...engine, ...(endToEnd.ok ? endToEnd.value : [failedRow('docgen end to end', 0, endToEnd.message)])];

if (OPTIONS.json) {
  console.log(
    JSON.stringify({
      benchmark: 'render',
      startedAt,
      quick: OPTIONS.quick,
      concurrencies: OPTIONS.concurrencies,
      machine: { cpus: availableParallelism(), node: process.version, browserPages: Number(PAGES) },
      docgenFonts: DOCGEN_FONTS,
      rows,
    }),
  );
} else {
  const byConcurrency = (a: BenchRow, b: BenchRow) => a.concurrency - b.concurrency;
  console.log(`\nsample invoice, ${PAGES} docgen browser pages, embedded stack, one machine (${availableParallelism()} CPUs)`);
  console.log(`docgen's Chromium fonts: ${DOCGEN_FONTS}; (a) and (b): the system's`);
  console.log(throughputTable(rows.filter((r) => r.pages === undefined).sort(byConcurrency)));
  const grownRows = rows.filter((r) => r.pages !== undefined);
  if (grownRows.length > 0) console.log(`\nCost as work grows (one at a time; ms per page = p50 / pages):\n${growthTable(grownRows)}`);
  console.log(`\nWhere the time goes (mean ms per PDF; end to end from docgen's own histograms):\n${stageTable(rows)}`);
  const failed = rows.filter((r) => r.errors > 0);
  if (failed.length > 0) console.log(`\n${failed.length} row(s) with errors; the first message of each is in the errors column (full text with --json).`);
}
