// `npm run bench:api`: throughput and latency of the public REST API on the embedded stack.
//
// This process runs the embedded dependencies (the MongoDB stand-in in memory, s3rver, and
// nats-server as its child) and the load generator; docgen itself runs as a child process
// (`docgen serve --role api`, as in production), so the API has a core of its own. No render
// role: created jobs just wait in JetStream. The key's rate limit is set out of the way.
//
// Measured: create (POST /v1/generations) and get (GET /v1/generations/{id} of a COMPLETED
// generation, so the presign is included) at 1 and 50 concurrent keep-alive connections,
// bounded by count and time. Then a breakdown: each dependency call the request pipeline
// makes, timed alone from here against the same dependencies; what is left of a request's
// median is HTTP, JSON and the pipeline itself.
//
// Options (environment): BENCH_SECONDS (per run, default 8), BENCH_REQUESTS (per run, default
// 3000).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { MongoClient, ObjectId } from 'mongodb';
import { hashApiKey } from '../src/auth/api-keys.ts';
import { parseId } from '../src/domain/ids.ts';
import { ApiKeyService } from '../src/gen/docgen/admin/v1/api_key_pb.js';
import { TemplateService } from '../src/gen/docgen/admin/v1/template_pb.js';
import { WorkspaceService } from '../src/gen/docgen/admin/v1/workspace_pb.js';
import { connectNats } from '../src/queue/jetstream.ts';
import { createObjectStore } from '../src/storage/object-store.ts';
import { ApiKeysRepository } from '../src/store/api-keys-repository.ts';
import { GenerationsRepository } from '../src/store/generations-repository.ts';
import { RateLimitsRepository } from '../src/store/rate-limits-repository.ts';
import { TemplatesRepository } from '../src/store/templates-repository.ts';
import { startBenchStack } from './lib/bench-stack.ts';
import { loopbackRequest } from './lib/loopback-http.ts';
import { formatTable, percentile } from './lib/measure.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const MAX_REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);

interface RunResult {
  name: string;
  concurrency: number;
  completed: number;
  errors: number;
  firstError?: string;
  seconds: number;
  latencies: number[];
  /** CPU used during the run, as % of one core: docgen, nats-server, this process. */
  cpu: { docgen: number; nats: number; bench: number };
}

