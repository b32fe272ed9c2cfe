// `npm run bench`: end-to-end render throughput and latency of docgen (POST /v1/generations
// to COMPLETED) for the sample invoice at concurrency 1, 4 and 16, next to, from the same
// run on the same machine,
//   (a) a bare puppeteer loop re-using one page per client (the machine's limit) and
//   (b) stock puppeteer-cluster with CONCURRENCY_CONTEXT (what a typical service does),
// plus the peak RSS of all Chromium processes. (a) and (b) come from
// bench/render-engine-bench.ts, run first as a child process.
//
// End to end: docgen runs as `serve --role all` (child process) on the embedded stack; each
// client creates a generation and waits for its final-state event (a plain NATS subscription
// to docgen's event subject: the moment the generation is COMPLETED, before webhook fan-out
// adds its own hop), then creates the next (closed loop). Latency is create -> COMPLETED from
// the generation's own timestamps (createdAt, updatedAt); throughput is completions per second.
//
//   npm run bench                      # everything
//   BENCH_SKIP_ENGINE=1 npm run bench  # only the end-to-end part
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { ObjectId } from 'mongodb';
import { displayPrefix, generateApiKey, hashApiKey, SCOPES } from '../src/auth/api-keys.ts';
import { sampleInvoiceContent, sampleInvoiceValues } from '../src/dev/dev-seed.ts';
import { formatId } from '../src/domain/ids.ts';
import { ApiKeysRepository } from '../src/store/api-keys-repository.ts';
import { connectMongo } from '../src/store/mongo.ts';
import { TemplatesRepository } from '../src/store/templates-repository.ts';
import { WorkspacesRepository } from '../src/store/workspaces-repository.ts';
import { startBenchStack } from './lib/bench-stack.ts';
import { formatTable, mb, percentile, sampleTreeMemory } from './lib/measure.ts';

const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? '1,4,16').split(',').map(Number);
const PAGES = process.env.DOCGEN_RENDER_CONCURRENCY ?? '4';
const ROOT = fileURLToPath(new URL('../', import.meta.url));

interface EngineRow {
  variant: string;
  concurrency: number;
  perSecond: number;
  p50Ms: number;
  p95Ms: number;
  chromiumPeakRssBytes: number;
}

interface EndToEndRow {
  concurrency: number;
  perSecond: number;
  p50Ms: number;
  p95Ms: number;
  chromiumPeakRssBytes: number;
  completed: number;
}

