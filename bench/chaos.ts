// `npm run chaos`: recovery under crashes. Starts the stack as separate role processes on
// loopback (2 api, 2 render, 2 webhooks, each `docgen serve --role X`, restarted by this
// script when it exits, as Kubernetes would), runs CHAOS_GENERATIONS generations (default
// 200) with a webhook endpoint subscribed, SIGKILLs a random role process every 4 s while
// they run (until all are created and 90 % delivered) and kills nats-server once, then
// measures the time from the last kill to quiescence: every generation COMPLETED and every
// delivery SUCCEEDED. It then checks that nothing was lost or duplicated (one final event per
// generation on the EVENTS stream, one delivery per generation, every one received) and counts
// Chromium profiles left behind.
//
// Options (environment):
//   CHAOS_GENERATIONS    generations to create (default 200)
//   CHAOS_KILL_EVERY_MS  time between kills (default 4000)
//   CHAOS_RATE           generations created per second (default 5)
//   CHAOS_SEED           seed of the victim sequence (default 1)
//   CHAOS_KILL_UNTIL     kills go on until this fraction is delivered (default 0.9; at most 5 min)
//   CHAOS_TIMEOUT_MS     longest wait for quiescence after the last kill (default 300000)
//   CHAOS_DOCGEN_ROOT    checkout whose bin/docgen.js runs the roles (default: this one), to
//                        measure another revision with the same script
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { MongoClient } from 'mongodb';
import { startEmbeddedMongo } from '../src/dev/embedded-mongo.ts';
import { startEmbeddedNats } from '../src/dev/embedded-nats.ts';
import { startEmbeddedS3 } from '../src/dev/embedded-s3.ts';
import { embeddedStackEnv } from './lib/bench-stack.ts';
import { ApiKeyService } from '../src/gen/docgen/admin/v1/api_key_pb.js';
import { TemplateService } from '../src/gen/docgen/admin/v1/template_pb.js';
import { WebhookEndpointService } from '../src/gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { WorkspaceService } from '../src/gen/docgen/admin/v1/workspace_pb.js';
import { connectNats } from '../src/queue/jetstream.ts';
import { formatTable } from './lib/measure.ts';

