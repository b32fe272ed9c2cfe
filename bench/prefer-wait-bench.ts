// `npm run bench:wait`: what `Prefer: wait` costs one API process (docs/api.md#waiting-for-the-result).
//
// docgen runs as a child process with the api role only (`docgen serve --role api`) on the
// embedded stack; this process drives it and plays the render fleet: once every waiting
// generation is stored, it finishes them the way a render worker does (the row's final state,
// then the final event on `<p>.events.generation.failed`), so the API's cost is measured
// without Chromium on the same two cores.
//
// Measured, with BENCH_WAITERS (default 1000) requests at once on as many keep-alive
// connections:
//  - plain creates: latency of WAITERS concurrent POST /v1/generations;
//  - the API process's RSS and V8 heap with WAITERS creates waiting (Prefer: wait=30), against
//    the same process with the same connections open and idle just before;
//  - the added latency of a waiting create: from the final event's publish (acknowledged by
//    JetStream) to its answer arriving here, per request.
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import http from 'node:http';
import { MongoClient } from 'mongodb';
import { ApiKeyService } from '../src/gen/docgen/admin/v1/api_key_pb.js';
import { WorkspaceService } from '../src/gen/docgen/admin/v1/workspace_pb.js';
import { createDocgenQueue } from '../src/queue/docgen-queue.ts';
import { connectNats } from '../src/queue/jetstream.ts';
import { finalEventFor } from '../src/queue/messages.ts';
import { rssBytes } from '../src/render/chromium/process-tree.ts';
import { GenerationsRepository } from '../src/store/generations-repository.ts';
import { startBenchStack } from './lib/bench-stack.ts';
import { loopbackRequest } from './lib/loopback-http.ts';
import { formatTable, percentile } from './lib/measure.ts';

const WAITERS = Number(process.env.BENCH_WAITERS ?? 1000);
/** Render workers finishing generations at once (as many render slots across the fleet). */
const FINISHERS = 8;

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const ms = (value: number) => value.toFixed(1);