function runEngineBench(): EngineRow[] {
  if (process.env.BENCH_SKIP_ENGINE) return [];
  const out = join(ROOT, `.bench-engine-${process.pid}.json`);
  process.stderr.write('running bench/render-engine-bench.ts ((a) bare puppeteer, (b) puppeteer-cluster, (c) docgen engine)…\n');
  const result = spawnSync(process.execPath, [join(ROOT, 'bench/render-engine-bench.ts')], {
    env: { ...process.env, BENCH_JSON_OUT: out, BENCH_CONCURRENCY: CONCURRENCIES.join(',') },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.status !== 0) throw new Error(`render-engine-bench exited with ${result.status}`);
  const rows = JSON.parse(readFileSync(out, 'utf8')) as EngineRow[];
  spawnSync('rm', ['-f', out]);
  return rows;
}

async function runEndToEnd(): Promise<EndToEndRow[]> {
  const stack = await startBenchStack({
    roles: 'all',
    label: 'render-bench',
    env: { DOCGEN_RENDER_CONCURRENCY: PAGES },
  });
  const waiting = new Map<string, () => void>();
  const arrivedEarly = new Set<string>();
  const nc = await connect({ servers: stack.nats.url });
  nc.subscribe('docgen.events.>', {
    callback: (_err, msg) => {
      const event = msg.json<{ generationId: string }>();
      const waiter = waiting.get(event.generationId);
      if (waiter) waiter();
      else arrivedEarly.add(event.generationId);
    },
  });
  const mongo = await connectMongo({ url: stack.mongoUrl, database: stack.database });
  try {
    // Seed: a workspace, a key and the published sample invoice (as `docgen dev` does).
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
    const { template } = await templates.create(workspace._id, 'invoice', sampleInvoiceContent());
    await templates.publish(template._id, 1);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const body = JSON.stringify({ templateId: formatId('template', template._id), variables: sampleInvoiceValues() });
    const call = (method: string, path: string, payload?: string) =>
      new Promise<{ status: number; json: Record<string, unknown> }>((resolve, reject) => {
        const req = http.request(
          { host: '127.0.0.1', port: stack.publicPort, method, path, agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> }));
          },
        );
        req.on('error', reject);
        req.end(payload);
      });

    /** One generation, closed loop: create, wait for its final event; returns its id. */
    const oneGeneration = async (): Promise<string> => {
      const created = await call('POST', '/v1/generations', body);
      if (created.status !== 201) throw new Error(`create answered ${created.status}`);
      const id = created.json.id as string;
      await new Promise<void>((resolve, reject) => {
        if (arrivedEarly.delete(id)) return resolve();
        const timer = setTimeout(() => reject(new Error(`no final event for ${id} within 60 s`)), 60_000);
        waiting.set(id, () => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve();
        });
      });
      return id;
    };

    const rows: EndToEndRow[] = [];
    for (const concurrency of CONCURRENCIES) {
      const total = Math.max(30, concurrency * 6);
      await Promise.all(Array.from({ length: concurrency }, () => oneGeneration())); // warm-up
      const memory = sampleTreeMemory(stack.child.pid!);
      const ids: string[] = [];
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < total) {
            next += 1;
            ids.push(await oneGeneration());
          }
        }),
      );
      const elapsedMs = performance.now() - started;
      const peak = memory.stop();
      const latencies: number[] = [];
      for (const id of ids) {
        const g = (await call('GET', `/v1/generations/${id}`)).json;
        if (g.status !== 'COMPLETED') throw new Error(`${id} ended ${String(g.status)}: ${String(g.error)}`);
        latencies.push(Date.parse(g.updatedAt as string) - Date.parse(g.createdAt as string));
      }
      latencies.sort((x, y) => x - y);
      rows.push({
        concurrency,
        perSecond: Math.round((ids.length / elapsedMs) * 10000) / 10,
        p50Ms: percentile(latencies, 50),
        p95Ms: percentile(latencies, 95),
        chromiumPeakRssBytes: peak.rssBytes,
        completed: ids.length,
      });
      process.stderr.write(`end to end, concurrency ${concurrency}: ${ids.length} generations in ${Math.round(elapsedMs)} ms\n`);
    }
    agent.destroy();
    return rows;
  } finally {
    await nc.close();
    await mongo.close();
    await stack.stop();
  }
}

const engine = runEngineBench();
const endToEnd = await runEndToEnd();
const at = (prefix: string, concurrency: number) => engine.find((r) => r.variant.startsWith(prefix) && r.concurrency === concurrency);

console.log(`\ndocgen end to end (POST /v1/generations -> COMPLETED), sample invoice, ${PAGES} browser pages, embedded stack, one machine`);
console.log(
  formatTable(
    ['variant', 'conc.', 'PDF/s', 'p50 ms', 'p95 ms', 'Chromium peak RSS'],
    CONCURRENCIES.flatMap((c) => {
      const rows: Array<Array<string | number>> = [];
      for (const prefix of ['(a)', '(b)']) {
        const r = at(prefix, c);
        if (r) rows.push([r.variant, c, r.perSecond, Math.round(r.p50Ms), Math.round(r.p95Ms), mb(r.chromiumPeakRssBytes)]);
      }
      const e = endToEnd.find((r) => r.concurrency === c)!;
      rows.push(['docgen end to end', c, e.perSecond, Math.round(e.p50Ms), Math.round(e.p95Ms), mb(e.chromiumPeakRssBytes)]);
      return rows;
    }),
  ),
);
if (engine.length > 0) {
  console.log(
    '\n' +
      formatTable(
        ['conc.', 'end to end vs (a) [target >= 70 %]', 'end to end vs (b) [target >= 3x]', 'p50 at conc. 1 [target < 250 ms]'],
        CONCURRENCIES.map((c) => {
          const e = endToEnd.find((r) => r.concurrency === c)!;
          const a = at('(a)', c);
          const b = at('(b)', c);
          return [
            c,
            a ? `${Math.round((e.perSecond / a.perSecond) * 100)} %` : '-',
            b ? `${(e.perSecond / b.perSecond).toFixed(1)}x` : '-',
            c === 1 ? `${Math.round(e.p50Ms)} ms` : '',
          ];
        }),
      ),
  );
}