const GENERATIONS = Number(process.env.CHAOS_GENERATIONS ?? 200);
const KILL_EVERY_MS = Number(process.env.CHAOS_KILL_EVERY_MS ?? 4000);
const RATE = Number(process.env.CHAOS_RATE ?? 5);
const KILL_UNTIL = Number(process.env.CHAOS_KILL_UNTIL ?? 0.9);
const MAX_CHAOS_MS = 300_000;
const TIMEOUT_MS = Number(process.env.CHAOS_TIMEOUT_MS ?? 300_000);
const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const DOCGEN_ROOT = resolve(process.env.CHAOS_DOCGEN_ROOT ?? REPO_ROOT);
const RESTART_DELAY_MS = 1000;
// The victims are drawn from a seeded sequence, so runs of two revisions kill the same roles in the same order.
let seed = Number(process.env.CHAOS_SEED ?? 1) >>> 0;
function random(): number {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

type RoleName = 'api' | 'render' | 'webhooks';

interface Supervised {
  id: string;
  role: RoleName;
  tmpDir: string;
  child: ChildProcess | undefined;
  publicPort: number | undefined;
  adminPort: number | undefined;
  starts: number;
  stopped: boolean;
}

const log = (msg: string) => process.stderr.write(`[chaos ${new Date().toISOString().slice(11, 23)}] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'docgen-chaos-'));
  const cleanups: Array<() => Promise<unknown>> = [];
  const processes: Supervised[] = [];
  try {
    const logDir = mkdtempSync(join(tmpdir(), 'docgen-chaos-logs-'));
    log(`data in ${dir}; role logs in ${logDir}; roles run from ${DOCGEN_ROOT}`);
    const mongo = await startEmbeddedMongo();
    cleanups.push(() => mongo.stop());
    const nats = await startEmbeddedNats({ storeDir: join(dir, 'nats') });
    cleanups.push(() => nats.stop());
    const s3 = await startEmbeddedS3({ directory: join(dir, 's3'), buckets: ['docgen'] });
    cleanups.push(() => s3.stop());

    // The webhook receiver: answers 200 after a short delay (so some kills land mid-attempt).
    const received = new Map<string, number>(); // delivery id -> requests
    const generationsDelivered = new Set<string>();
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const deliveryId = String(req.headers['x-service-delivery'] ?? '');
        received.set(deliveryId, (received.get(deliveryId) ?? 0) + 1);
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { payload?: { generationId?: string } };
          if (body.payload?.generationId) generationsDelivered.add(body.payload.generationId);
        } catch {
          // counted by delivery id anyway
        }
        setTimeout(() => res.end('ok'), 50 + Math.random() * 400);
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => receiver.close(r)));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    // Ctrl+C still stops every process this script started.
    process.once('SIGINT', () => {
      for (const p of processes) {
        p.stopped = true;
        p.child?.kill('SIGKILL');
      }
      process.exit(130);
    });
    const adminToken = randomBytes(16).toString('hex');
    const database = 'docgen_chaos';
    const baseEnv: Record<string, string> = {
      ...embeddedStackEnv({ mongoUrl: mongo.url, database, natsUrl: nats.url, s3, adminToken, strip: ['OTEL_'] }),
      DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      DOCGEN_RENDER_CONCURRENCY: '2',
      DOCGEN_LOG_LEVEL: 'info',
    };

    const start = (p: Supervised) => {
      p.starts++;
      const child = spawn(
        join(DOCGEN_ROOT, 'node_modules', '.bin', 'node'),
        [join(DOCGEN_ROOT, 'bin', 'docgen.js'), 'serve', '--role', p.role],
        {
          cwd: DOCGEN_ROOT,
          env: { ...baseEnv, TMPDIR: p.tmpDir },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      p.child = child;
      const out = createWriteStream(join(logDir, `${p.id}.log`), { flags: 'a' });
      child.stdout!.pipe(out, { end: false });
      child.stderr!.pipe(out, { end: false });
      let buffered = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          if (!line.includes('"docgen started"')) continue;
          const started = JSON.parse(line) as { publicPort?: number; adminPort?: number };
          p.publicPort = started.publicPort;
          p.adminPort = started.adminPort;
        }
      });
      child.once('exit', (code, signal) => {
        if (p.child === child) {
          p.child = undefined;
          p.publicPort = undefined;
          p.adminPort = undefined;
        }
        if (p.stopped) return;
        if (signal !== 'SIGKILL') log(`${p.id} exited (code ${code}, signal ${signal}); restarting`);
        setTimeout(() => {
          if (!p.stopped) start(p);
        }, RESTART_DELAY_MS);
      });
    };
    for (const role of ['api', 'api', 'render', 'render', 'webhooks', 'webhooks'] as RoleName[]) {
      const id = `${role}-${processes.filter((p) => p.role === role).length + 1}`;
      const tmp = join(dir, 'tmp', id);
      mkdirSync(tmp, { recursive: true });
      const p: Supervised = {
        id,
        role,
        tmpDir: tmp,
        child: undefined,
        publicPort: undefined,
        adminPort: undefined,
        starts: 0,
        stopped: false,
      };
      processes.push(p);
      start(p);
    }
    const stopAll = async () => {
      for (const p of processes) p.stopped = true;
      await Promise.all(
        processes.map(async (p) => {
          const child = p.child;
          if (!child || child.exitCode !== null || child.signalCode !== null) return;
          const exited = new Promise((r) => child.once('exit', r));
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
          await exited;
          clearTimeout(timer);
        }),
      );
    };
    cleanups.push(stopAll);
    const apiPorts = () => processes.filter((p) => p.role === 'api' && p.publicPort !== undefined);
    const deadline = Date.now() + 120_000;
    while (
      processes.some((p) => p.publicPort === undefined && p.role === 'api') ||
      processes.some((p) => p.child === undefined)
    ) {
      if (Date.now() > deadline) throw new Error('the roles did not start within 120 s');
      await sleep(200);
    }
    await sleep(3000); // render and webhooks roles log nothing port-wise: give them time to come up
    log('stack up: 2 api, 2 render, 2 webhooks processes');

    // Workspace, key, template, endpoint through the admin API.
    const admin = processes.find((p) => p.adminPort !== undefined)!;
    const transport = createConnectTransport({
      baseUrl: `http://127.0.0.1:${admin.adminPort}`,
      httpVersion: '1.1',
      interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${adminToken}`), next(req))],
    });
    const workspaceId = (await createClient(WorkspaceService, transport).createWorkspace({ name: 'chaos' })).workspace!
      .id;
    const key = await createClient(ApiKeyService, transport).createApiKey({
      workspaceId,
      name: 'chaos',
      scopes: ['generations:trigger', 'generations:read'],
    });
    const template = await createClient(TemplateService, transport).createTemplate({
      workspaceId,
      name: 'chaos',
      content: {
        body: '<h1>Invoice {{ number }}</h1>{% for l in lines %}<p>{{ l.sku }} × {{ l.qty }}</p>{% endfor %}',
        variables: [
          { name: 'number', required: true },
          { name: 'lines', required: true },
        ],
      },
      publish: true,
    });
    await createClient(WebhookEndpointService, transport).createWebhookEndpoint({
      workspaceId,
      url: receiverUrl,
      events: ['generation.completed', 'generation.failed'],
    });
    const templateId = template.template!.id;

    // Creators: 4 at a time, each create retried (same Idempotency-Key) until an api process answers 201.
    const created = new Set<string>();
    let nextIndex = 0;
    let kills = 0;
    let lastKillAt = 0;
    const createOne = async (i: number) => {
      const body = JSON.stringify({
        templateId,
        variables: { number: `C-${i}`, lines: Array.from({ length: 20 }, (_, n) => ({ sku: `S-${n}`, qty: n + 1 })) },
      });
      const idempotencyKey = `chaos-${i}-${randomBytes(4).toString('hex')}`;
      for (;;) {
        const apis = apiPorts();
        const api = apis[Math.floor(Math.random() * apis.length)];
        if (api) {
          try {
            const res = await fetch(`http://127.0.0.1:${api.publicPort}/v1/generations`, {
              method: 'POST',
              headers: {
                Authorization: `Bearer ${key.secret}`,
                'Content-Type': 'application/json',
                'Idempotency-Key': idempotencyKey,
              },
              body,
              signal: AbortSignal.timeout(10_000),
            });
            if (res.status === 201 || res.status === 200) {
              created.add(((await res.json()) as { id: string }).id);
              return;
            }
          } catch {
            // the process died under the request: retry elsewhere
          }
        }
        await sleep(250);
      }
    };
    // Paced at CHAOS_RATE creates a second, so creation, rendering and delivery overlap the kills.
    const chaosStart = Date.now();
    const creators = Array.from({ length: 4 }, async () => {
      while (nextIndex < GENERATIONS) {
        const i = nextIndex++;
        const due = chaosStart + (i * 1000) / RATE;
        if (due > Date.now()) await sleep(due - Date.now());
        await createOne(i);
      }
    });

    // Chaos: a random role process SIGKILLed every KILL_EVERY_MS until every generation is
    // created and KILL_UNTIL of them are delivered (so what is left at the last kill is mostly
    // work the killed processes held, not backlog); nats-server once, a third of the way in.
    const client = new MongoClient(mongo.url);
    cleanups.unshift(() => client.close());
    const db = client.db(database);
    let natsKilled = false;
    let creating = true;
    const creatorsDone = Promise.all(creators).then(() => {
      creating = false;
    });
    const enoughDelivered = async () =>
      (await db.collection('deliveries').countDocuments({ status: 'SUCCEEDED' })) >= GENERATIONS * KILL_UNTIL;
    while ((creating || !(await enoughDelivered())) && Date.now() - chaosStart < MAX_CHAOS_MS) {
      await sleep(KILL_EVERY_MS);
      if (!creating && (await enoughDelivered())) break;
      if (!natsKilled && created.size >= GENERATIONS / 3) {
        natsKilled = true;
        log('SIGKILL nats-server (restarting it in 2 s)');
        await nats.kill('SIGKILL');
        lastKillAt = Date.now();
        kills++;
        await sleep(2000);
        await nats.restart();
        continue;
      }
      const alive = processes.filter((p) => p.child !== undefined);
      const victim = alive[Math.floor(random() * alive.length)];
      if (!victim) continue;
      log(`SIGKILL ${victim.id} (${created.size}/${GENERATIONS} created)`);
      victim.child!.kill('SIGKILL');
      lastKillAt = Date.now();
      kills++;
    }
    await creatorsDone;
    log(
      `all ${created.size} generations created, ${kills} kills in ${((Date.now() - chaosStart) / 1000).toFixed(1)} s; waiting for quiescence`,
    );

    // Quiescence: every generation COMPLETED and its delivery SUCCEEDED.
    let quiescentAt: number | undefined;
    let lastReport = 0;
    while (Date.now() - lastKillAt < TIMEOUT_MS) {
      const [completed, failed, succeeded] = await Promise.all([
        db.collection('generations').countDocuments({ status: 'COMPLETED' }),
        db.collection('generations').countDocuments({ status: 'FAILED' }),
        db.collection('deliveries').countDocuments({ status: 'SUCCEEDED' }),
      ]);
      if (completed + failed >= created.size && succeeded >= created.size) {
        quiescentAt = Date.now();
        break;
      }
      if (Date.now() - lastReport > 5000) {
        lastReport = Date.now();
        log(`${completed} completed, ${failed} failed, ${succeeded} delivered of ${created.size}`);
      }
      await sleep(100);
    }

    // What happened, counted.
    const statuses = await db
      .collection('generations')
      .aggregate<{ _id: string; n: number }>([{ $group: { _id: '$status', n: { $sum: 1 } } }])
      .toArray();
    const deliveryStatuses = await db
      .collection('deliveries')
      .aggregate<{ _id: string; n: number }>([{ $group: { _id: '$status', n: { $sum: 1 } } }])
      .toArray();
    const deliveries = await db.collection('deliveries').countDocuments();
    const queue = await connectNats({ servers: [nats.url], streamPrefix: 'DOCGEN', name: 'chaos-count' });
    cleanups.unshift(() => queue.close());
    const eventsPerGeneration = new Map<string, number>();
    const stream = await queue.jsm.streams.info(queue.names.streams.events);
    for (let seq = stream.state.first_seq; seq <= stream.state.last_seq && stream.state.messages > 0; seq++) {
      const msg = await queue.jsm.streams.getMessage(queue.names.streams.events, { seq }).catch(() => null);
      if (!msg) continue;
      const event = msg.json<{ generationId: string }>();
      eventsPerGeneration.set(event.generationId, (eventsPerGeneration.get(event.generationId) ?? 0) + 1);
    }
    const duplicateEvents = [...eventsPerGeneration.values()].filter((n) => n > 1).length;
    const missingEvents = [...created].filter((id) => !eventsPerGeneration.has(id)).length;
    const notDelivered = [...created].filter((id) => !generationsDelivered.has(id)).length;
    const repeatedRequests = [...received.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);
    // Counted once every process has stopped (SIGTERM: each removes its own profiles), so
    // what is left was left by killed processes and never cleaned up.
    await stopAll();
    const profilesLeft = processes.reduce(
      (sum, p) => sum + readdirSync(p.tmpDir).filter((f) => f.startsWith('docgen-chromium-')).length,
      0,
    );

    const seconds = (ms: number | undefined) => (ms === undefined ? 'timed out' : (ms / 1000).toFixed(1));
    console.log(
      `\ndocgen chaos run: ${GENERATIONS} generations, roles as separate processes (2 api, 2 render, 2 webhooks), loopback`,
    );
    console.log(
      `roles from ${DOCGEN_ROOT}; SIGKILL of a random role every ${KILL_EVERY_MS / 1000} s until all are created and ${KILL_UNTIL * 100} % delivered, nats-server killed once\n`,
    );
    console.log(
      formatTable(
        ['measure', 'value'],
        [
          ['kills (role processes + nats-server)', kills],
          ['process starts (incl. restarts)', processes.reduce((s, p) => s + p.starts, 0)],
          [
            'time from last kill to quiescence (s)',
            seconds(quiescentAt === undefined ? undefined : quiescentAt - lastKillAt),
          ],
          ['generations created', created.size],
          ['generation rows by status', statuses.map((s) => `${s._id} ${s.n}`).join(', ')],
          [
            'deliveries (rows) by status',
            `${deliveries}: ${deliveryStatuses.map((s) => `${s._id} ${s.n}`).join(', ')}`,
          ],
          ['final events on the EVENTS stream', [...eventsPerGeneration.values()].reduce((a, b) => a + b, 0)],
          ['generations with more than one final event', duplicateEvents],
          ['generations without a final event', missingEvents],
          ['generations never delivered to the receiver', notDelivered],
          ['webhook requests repeated (at-least-once)', repeatedRequests],
          ['Chromium profiles left after every process stopped', profilesLeft],
        ],
      ),
    );
    const lost = missingEvents + notDelivered + (quiescentAt === undefined ? 1 : 0);
    if (lost > 0 || duplicateEvents > 0) process.exitCode = 1;
  } finally {
    for (const c of cleanups.reverse()) await c().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
