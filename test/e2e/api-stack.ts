// Shared set-up of the public-API tests: real dependencies (nats-server, CongoDB or
// DOCGEN_TEST_MONGODB_URL, s3rver), an in-process docgen with the api role on loopback, and
// admin Connect clients on its admin port to create workspaces, keys and templates the way
// the portal does. Also small HTTP helpers that return status, headers and parsed body.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { buildApp, type App } from '../../src/app/build-app.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { EmbeddedNats } from '../../src/dev/embedded-nats.ts';
import { createAdminClients, type AdminClients } from '../../src/cli/admin/admin-client.ts';
import { ApiKeyMode } from '../../src/gen/docgen/admin/v1/api_key_pb.js';
import { silentLogger, type Logger } from '../../src/ops/logger.ts';
import {
  dependencyEnv,
  startMongo,
  startMongoAndS3Process,
  startNats,
  startS3,
  type TestMongo,
  type TestS3,
} from '../harness/dependencies.ts';
import {
  startMongoFaultProxy,
  type MongoFaultProxy,
  type MongoFaultProxyOptions,
} from '../harness/mongo-fault-proxy.ts';
import type { Fault } from '../harness/serve-with-faults.ts';
import { spawnDocgen, type DocgenProcess } from '../harness/spawn-docgen.ts';
import { LOOPBACK_LISTENERS, testAdminToken, testSecretKey } from '../harness/test-config.ts';

export const ALL_SCOPES = ['generations:trigger', 'generations:read'];

export type { AdminClients };

export interface Deps {
  nats: EmbeddedNats;
  mongo: TestMongo;
  s3: TestS3;
  /** DOCGEN_* for a docgen process using these dependencies (ports 0, api role). */
  env: Record<string, string>;
  adminToken: string;
  stop(): Promise<void>;
}

/** `natsControl`: the test kills or restarts NATS, so it needs an embedded server of its own. */
export async function startDeps(
  extraEnv: Record<string, string> = {},
  options: { natsControl?: boolean; storesInOwnProcess?: boolean } = {},
): Promise<Deps> {
  const stores = async () => {
    if (options.storesInOwnProcess) return startMongoAndS3Process();
    const [mongo, s3] = await Promise.all([startMongo(), startS3()]);
    return { mongo, s3 };
  };
  const [nats, { mongo, s3 }] = await Promise.all([startNats({ control: options.natsControl }), stores()]);
  const adminToken = testAdminToken();
  const env: Record<string, string> = {
    ...dependencyEnv({ nats, mongo, s3 }),
    DOCGEN_ROLES: 'api',
    ...LOOPBACK_LISTENERS,
    DOCGEN_ADMIN_TOKEN: adminToken,
    // Explicit, as an operator would set it: the tests run as root here, where Chromium has no sandbox.
    DOCGEN_CHROMIUM_NO_SANDBOX: 'true',
    DOCGEN_SECRET_KEY: testSecretKey().toString('hex'),
    DOCGEN_LOG_LEVEL: 'error',
    DOCGEN_SHUTDOWN_GRACE_MS: '2000',
    ...extraEnv,
  };
  return {
    nats,
    mongo,
    s3,
    env,
    adminToken,
    async stop() {
      await Promise.allSettled([nats.stop(), mongo.stop(), s3.stop()]);
    },
  };
}

export function adminClients(adminPort: number, adminToken: string): AdminClients {
  return createAdminClients(`http://127.0.0.1:${adminPort}`, { token: adminToken });
}

export interface ApiStack {
  deps: Deps;
  /** The fault proxy docgen reaches MongoDB through (startApiStack's `mongoProxy` option). */
  mongoProxy: MongoFaultProxy | undefined;
  app: App;
  baseUrl: string;
  publicPort: number;
  admin: AdminClients;
  workspace(name?: string): Promise<string>;
  /** A new API key; `mode: 'test'` makes a `svc_test_` key (docs/interface.md#test-mode). */
  key(
    workspaceId: string,
    scopes?: string[],
    rate?: { perSecond: number; burst: number },
    mode?: 'live' | 'test',
  ): Promise<{ id: string; secret: string }>;
  close(): Promise<void>;
}

/** Dependencies plus an in-process api role. The default rate limit is high: tests that
 * exercise the limiter create keys with their own limits. */
