// A benchmark client of a running docgen (bench/lib/bench-stack.ts): creates generations over
// REST and waits for each one's final-state event on NATS (the moment it is COMPLETED, before
// webhook fan-out adds its own hop); reads docgen's own stage histograms from its ops port.
// bench/render-bench.ts starts the stack and seeds it; bench/render-engine-bench.ts drives it
// as variant (d), taking turns with the baselines.
import http from 'node:http';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { RENDER_STAGES } from '../../src/render/render-stages.ts';
import { loopbackRequest } from './loopback-http.ts';
import { histogramTotals, type HistogramTotals } from './prometheus-text.ts';
import { round1 } from './report.ts';

/** Where a seeded docgen listens, and what it was seeded with (passed between processes as JSON). */
export interface EndToEndTarget {
  publicPort: number;
  opsPort: number;
  natsUrl: string;
  /** An API key with every scope. */
  key: string;
  /** The JSON body of POST /v1/generations for the sample invoice. */
  invoiceBody: string;
  /** docgen's process: its Chromium processes are below it. */
  docgenPid: number;
}

export interface EndToEndClient {
  /** One generation: create it, wait for its final event; resolves its id, rejects if it failed. */
  generate(body: string): Promise<string>;
  metrics(): Promise<HistogramTotals>;
  /** The generation as GET /v1/generations/{id} shows it. */
  get(id: string): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

const GENERATION_TIMEOUT_MS = 60_000;

export async function connectEndToEnd(target: EndToEndTarget): Promise<EndToEndClient> {
  const nc: NatsConnection = await connect({ servers: target.natsUrl });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  // Final events by generation id; an event can arrive before the create's answer is read.
  const waiting = new Map<string, (event: { event: string; error?: string }) => void>();
  const arrivedEarly = new Map<string, { event: string; error?: string }>();
  nc.subscribe('docgen.events.>', {
    callback: (_err, msg) => {
      const event = msg.json<{ generationId: string; event: string; error?: string }>();
      const waiter = waiting.get(event.generationId);
      if (waiter) waiter(event);
      else arrivedEarly.set(event.generationId, event);
    },
  });
  const headers = { authorization: `Bearer ${target.key}`, 'content-type': 'application/json' };
  const request = (port: number, method: string, path: string, payload?: string) =>
    loopbackRequest(agent, port, method, path, headers, payload);

  return {
    async generate(body) {
      const created = await request(target.publicPort, 'POST', '/v1/generations', body);
      if (created.status !== 201) throw new Error(`create answered ${created.status}: ${created.text.slice(0, 200)}`);
      const id = (JSON.parse(created.text) as { id: string }).id;
      const event = await new Promise<{ event: string; error?: string }>((resolve, reject) => {
        const early = arrivedEarly.get(id);
        if (early) {
          arrivedEarly.delete(id);
          return resolve(early);
        }
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`no final event for ${id} within ${GENERATION_TIMEOUT_MS / 1000} s`));
        }, GENERATION_TIMEOUT_MS);
        waiting.set(id, (e) => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve(e);
        });
      });
      if (event.event !== 'generation.completed') throw new Error(`${id} ${event.event}: ${event.error ?? ''}`);
      return id;
    },
    async metrics() {
      return histogramTotals((await request(target.opsPort, 'GET', '/metrics')).text);
    },
    async get(id) {
      return JSON.parse((await request(target.publicPort, 'GET', `/v1/generations/${id}`)).text) as Record<
        string,
        unknown
      >;
    },
    async close() {
      agent.destroy();
      await nc.close();
    },
  };
}

/**
 * Mean ms per generation of each stage between two scrapes of docgen's histograms: api create
 * (POST /v1/generations), render job (the render role's whole job), the job's stages
 * (src/render/render-stages.ts), and create->completed, the mean of the generations' own
 * timestamps (createdAt to updatedAt) when `createToCompletedMs` are given.
 */
export function endToEndStages(
  before: HistogramTotals,
  after: HistogramTotals,
  createToCompletedMs: readonly number[] = [],
): Record<string, number> {
  const mean = (name: string) => {
    const sum = (after.get(name)?.sum ?? 0) - (before.get(name)?.sum ?? 0);
    const count = (after.get(name)?.count ?? 0) - (before.get(name)?.count ?? 0);
    return count > 0 ? (sum / count) * 1000 : NaN;
  };
  const stagesMs: Record<string, number> = {};
  const put = (name: string, ms: number) => {
    if (Number.isFinite(ms)) stagesMs[name] = round1(ms)!;
  };
  put('api create', mean('docgen_http_request_duration_seconds{method="POST",route="/v1/generations"}'));
  put('render job', mean('docgen_render_duration_seconds{outcome="completed"}'));
  for (const stage of RENDER_STAGES) put(stage, mean(`docgen_render_stage_duration_seconds{stage="${stage}"}`));
  // Not "latency minus render job": the job's clock runs on past updatedAt (event, ack).
  if (createToCompletedMs.length > 0)
    put('create->completed', createToCompletedMs.reduce((a, b) => a + b, 0) / createToCompletedMs.length);
  return stagesMs;
}

/** createdAt to updatedAt of each generation, read back over the API. */
export async function createToCompleted(client: EndToEndClient, ids: readonly string[]): Promise<number[]> {
  const out: number[] = [];
  for (const id of ids) {
    const g = await client.get(id);
    if (g.status === 'COMPLETED') out.push(Date.parse(g.updatedAt as string) - Date.parse(g.createdAt as string));
  }
  return out;
}