/** CPU time (ms) a process has used, from /proc (Linux; clock ticks of 10 ms). */
function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/** Closed loop: `concurrency` workers, each starting its next request when one ends. */
async function run(
  name: string,
  concurrency: number,
  call: () => Promise<number>,
  expected: number,
  pids: { docgen?: number; nats?: number },
): Promise<RunResult> {
  const latencies: number[] = [];
  const cpuBefore = { docgen: processCpuMs(pids.docgen), nats: processCpuMs(pids.nats), bench: process.cpuUsage() };
  let started = 0;
  let errors = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const deadline = t0 + SECONDS * 1000;
  const worker = async () => {
    while (started < MAX_REQUESTS && performance.now() < deadline) {
      started++;
      const s = performance.now();
      try {
        const status = await call();
        if (status !== expected) throw new Error(`HTTP ${status}`);
        latencies.push(performance.now() - s);
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const bench = process.cpuUsage(cpuBefore.bench);
  const percent = (ms: number) => (100 * ms) / (seconds * 1000);
  const cpu = {
    docgen: percent(processCpuMs(pids.docgen) - cpuBefore.docgen),
    nats: percent(processCpuMs(pids.nats) - cpuBefore.nats),
    bench: percent((bench.user + bench.system) / 1000),
  };
  return {
    name,
    concurrency,
    completed: latencies.length,
    errors,
    firstError,
    seconds,
    latencies: latencies.sort((a, b) => a - b),
    cpu,
  };
}

/** Times one dependency call `count` times in a row; returns sorted milliseconds. */
async function timeStep(count: number, step: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < 20; i++) await step(-1 - i); // warm-up
  for (let i = 0; i < count; i++) {
    const s = performance.now();
    await step(i);
    samples.push(performance.now() - s);
  }
  return samples.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const stopList: (() => Promise<unknown>)[] = [];
  const stack = await startBenchStack({ roles: 'api', label: 'api-bench' });
  const { child, adminToken, s3, nats } = stack;
  const ports = { publicPort: stack.publicPort, adminPort: stack.adminPort };
  const mongoUrl = stack.mongoUrl;
  try {
    const transport = createConnectTransport({
      baseUrl: `http://127.0.0.1:${ports.adminPort}`,
      httpVersion: '1.1',
      interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${adminToken}`), next(req))],
    });
    const workspaceId = (await createClient(WorkspaceService, transport).createWorkspace({ name: 'bench' })).workspace!
      .id;
    const key = await createClient(ApiKeyService, transport).createApiKey({
      workspaceId,
      name: 'bench',
      scopes: ['generations:trigger', 'generations:read'],
    });
    const template = await createClient(TemplateService, transport).createTemplate({
      workspaceId,
      name: 'bench',
      content: {
        body: '<p>{{ customer }} owes {{ total }}</p>',
        variables: [
          { name: 'customer', required: true },
          { name: 'total', required: true },
        ],
      },
      publish: true,
    });
    const templateId = template.template!.id;
    const auth = { Authorization: `Bearer ${key.secret}` };
    const createBody = JSON.stringify({
      templateId,
      variables: {
        customer: 'Ada Lovelace',
        total: 42.5,
        lines: [
          { sku: 'A-1', qty: 2 },
          { sku: 'B-7', qty: 1 },
        ],
      },
    });
    const createHeaders = { ...auth, 'Content-Type': 'application/json' };

    // A COMPLETED generation to read (so that GET includes minting the presigned URL).
    const client = new MongoClient(mongoUrl);
    stopList.unshift(() => client.close());
    const db = client.db('docgen_bench');
    const generations = new GenerationsRepository(db);
    const seedAgent = new http.Agent({ keepAlive: true });
    const seeded = JSON.parse(
      (await loopbackRequest(seedAgent, ports.publicPort, 'POST', '/v1/generations', createHeaders, createBody)).text,
    ) as { id: string };
    seedAgent.destroy();
    const seededId = parseId('generation', seeded.id)!;
    await generations.claim(seededId, 'bench', 60_000);
    const objects = createObjectStore({
      endpoint: new URL(s3.endpoint),
      publicEndpoint: new URL(s3.endpoint),
      accessKey: s3.accessKey,
      secretKey: s3.secretKey,
      bucket: 'docgen',
      region: s3.region,
    });
    await objects.putPdf(`bench/${seeded.id}.pdf`, Buffer.from('%PDF-1.4\n%%EOF\n'), { downloadFilename: 'bench.pdf' });
    await generations.complete(seededId, 'bench', `bench/${seeded.id}.pdf`, 1);

    const results: RunResult[] = [];
    const calls = (agent: http.Agent) => ({
      create: () =>
        loopbackRequest(agent, ports.publicPort, 'POST', '/v1/generations', createHeaders, createBody).then(
          (r) => r.status,
        ),
      get: () =>
        loopbackRequest(agent, ports.publicPort, 'GET', `/v1/generations/${seeded.id}`, auth).then((r) => r.status),
    });
    for (const [name, concurrency] of [
      ['create', 1],
      ['create', 50],
      ['get', 1],
      ['get', 50],
    ] as const) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
      process.stderr.write(`running ${name} at ${concurrency} connection(s)…\n`);
      const call = calls(agent)[name];
      // Warm the connections and the JIT before measuring.
      await Promise.all(Array.from({ length: concurrency }, () => call()));
      results.push(
        await run(name, concurrency, call, name === 'create' ? 201 : 200, { docgen: child.pid, nats: nats.pid }),
      );
      agent.destroy();
    }

    // ---- breakdown: each dependency call alone, sequential ----
    // The stand-in scans a whole collection per query, so step times grow with the data: the
    // requests they are compared with are measured again now, at the same size.
    process.stderr.write('timing each step of the pipeline alone…\n');
    const oneAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const reference = { create: [] as number[], get: [] as number[] };
    for (const name of ['create', 'get'] as const) {
      reference[name] = await timeStep(300, calls(oneAgent)[name]);
    }
    oneAgent.destroy();
    const generationCount = await db.collection('generations').countDocuments();
    const apiKeys = new ApiKeysRepository(db);
    const rateLimits = new RateLimitsRepository(db);
    const templates = new TemplatesRepository(db, randomBytes(32));
    const queue = await connectNats({ servers: [nats.url], streamPrefix: 'DOCGEN', name: 'bench' });
    stopList.unshift(() => queue.close());
    const hash = hashApiKey(key.secret);
    const benchKeyId = new ObjectId();
    const templateObjectId = parseId('template', templateId)!;
    const workspaceObjectId = parseId('workspace', workspaceId)!;
    const pending = new Map<number, ObjectId>();
    const N = 500;
    const steps: [string, number[]][] = [
      ['api key lookup (MongoDB; cached 500 ms per key)', await timeStep(N, () => apiKeys.findByHash(hash))],
      [
        'rate limit (GCRA: two atomic updates)',
        await timeStep(N, () => rateLimits.take(benchKeyId, { perSecond: 1e6, burst: 1e6 })),
      ],
      ['create: template lookup', await timeStep(N, () => templates.get(templateObjectId))],
      [
        'create: insert generation',
        await timeStep(N, async (i) => {
          const doc = generations.newDoc({
            workspaceId: workspaceObjectId,
            templateId: templateObjectId,
            templateRef: templateId,
            templateName: 'bench',
            data: { customer: 'x', total: 1 },
          });
          await generations.insert(doc);
          pending.set(i, doc._id);
        }),
      ],
      [
        'create: publish render job (JetStream ack)',
        await timeStep(N, () =>
          queue.publish(queue.names.subjects.renderJobs, { generationId: 'gen_bench' }, randomBytes(8).toString('hex')),
        ),
      ],
      [
        'create: mark job published',
        await timeStep(N, (i) => generations.markJobPublished(pending.get(i) ?? seededId)),
      ],
      ['get: read generation', await timeStep(N, () => generations.get(seededId))],
      [
        'get: presign output URL (CPU only)',
        await timeStep(N, () => objects.presignGet(`bench/${seeded.id}.pdf`, 3600)),
      ],
    ];

    // ---- report ----
    const rows = results.map((r) => [
      r.name,
      r.concurrency,
      r.completed,
      r.errors,
      r.completed / r.seconds,
      percentile(r.latencies, 50),
      percentile(r.latencies, 99),
      Math.round(r.cpu.docgen),
      Math.round(r.cpu.bench),
      Math.round(r.cpu.nats),
    ]);
    console.log(
      '\ndocgen public API on the embedded stack (api role as a child process; MongoDB stand-in in memory, nats-server, s3rver)',
    );
    console.log(`bounded to ${SECONDS} s or ${MAX_REQUESTS} requests per run; keep-alive connections\n`);
    console.log(
      formatTable(
        [
          'operation',
          'connections',
          'requests',
          'errors',
          'req/s',
          'p50 ms',
          'p99 ms',
          'docgen CPU %',
          'stand-ins+load CPU %',
          'nats CPU %',
        ],
        rows,
      ),
    );
    for (const r of results)
      if (r.errors > 0) console.log(`  ${r.name}@${r.concurrency}: first error: ${r.firstError}`);

    const p50 = (s: number[]) => percentile(s, 50);
    const stepRows: Array<Array<string | number>> = steps.map(([name, samples]) => [
      name,
      p50(samples),
      percentile(samples, 99),
    ]);
    const median = (name: string) => p50(steps.find(([n]) => n.startsWith(name))![1]);
    // A request finds its key in the cache almost always: the lookup is not on the median path.
    const createSteps =
      median('rate limit') +
      median('create: template') +
      median('create: insert') +
      median('create: publish') +
      median('create: mark');
    const getSteps = median('rate limit') + median('get: read') + median('get: presign');
    const create1 = p50(reference.create);
    const get1 = p50(reference.get);
    stepRows.push(['create, 1 connection (same data size)', create1, percentile(reference.create, 99)]);
    stepRows.push(['  of which its dependency steps', createSteps, NaN]);
    stepRows.push(['  of which HTTP, JSON, pipeline', create1 - createSteps, NaN]);
    stepRows.push(['get, 1 connection (same data size)', get1, percentile(reference.get, 99)]);
    stepRows.push(['  of which its dependency steps', getSteps, NaN]);
    stepRows.push(['  of which HTTP, JSON, pipeline', get1 - getSteps, NaN]);
    console.log(
      `\nwhere the time goes: each step alone, sequential, from the benchmark process (${generationCount} generations stored)`,
    );
    console.log(
      formatTable(
        ['step', 'p50 ms', 'p99 ms'],
        stepRows.map((r) =>
          r.map((c) =>
            typeof c === 'number' && Number.isNaN(c) ? '' : typeof c === 'number' ? Number(c.toFixed(2)) : c,
          ),
        ),
      ),
    );
  } finally {
    for (const stop of stopList) await stop().catch(() => {});
    await stack.stop();
  }
}

await main();