export async function startApiStack(
  options: {
    env?: Record<string, string>;
    logger?: Logger;
    natsControl?: boolean;
    /** The MongoDB and S3 stand-ins in a process of their own (startMongoAndS3Process). */
    storesInOwnProcess?: boolean;
    /** Reach MongoDB through a fault proxy (test/harness/mongo-fault-proxy.ts) with these options. */
    mongoProxy?: Omit<MongoFaultProxyOptions, 'upstreamUrl'>;
  } = {},
): Promise<ApiStack> {
  const deps = await startDeps(
    { DOCGEN_RATE_LIMIT_PER_SECOND: '100000', DOCGEN_RATE_LIMIT_BURST: '100000', ...options.env },
    { natsControl: options.natsControl, storesInOwnProcess: options.storesInOwnProcess },
  );
  let app: App;
  let mongoProxy: MongoFaultProxy | undefined;
  try {
    const env = { ...deps.env };
    if (options.mongoProxy) {
      mongoProxy = await startMongoFaultProxy({ ...options.mongoProxy, upstreamUrl: deps.mongo.url });
      env.DOCGEN_MONGODB_URL = mongoProxy.url;
    }
    app = await buildApp(loadConfig(env), { logger: options.logger ?? silentLogger });
  } catch (err) {
    await mongoProxy?.stop();
    await deps.stop();
    throw err;
  }
  const admin = adminClients(app.adminPort!, deps.adminToken);
  return {
    deps,
    mongoProxy,
    app,
    baseUrl: `http://127.0.0.1:${app.publicPort}`,
    publicPort: app.publicPort!,
    admin,
    async workspace(name = 'test workspace') {
      const res = await admin.workspaces.createWorkspace({ name });
      return res.workspace!.id;
    },
    async key(workspaceId, scopes = ALL_SCOPES, rate, mode = 'live') {
      const res = await admin.apiKeys.createApiKey({
        workspaceId,
        name: `key ${randomBytes(3).toString('hex')}`,
        scopes,
        rateLimitPerSecond: rate?.perSecond ?? 0,
        rateLimitBurst: rate?.burst ?? 0,
        mode: mode === 'test' ? ApiKeyMode.TEST : ApiKeyMode.LIVE,
      });
      return { id: res.apiKey!.id, secret: res.secret };
    },
    async close() {
      await app.close().catch(() => {});
      await mongoProxy?.stop();
      await deps.stop();
    },
  };
}

/** A new workspace and a live API key of it with every scope (the service's default rate). */
export async function workspaceWithKey(
  admin: AdminClients,
  name: string,
): Promise<{ workspaceId: string; secret: string }> {
  const workspaceId = (await admin.workspaces.createWorkspace({ name })).workspace!.id;
  const { secret } = await admin.apiKeys.createApiKey({ workspaceId, name, scopes: ALL_SCOPES });
  return { workspaceId, secret };
}

/** A minimal published template whose only variable is `name`. */
export async function publishedTemplate(admin: AdminClients, workspaceId: string, name = 'greeting'): Promise<string> {
  const res = await admin.templates.createTemplate({
    workspaceId,
    name,
    content: { body: '<h1>Hello {{ name }}</h1>', variables: [{ name: 'name', required: false }] },
    publish: true,
  });
  return res.template!.id;
}

// ---- raw HTTP ---------------------------------------------------------------------------

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** Parsed JSON body, undefined when the body is not JSON. */
  body: any;
}

export interface HttpCall {
  method?: string;
  path: string;
  headers?: Record<string, string | undefined>;
  body?: string | Buffer;
  /** Send the body chunked (no Content-Length). */
  chunked?: boolean;
  agent?: http.Agent | false;
}

/** One HTTP/1.1 request with full control of method, path bytes, headers and body framing. */
export function request(baseUrl: string, call: HttpCall): Promise<HttpAnswer> {
  const url = new URL(baseUrl);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(call.headers ?? {})) if (v !== undefined) headers[k] = v;
  if (call.body !== undefined && !call.chunked) headers['Content-Length'] = String(Buffer.byteLength(call.body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: call.method ?? 'GET',
        path: call.path,
        headers,
        agent: call.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = text === '' ? undefined : JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (call.body !== undefined) {
      if (call.chunked) {
        // Several writes so that the body really arrives in chunks.
        const buf = Buffer.from(call.body);
        const step = 64 * 1024;
        for (let i = 0; i < buf.length; i += step) req.write(buf.subarray(i, i + step));
      } else req.write(call.body);
    }
    req.end();
  });
}

export function bearer(secret: string): Record<string, string> {
  return { Authorization: `Bearer ${secret}` };
}

export function postJson(
  baseUrl: string,
  secret: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return request(baseUrl, {
    method: 'POST',
    path: '/v1/generations',
    headers: { ...bearer(secret), 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

// ---- docgen as a child process ----------------------------------------------------------

export interface ChildApi {
  proc: DocgenProcess;
  publicPort: number;
  adminPort: number | undefined;
  /** The ops listener (/metrics, /readyz). */
  opsPort: number;
  baseUrl: string;
}

/** `docgen serve --role <role>` against these dependencies; resolves once it logged its ports. */
export async function spawnServe(
  deps: Deps,
  role: 'api' | 'render' | 'webhooks',
  env: Record<string, string> = {},
  fault?: Fault,
): Promise<ChildApi> {
  const proc = spawnDocgen({ role, env: { ...deps.env, DOCGEN_LOG_LEVEL: 'info', ...env }, fault });
  try {
    const line = await proc.waitForLine((l) => l.json?.msg === 'docgen started', 60_000);
    const publicPort = Number(line.json!.publicPort ?? 0);
    const adminPort = line.json!.adminPort === undefined ? undefined : Number(line.json!.adminPort);
    const opsPort = Number(line.json!.opsPort ?? 0);
    return { proc, publicPort, adminPort, opsPort, baseUrl: `http://127.0.0.1:${publicPort}` };
  } catch (err) {
    await proc.stop(2_000);
    throw err;
  }
}
