// Shared by the operations tests (issue 7): docgen roles as real `docgen serve` child
// processes on loopback with their ops ports, the sample invoice made long enough that a
// render takes seconds, Prometheus text parsing, and reads of what the roles left behind
// (generation rows, objects in the bucket).
import { Client as MinioClient } from 'minio';
import { MongoClient } from 'mongodb';
import { sampleInvoiceContent, sampleInvoiceValues } from '../../src/dev/dev-seed.ts';
import type { JsonObject } from '../../src/domain/template.ts';
import { contentToProto } from '../../src/rpc/admin-proto.ts';
import { COLLECTIONS, type GenerationDoc } from '../../src/store/documents.ts';
import { spawnDocgen, type DocgenProcess } from '../harness/spawn-docgen.ts';
import type { AdminClients, Deps } from './api-stack.ts';

export interface RoleProcess {
  role: 'api' | 'render' | 'webhooks';
  proc: DocgenProcess;
  opsPort: number;
  publicPort: number | undefined;
  adminPort: number | undefined;
  /** http://127.0.0.1:<opsPort> */
  opsUrl: string;
}

/** `docgen serve --role <role>` on the test's dependencies; resolves once it logged `docgen started`. */
export async function startRole(
  deps: Deps,
  role: RoleProcess['role'],
  env: Record<string, string> = {},
): Promise<RoleProcess> {
  const proc = spawnDocgen({ role, env: { ...deps.env, DOCGEN_LOG_LEVEL: 'info', ...env } });
  try {
    const line = await proc.waitForLine((l) => l.json?.msg === 'docgen started', 60_000);
    const port = (name: string) => (line.json![name] === undefined ? undefined : Number(line.json![name]));
    const opsPort = port('opsPort')!;
    return {
      role,
      proc,
      opsPort,
      publicPort: port('publicPort'),
      adminPort: port('adminPort'),
      opsUrl: `http://127.0.0.1:${opsPort}`,
    };
  } catch (err) {
    await proc.stop(2_000);
    throw err;
  }
}

/** The sample invoice with `lines` invoice lines: about 25 lines a page, so 500 lines is ~20 pages. */
export function longInvoiceValues(lines: number): JsonObject {
  const values = sampleInvoiceValues() as JsonObject & { lines: JsonObject[] };
  const base = values.lines;
  values.lines = Array.from({ length: lines }, (_, i) => ({
    ...base[i % base.length]!,
    description: `${String(base[i % base.length]!.description)} #${i + 1}`,
  }));
  return values;
}

/** Publishes the sample invoice template through the admin API, as the portal would. */
export async function invoiceTemplate(admin: AdminClients, workspaceId: string, name = 'invoice'): Promise<string> {
  const res = await admin.templates.createTemplate({
    workspaceId,
    name,
    content: contentToProto(sampleInvoiceContent()),
    publish: true,
  });
  return res.template!.id;
}

// ---- Prometheus text ----------------------------------------------------------------------

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text exposition format (the subset prom-client writes). */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const m of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    const raw = match[3]!;
    samples.push({
      name: match[1]!,
      labels,
      value: raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw),
    });
  }
  return samples;
}

export async function scrapeMetrics(role: RoleProcess): Promise<{ contentType: string; samples: Sample[] }> {
  const res = await fetch(`${role.opsUrl}/metrics`);
  if (res.status !== 200) throw new Error(`GET /metrics on the ${role.role} process answered ${res.status}`);
  return { contentType: res.headers.get('content-type') ?? '', samples: parseMetrics(await res.text()) };
}

/** Samples of `name` whose labels include `labels`. */
export function find(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** Sum of the matching samples (0 when there are none). */
export function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return find(samples, name, labels).reduce((sum, s) => sum + s.value, 0);
}

// ---- health ----------------------------------------------------------------------------------

export interface Probe {
  status: number;
  body:
    | { status?: string; checks?: Record<string, { ok: boolean; error?: string; details?: Record<string, string> }> }
    | undefined;
}

export async function probe(role: RoleProcess, path: '/healthz' | '/readyz'): Promise<Probe> {
  const res = await fetch(`${role.opsUrl}${path}`, { signal: AbortSignal.timeout(5_000) });
  const text = await res.text();
  let body: Probe['body'];
  try {
    body = JSON.parse(text) as Probe['body'];
  } catch {
    body = undefined;
  }
  return { status: res.status, body };
}

// ---- what the roles left behind --------------------------------------------------------------

export function generationsCollection(mongo: MongoClient, deps: Deps) {
  return mongo.db(deps.env.DOCGEN_MONGODB_DATABASE).collection<GenerationDoc>(COLLECTIONS.generations);
}

/** Every object key in the test's bucket. */
export async function bucketKeys(deps: Deps): Promise<string[]> {
  const endpoint = new URL(deps.s3.endpoint);
  const client = new MinioClient({
    endPoint: endpoint.hostname,
    port: Number(endpoint.port),
    useSSL: false,
    accessKey: deps.s3.accessKey,
    secretKey: deps.s3.secretKey,
    region: deps.s3.region,
    pathStyle: true,
  });
  const keys: string[] = [];
  for await (const item of client.listObjectsV2(deps.s3.bucket, '', true)) {
    if (typeof item.name === 'string') keys.push(item.name);
  }
  return keys;
}

/** Log records (stdout JSON lines) of a process whose msg is `msg`. */
export function records(proc: DocgenProcess, msg: string): Record<string, unknown>[] {
  return proc.lines.filter((l) => l.stream === 'stdout' && l.json?.msg === msg).map((l) => l.json!);
}
