// Recovery without an operator, with real `docgen serve` processes on nats-server, the MongoDB
// stand-in, s3rver, Chromium and a loopback webhook receiver:
// - a role started while NATS is down waits (logging it; /readyz 503 naming NATS) and becomes
//   ready within 5 s of NATS starting, without a restart;
// - SIGKILL of the render process that holds a render: another render process takes it over
//   and the generation is COMPLETED within 15 s of the kill, with exactly one final event;
// - restarting the killed process on the same temp directory removes the Chromium profile
//   the dead process left, and nothing of a live process;
// - SIGKILL of the webhooks process in the middle of an attempt: another webhooks process
//   delivers within 15 s of the kill.
import { mkdirSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { MongoClient } from 'mongodb';
import { WebhookEndpointService } from '../../src/gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { parseId } from '../../src/domain/ids.ts';
import { connectNats, type NatsQueue } from '../../src/queue/jetstream.ts';
import { COLLECTIONS, type DeliveryDoc } from '../../src/store/documents.ts';
import { uniqueRunDir } from '../harness/dependencies.ts';
import { startHttpReceiver, type HttpReceiver } from '../harness/http-receiver.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { spawnDocgen, type DocgenProcess } from '../harness/spawn-docgen.ts';
import { adminClients, postJson, startDeps, type Deps } from './api-stack.ts';
import {
  generationsCollection,
  invoiceTemplate,
  longInvoiceValues,
  probe,
  records,
  startRole,
  type RoleProcess,
} from './ops-stack.ts';

let deps: Deps;
let mongo: MongoClient;
let queue: NatsQueue;
let receiver: HttpReceiver;
let api: RoleProcess;
let secret: string;
let templateId: string;
const processes: DocgenProcess[] = [];

beforeAll(async () => {
  deps = await startDeps(
    {
      DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      DOCGEN_RATE_LIMIT_PER_SECOND: '1000',
      DOCGEN_RATE_LIMIT_BURST: '1000',
    },
    { natsControl: true },
  );
  mongo = new MongoClient(deps.env.DOCGEN_MONGODB_URL!);
  receiver = await startHttpReceiver();
  api = await startRole(deps, 'api');
  processes.push(api.proc);
  const admin = adminClients(api.adminPort!, deps.adminToken);
  const workspaceId = (await admin.workspaces.createWorkspace({ name: 'recovery' })).workspace!.id;
  secret = (
    await admin.apiKeys.createApiKey({
      workspaceId,
      name: 'recovery',
      scopes: ['generations:trigger', 'generations:read'],
    })
  ).secret;
  templateId = await invoiceTemplate(admin, workspaceId);
  const transport = createConnectTransport({
    baseUrl: `http://127.0.0.1:${api.adminPort}`,
    httpVersion: '1.1',
    interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${deps.adminToken}`), next(req))],
  });
  await createClient(WebhookEndpointService, transport).createWebhookEndpoint({
    workspaceId,
    url: `${receiver.url}/hooks`,
    events: ['generation.completed'],
  });
  queue = await connectNats({ servers: [deps.nats.url], streamPrefix: deps.env.DOCGEN_NATS_STREAM_PREFIX! });
});

afterAll(async () => {
  await Promise.allSettled(processes.map((p) => p.stop(10_000)));
  await queue?.close();
  await mongo?.close();
  await receiver?.close();
  await deps?.stop();
});

async function role(name: 'render' | 'webhooks', env: Record<string, string> = {}): Promise<RoleProcess> {
  const started = await startRole(deps, name, { DOCGEN_LOG_LEVEL: 'debug', ...env });
  processes.push(started.proc);
  return started;
}

async function createGeneration(lines: number): Promise<string> {
  const res = await postJson(`http://127.0.0.1:${api.publicPort}`, secret, {
    templateId,
    variables: longInvoiceValues(lines),
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

/** Final events on the EVENTS stream for this generation (the stream keeps them for 7 days). */
async function finalEventsFor(generationId: string): Promise<number> {
  const stream = queue.names.streams.events;
  const info = await queue.jsm.streams.info(stream);
  let count = 0;
  for (let seq = info.state.first_seq; info.state.messages > 0 && seq <= info.state.last_seq; seq++) {
    const msg = await queue.jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (msg?.json<{ generationId: string }>().generationId === generationId) count++;
  }
  return count;
}

/** The process (of these) that logged `msg` with `field` = value first. */
async function whoLogged(candidates: RoleProcess[], msg: string, field: string, value: string): Promise<RoleProcess> {
  return pollUntil(
    () => candidates.find((c) => records(c.proc, msg).some((r) => r[field] === value)),
    (found) => found !== undefined,
    { timeoutMs: 30_000, intervalMs: 20, description: `a process to log "${msg}" for ${value}` },
  ) as Promise<RoleProcess>;
}

describe('start-up without the broker', () => {
  it(
    'a role started while NATS is down waits, /readyz naming NATS, and is ready within 5 s of NATS starting',
    { timeout: 120_000 },
    async () => {
      await deps.nats.kill();
      let natsStartedAt: number;
      const waiting: DocgenProcess[] = [];
      try {
        for (const name of ['api', 'webhooks'] as const) {
          const proc = spawnDocgen({ role: name, env: { ...deps.env, DOCGEN_LOG_LEVEL: 'info' } });
          processes.push(proc);
          waiting.push(proc);
        }
        for (const proc of waiting) {
          const line = await proc.waitForLine((l) => l.json?.msg === 'waiting for NATS', 30_000);
          expect(line.json).toMatchObject({ dependency: 'NATS', target: deps.nats.url });
          const ops = await proc.waitForLine((l) => l.json?.msg === 'ops listener ready', 5_000);
          const opsUrl = `http://127.0.0.1:${String(ops.json!.address).split(':').pop()}`;
          const self = { opsUrl } as RoleProcess;
          const notReady = await pollUntil(
            () => probe(self, '/readyz'),
            (p) => p.status === 503 && p.body?.checks?.nats?.ok === false,
            { timeoutMs: 10_000, intervalMs: 100, description: '/readyz 503 naming NATS' },
          );
          expect(notReady.body?.checks?.nats?.error).toMatch(
            new RegExp(`waiting for NATS at ${deps.nats.url.replace(/[.]/g, '\\.')}`),
          );
          // Alive: a restart would not bring NATS back.
          expect((await probe(self, '/healthz')).status).toBe(200);
          (proc as DocgenProcess & { opsUrl?: string }).opsUrl = opsUrl;
        }
      } finally {
        await deps.nats.restart();
        natsStartedAt = Date.now();
      }
      for (const proc of waiting) {
        const self = { opsUrl: (proc as DocgenProcess & { opsUrl?: string }).opsUrl! } as RoleProcess;
        await pollUntil(
          () => probe(self, '/readyz'),
          (p) => p.status === 200,
          { timeoutMs: 5_000, intervalMs: 50, description: 'ready within 5 s of NATS starting' },
        );
        const readyAfterMs = Date.now() - natsStartedAt;
        console.info(`[recovery] ${proc.pid} ready ${readyAfterMs} ms after NATS started`);
        expect(readyAfterMs).toBeLessThan(5_000);
        expect(proc.running).toBe(true);
        expect(records(proc, 'docgen started')).toHaveLength(1);
      }
      await Promise.all(waiting.map((p) => p.stop(10_000)));
    },
  );
});

describe('takeover of work held by a killed process', () => {
  it(
    'SIGKILL of the render process holding a render: COMPLETED within 15 s elsewhere, one final event; its profile is removed at restart',
    { timeout: 180_000 },
    async () => {
      const tmpA = uniqueRunDir('render-a-tmp');
      const tmpB = uniqueRunDir('render-b-tmp');
      mkdirSync(tmpA, { recursive: true });
      const renderers = await Promise.all([
        role('render', { TMPDIR: tmpA, DOCGEN_RENDER_CONCURRENCY: '1' }),
        role('render', { TMPDIR: tmpB, DOCGEN_RENDER_CONCURRENCY: '1' }),
      ]);
      const id = await createGeneration(150);
      const holder = await whoLogged(renderers, 'render started', 'generationId', id);
      const other = renderers.find((r) => r !== holder)!;
      const holderTmp = holder === renderers[0] ? tmpA : tmpB;
      expect(readdirSync(holderTmp).filter((n) => n.startsWith(`docgen-chromium-${holder.proc.pid}-`))).toHaveLength(1);
      holder.proc.kill('SIGKILL');
      await holder.proc.exited;
      const killedAt = Date.now();

      const row = await pollUntil(
        () => generationsCollection(mongo, deps).findOne({ _id: parseId('generation', id)! }),
        (r) => r?.status === 'COMPLETED' || r?.status === 'FAILED',
        { timeoutMs: 30_000, intervalMs: 100, description: 'the generation to reach a final state' },
      );
      const tookMs = Date.now() - killedAt;
      console.info(`[recovery] render taken over and COMPLETED ${tookMs} ms after the SIGKILL`);
      expect(row?.status, row?.error ?? '').toBe('COMPLETED');
      expect(tookMs).toBeLessThan(15_000);
      await pollUntil(() => records(other.proc, 'render completed').some((r) => r.generationId === id), Boolean, {
        timeoutMs: 5_000,
        description: 'the other process logs the completion',
      });
      // Give a duplicate the time to show itself, then count.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await finalEventsFor(id)).toBe(1);

      // The killed process left its Chromium profile behind; a render process started on the
      // same temp directory removes it (and keeps its own).
      const leftover = readdirSync(holderTmp).filter((n) => n.startsWith(`docgen-chromium-${holder.proc.pid}-`));
      const restarted = await role('render', { TMPDIR: holderTmp, DOCGEN_RENDER_CONCURRENCY: '1' });
      const names = readdirSync(holderTmp).filter((n) => n.startsWith('docgen-chromium-'));
      expect(names.filter((n) => n.startsWith(`docgen-chromium-${holder.proc.pid}-`))).toEqual([]);
      expect(names.filter((n) => n.startsWith(`docgen-chromium-${restarted.proc.pid}-`))).toHaveLength(1);
      if (leftover.length > 0)
        expect(records(restarted.proc, 'removed Chromium profiles left by processes that died')[0]).toMatchObject({
          count: leftover.length,
        });
      // The live process's profile in its own directory is untouched.
      const otherTmp = holder === renderers[0] ? tmpB : tmpA;
      expect(readdirSync(otherTmp).filter((n) => n.startsWith(`docgen-chromium-${other.proc.pid}-`))).toHaveLength(1);
      await Promise.all([other.proc.stop(10_000), restarted.proc.stop(10_000)]);
    },
  );

  it(
    'SIGKILL of the webhooks process in the middle of an attempt: another delivers within 15 s',
    { timeout: 180_000 },
    async () => {
      const render = await role('render', { DOCGEN_RENDER_CONCURRENCY: '1' });
      const senders = await Promise.all([role('webhooks'), role('webhooks')]);
      // The first attempt for this generation hangs at the receiver (longer than the test);
      // the next one succeeds. (Events of earlier tests are delivered at once.)
      let id = '';
      let hung = false;
      receiver.answerOtherwise((req) => {
        if (
          !hung &&
          id !== '' &&
          (req.json() as { payload?: { generationId?: string } }).payload?.generationId === id
        ) {
          hung = true;
          return { status: 204, delayMs: 60_000 };
        }
        return { status: 204 };
      });
      id = await createGeneration(5);
      await pollUntil(() => hung, Boolean, {
        timeoutMs: 90_000,
        description: 'the first attempt to reach the receiver',
      });
      const deliveries = mongo.db(deps.env.DOCGEN_MONGODB_DATABASE).collection<DeliveryDoc>(COLLECTIONS.deliveries);
      const delivery = await pollUntil(
        () => deliveries.findOne({ generationId: parseId('generation', id)! }),
        Boolean,
        { timeoutMs: 5_000, description: 'the delivery row' },
      );
      const deliveryId = `dlv_${delivery!._id.toHexString()}`;
      const holder = await whoLogged(senders, 'webhook attempt started', 'deliveryId', deliveryId);
      holder.proc.kill('SIGKILL');
      await holder.proc.exited;
      const killedAt = Date.now();

      const done = await pollUntil(
        () => deliveries.findOne({ _id: delivery!._id }),
        (d) => d?.status === 'SUCCEEDED',
        { timeoutMs: 30_000, intervalMs: 100, description: 'the delivery to succeed' },
      );
      const tookMs = Date.now() - killedAt;
      console.info(`[recovery] webhook attempt taken over and delivered ${tookMs} ms after the SIGKILL`);
      expect(tookMs).toBeLessThan(15_000);
      expect(done!.attempts).toHaveLength(1);
      expect(done!.attempts[0]).toMatchObject({ number: 1, statusCode: 204 });
      const requests = receiver.requests.filter((r) => r.header('x-service-delivery') === deliveryId);
      expect(requests).toHaveLength(2); // the cut-off one and the delivered one: same id (at-least-once)
      await Promise.all([
        render.proc.stop(10_000),
        ...senders.filter((s) => s !== holder).map((s) => s.proc.stop(10_000)),
      ]);
    },
  );
});