async function main(): Promise<void> {
  const stack = await startBenchStack({
    roles: 'api',
    label: 'wait-bench',
    // Each waiting HTTP/1.1 request holds a connection: room for the waiters and the idle ones.
    env: { DOCGEN_HTTP_MAX_CONNECTIONS: String(WAITERS * 3) },
  });
  const pid = stack.child.pid!;
  const mongo = new MongoClient(stack.mongoUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: WAITERS });
  const nats = await connectNats({ servers: [stack.nats.url], streamPrefix: 'DOCGEN', name: 'wait-bench' });
  try {
    const transport = createConnectTransport({
      baseUrl: `http://127.0.0.1:${stack.adminPort}`,
      httpVersion: '1.1',
      interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${stack.adminToken}`), next(req))],
    });
    const workspaceId = (await createClient(WorkspaceService, transport).createWorkspace({ name: 'wait bench' }))
      .workspace!.id;
    // A tolerance of 1,000 s (burst / rate): the stand-in takes seconds to work through a
    // 1,000-request burst, and a request whose rate-limit decision comes that late would
    // otherwise see a bucket moved past its own clock (429 with a reset seconds away).
    const key = await createClient(ApiKeyService, transport).createApiKey({
      workspaceId,
      name: 'wait bench',
      scopes: ['generations:trigger', 'generations:read'],
      rateLimitPerSecond: 1_000,
      rateLimitBurst: 1_000_000,
    });
    const headers = { Authorization: `Bearer ${key.secret}`, 'Content-Type': 'application/json' };
    const generations = new GenerationsRepository(mongo.db(stack.database));
    const events = createDocgenQueue(nats);
    const heapUsed = async () => {
      const res = await fetch(`http://127.0.0.1:${stack.opsPort}/metrics`);
      return Number(/^nodejs_heap_size_used_bytes(?:\{[^}]*\})? (\S+)$/m.exec(await res.text())?.[1]);
    };
    const create = (run: string, i: number, extra: Record<string, string> = {}) => {
      const body = JSON.stringify({ templateId: 'tpl_0123456789abcdef01234567', variables: { run, i } });
      return loopbackRequest(agent, stack.publicPort, 'POST', '/v1/generations', { ...headers, ...extra }, body).then(
        (answer) => ({ ...answer, at: performance.now() }),
      );
    };
    const burst = async (run: string) => {
      const t0 = performance.now();
      const answers = await Promise.all(Array.from({ length: WAITERS }, (_, i) => create(run, i)));
      const bad = answers.filter((a) => a.status !== 201);
      if (bad.length > 0)
        throw new Error(`${bad.length} plain creates failed, e.g. ${bad[0]!.text} ${JSON.stringify(bad[0]!.headers)}`);
      return answers.map((a) => a.at - t0).sort((a, b) => a - b);
    };

    process.stderr.write(`warming up: ${WAITERS} plain creates (opens ${WAITERS} keep-alive connections)…\n`);
    await burst('warm-up');
    const plain = await burst('plain');
    // The stand-in scans whole collections: keep it to the rows of the phase measured next.
    const collection = mongo.db(stack.database).collection('generations');
    await collection.deleteMany({});
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const idle = { rss: rssBytes(pid), heap: await heapUsed() };

    process.stderr.write(`${WAITERS} creates with Prefer: wait=30…\n`);
    const waitStarted = performance.now();
    const waiting = Array.from({ length: WAITERS }, (_, i) => create('wait', i, { Prefer: 'wait=30' }));
    while ((await collection.countDocuments({ 'data.run': 'wait' })) < WAITERS) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // every request past its first re-read
    const held = { rss: rssBytes(pid), heap: await heapUsed() };

    process.stderr.write(
      `all stored after ${((performance.now() - waitStarted) / 1000).toFixed(1)} s; finishing them as render workers would…\n`,
    );
    const rows = await collection.find({ 'data.run': 'wait' }, { projection: { _id: 1 } }).toArray();
    const publishedAt = new Map<string, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: FINISHERS }, async () => {
        while (next < rows.length) {
          const row = rows[next++]!;
          const doc = await generations.fail(row._id, null, 'finished by the benchmark');
          if (!doc) throw new Error('a waiting generation was already final');
          const event = finalEventFor(doc);
          await events.publishFinalEvent(event);
          publishedAt.set(event.generationId, performance.now());
        }
      }),
    );
    process.stderr.write(
      `all finished ${((performance.now() - waitStarted) / 1000).toFixed(1)} s after the first create\n`,
    );
    const answers = await Promise.all(waiting);
    const added: number[] = [];
    for (const answer of answers) {
      const body = JSON.parse(answer.text) as { id: string; status: string };
      if (answer.status !== 201 || body.status !== 'FAILED' || answer.headers['preference-applied'] !== 'wait=30')
        throw new Error(`waiting create answered ${answer.status} ${answer.text}`);
      added.push(answer.at - publishedAt.get(body.id)!);
    }
    added.sort((a, b) => a - b);
    const after = { rss: rssBytes(pid), heap: await heapUsed() };

    process.stdout.write(
      `\nPrefer: wait on one API process (${WAITERS} requests at once, HTTP/1.1 keep-alive, embedded stack)\n\n`,
    );
    process.stdout.write(
      formatTable(
        ['measure', 'p50 ms', 'p95 ms', 'max ms'],
        [
          [`plain create, ${WAITERS} at once`, ms(percentile(plain, 50)), ms(percentile(plain, 95)), ms(plain.at(-1)!)],
          [
            'waiting create: final event -> answer',
            ms(percentile(added, 50)),
            ms(percentile(added, 95)),
            ms(added.at(-1)!),
          ],
        ],
      ) + '\n\n',
    );
    process.stdout.write(
      formatTable(
        ['API process', 'RSS MB', 'V8 heap used MB'],
        [
          [`${WAITERS} connections open, idle`, mb(idle.rss), mb(idle.heap)],
          [`${WAITERS} creates waiting`, mb(held.rss), mb(held.heap)],
          ['after they were answered', mb(after.rss), mb(after.heap)],
          [
            'per waiting request (KB)',
            ((held.rss - idle.rss) / WAITERS / 1024).toFixed(1),
            ((held.heap - idle.heap) / WAITERS / 1024).toFixed(1),
          ],
        ],
      ) + '\n',
    );
  } finally {
    agent.destroy();
    await nats.close().catch(() => {});
    await mongo.close().catch(() => {});
    await stack.stop();
  }
}

await main();
