// The admin plane end to end on real parts: CongoDB (or DOCGEN_TEST_MONGODB_URL), a real
// nats-server for redelivery jobs, the real Liquid analyzer, and the admin services served by
// Connect on loopback. Every `docgen admin` command runs through runAdminCli; results are
// checked through the admin API (and, for secrets, in the raw MongoDB documents).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, ConnectError } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { BSON, MongoClient, ObjectId, type Db } from 'mongodb';
import { createAdminClients, type AdminClients } from '../../src/cli/admin/admin-client.ts';
import { runAdminCli } from '../../src/cli/admin/run-admin-cli.ts';
import type { EmbeddedNats } from '../../src/dev/embedded-nats.ts';
import { formatId, parseId } from '../../src/domain/ids.ts';
import { DeliveryStatus } from '../../src/gen/docgen/admin/v1/delivery_pb.js';
import { TemplateStatus } from '../../src/gen/docgen/admin/v1/template_pb.js';
import { silentLogger } from '../../src/ops/logger.ts';
import { connectNats, type NatsQueue } from '../../src/queue/jetstream.ts';
import { createDocgenQueue } from '../../src/queue/docgen-queue.ts';
import { analyzeTemplate, diagnoseTemplate } from '../../src/render/liquid/analyze-template.ts';
import { createRenderEngine } from '../../src/render/render-engine.ts';
import { createPreviewClient, startPreviewService } from '../../src/render/preview-service.ts';
import { previewSubject } from '../../src/queue/preview-channel.ts';
import { GenerationService } from '../../src/generations/generation-service.ts';
import { PageTokens } from '../../src/store/pagination.ts';
import { createAdminServices } from '../../src/app/admin-services.ts';
import { registerAdminRoutes } from '../../src/rpc/admin-routes.ts';
import { createIdentityRepositories } from '../../src/identity/identity.ts';
import { GenerationsRepository } from '../../src/store/generations-repository.ts';
import { BatchesRepository } from '../../src/store/batches-repository.ts';
import { StatsRepository } from '../../src/store/stats-repository.ts';
import { RateLimitsRepository } from '../../src/store/rate-limits-repository.ts';
import { ApiKeysRepository } from '../../src/store/api-keys-repository.ts';
import { CertificatesRepository } from '../../src/store/certificates-repository.ts';
import { DeliveriesRepository } from '../../src/store/deliveries-repository.ts';
import { COLLECTIONS, ensureIndexes, type DeliveryDoc, type WebhookEndpointDoc } from '../../src/store/documents.ts';
import { TemplatesRepository } from '../../src/store/templates-repository.ts';
import { WebhookEndpointsRepository } from '../../src/store/webhook-endpoints-repository.ts';
import { WorkspacesRepository } from '../../src/store/workspaces-repository.ts';
import { decryptSecret, webhookSecretContext } from '../../src/webhooks/secret-box.ts';
import { runDir, startMongo, startNats, type TestMongo } from '../harness/dependencies.ts';
import { startHttpReceiver, type HttpReceiver } from '../harness/http-receiver.ts';
import { renderEngineTestConfig, testAdminToken, testSecretKey } from '../harness/test-config.ts';
import { TEMPLATES_TEST_KEY } from '../harness/test-config.ts';

const ADMIN_TOKEN = testAdminToken();
const SECRET_KEY = testSecretKey();

type Clients = AdminClients;

let mongo: TestMongo;
let mongoClient: MongoClient;
let db: Db;
let nats: EmbeddedNats;
let queue: NatsQueue;
let receiver: HttpReceiver;
let strict: { url: string; server: Server };
let dev: { url: string; server: Server };
let api: Clients;
let files: string;
let preview: { close(): Promise<void> } | undefined;

/**
 * A render process's preview service (src/render/preview-service.ts) on this test's NATS,
 * started on first use: previews travel over NATS request/reply as in production.
 */
async function startPreviewRenderer(): Promise<{ close(): Promise<void> }> {
  const engine = await createRenderEngine(
    renderEngineTestConfig({
      concurrency: 1,
      timeoutMs: 30_000,
      browserMaxRssMb: 1500,
      maxAttempts: 1,
      userDataDir: runDir(`chromium-admin-${randomBytes(3).toString('hex')}`),
    }),
    { logger: silentLogger, metrics: undefined },
  );
  const server = startPreviewService(queue.connection, {
    subject: previewSubject(queue.prefix),
    concurrency: 1,
    renderer: engine.renderer,
    logger: silentLogger,
  });
  return {
    async close() {
      await server.stop();
      await engine.close();
    },
  };
}

async function startAdminServer(allowInsecureWebhookUrls: boolean): Promise<{ url: string; server: Server }> {
  const repositories = {
    workspaces: new WorkspacesRepository(db),
    apiKeys: new ApiKeysRepository(db),
    templates: new TemplatesRepository(db, TEMPLATES_TEST_KEY),
    webhookEndpoints: new WebhookEndpointsRepository(db),
    deliveries: new DeliveriesRepository(db),
    generations: new GenerationsRepository(db),
    certificates: new CertificatesRepository(db),
    stats: new StatsRepository(db),
    batches: new BatchesRepository(db),
  };
  const generationService = new GenerationService({
    generations: repositories.generations,
    templates: repositories.templates,
    jobs: { publishRenderJob: async () => {} },
    // This file stores no PDFs (the generations screen is tested in test/e2e/portal-api.test.ts).
    urls: { presignGet: async () => Promise.reject(new Error('no object store in this test')) },
    pageTokens: new PageTokens(SECRET_KEY),
  });
  const services = createAdminServices({
    repositories,
    secretKey: SECRET_KEY,
    allowInsecureWebhookUrls,
    adminToken: ADMIN_TOKEN,
    analyzeTemplate,
    diagnoseTemplate,
    renderPreview: createPreviewClient(queue.connection, {
      subject: previewSubject(queue.prefix),
      timeoutMs: 40_000,
    }),
    generationService,
    objects: {
      remove: async () => Promise.reject(new Error('no object store in this test')),
      getObject: async () => Promise.reject(new Error('no object store in this test')),
    },
    enqueueDelivery: (job, msgId) => createDocgenQueue(queue).publishDeliveryJob(job, msgId),
    identity: {
      repositories: createIdentityRepositories(db),
      rateLimits: new RateLimitsRepository(db),
      portalBaseUrl: () => 'http://127.0.0.1:8081',
    },
  });
  const handler = connectNodeAdapter({
    routes: (router) => {
      registerAdminRoutes(router, services, {
        onInternal: (cause) => console.error('admin test server: internal error', cause),
      });
    },
  });
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

function clientsFor(baseUrl: string, token: string | undefined): Clients {
  return createAdminClients(baseUrl, { token });
}

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(args: string[], options: { url?: string; token?: string | null } = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const env: Record<string, string | undefined> = { DOCGEN_ADMIN_URL: options.url ?? strict.url };
  if (options.token !== null) env.DOCGEN_ADMIN_TOKEN = options.token ?? ADMIN_TOKEN;
  const code = await runAdminCli(args, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env,
  });
  return { code, stdout, stderr };
}

/** Runs a command with --json and returns the parsed output; fails the test on a non-zero exit. */
async function cliJson<T = Record<string, unknown>>(args: string[], options: { url?: string } = {}): Promise<T> {
  const result = await cli([...args, '--json'], options);
  expect(result.stderr, `docgen admin ${args.join(' ')}`).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as T;
}

async function writeFiles(entries: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(entries)) {
    await mkdir(join(files, name, '..'), { recursive: true });
    await writeFile(join(files, name), text);
  }
}

/** Every document of every collection, as canonical Extended JSON. */
async function dumpDatabase(): Promise<string> {
  const out: Record<string, unknown[]> = {};
  for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
    out[name] = await db.collection(name).find({}).toArray();
  }
  return BSON.EJSON.stringify(out, { relaxed: false });
}

/** A secret in every encoding it could plausibly be stored in. */
function encodingsOf(secret: string): string[] {
  const forms = new Set<string>([secret]);
  const raw = Buffer.from(secret, 'utf8');
  forms.add(raw.toString('hex'));
  forms.add(raw.toString('base64').replace(/=+$/, ''));
  forms.add(raw.toString('base64url'));
  for (const prefix of ['svc_live_', 'whsec_']) {
    if (!secret.startsWith(prefix)) continue;
    const body = secret.slice(prefix.length);
    forms.add(body);
    forms.add(Buffer.from(body, 'utf8').toString('hex'));
    forms.add(Buffer.from(body, 'utf8').toString('base64').replace(/=+$/, ''));
    if (prefix === 'whsec_') {
      // The webhook secret's body is base64 of 32 random bytes: look for those bytes too.
      const bytes = Buffer.from(body, 'base64');
      forms.add(bytes.toString('hex'));
      forms.add(bytes.toString('base64url'));
      forms.add(bytes.toString('base64').replace(/=+$/, ''));
      forms.add(bytes.toString('base64').slice(0, 24)); // an unpadded fragment
    }
  }
  return [...forms];
}

beforeAll(async () => {
  [mongo, nats, receiver] = await Promise.all([startMongo(), startNats(), startHttpReceiver()]);
  mongoClient = new MongoClient(mongo.url);
  await mongoClient.connect();
  db = mongoClient.db(mongo.database);
  await ensureIndexes(db);
  queue = await connectNats({
    servers: [nats.url],
    streamPrefix: `A${randomBytes(3).toString('hex').toUpperCase()}`,
    name: 'docgen-admin-test',
  });
  await queue.ensureStreams();
  strict = await startAdminServer(false);
  dev = await startAdminServer(true);
  api = clientsFor(strict.url, ADMIN_TOKEN);
  files = runDir(`admin-cli-${randomBytes(4).toString('hex')}`);
});

afterAll(async () => {
  for (const s of [strict, dev]) {
    if (!s) continue;
    s.server.closeAllConnections();
    await new Promise((resolve) => s.server.close(resolve));
  }
  await preview?.close();
  await queue?.close();
  await mongoClient?.close();
  await Promise.all([mongo?.stop(), nats?.stop(), receiver?.close()]);
});

describe('docgen admin against the admin services', () => {
  let workspaceId: string;
  let otherWorkspaceId: string;
  const keys: { id: string; key: string }[] = [];
  const webhookSecrets: string[] = [];
  let endpointId: string;
  let templateId: string;

  it('workspace create|get|list', async () => {
    const created = await cliJson(['workspace', 'create', '--name', 'Acme Invoices']);
    expect(Object.keys(created)).toEqual(['id']);
    workspaceId = created.id as string;
    expect(workspaceId).toMatch(/^ws_[0-9a-f]{24}$/);
    otherWorkspaceId = (await cliJson(['workspace', 'create', '--name', 'Other'])).id as string;

    const got = await cliJson(['workspace', 'get', workspaceId]);
    expect(got).toMatchObject({ id: workspaceId, name: 'Acme Invoices' });
    const fromApi = await api.workspaces.getWorkspace({ id: workspaceId });
    expect(fromApi.workspace?.name).toBe('Acme Invoices');

    const listed = await cliJson<{ workspaces: { id: string }[]; nextPageToken: string | null }>(['workspace', 'list']);
    expect(listed.workspaces.map((w) => w.id)).toEqual([otherWorkspaceId, workspaceId]);
    const paged = await cliJson<{ workspaces: { id: string }[]; nextPageToken: string | null }>([
      'workspace',
      'list',
      '--page-size',
      '1',
    ]);
    expect(paged.workspaces.map((w) => w.id)).toEqual([otherWorkspaceId]);
    const second = await cliJson<{ workspaces: { id: string }[] }>([
      'workspace',
      'list',
      '--page-size',
      '1',
      '--page-token',
      paged.nextPageToken!,
    ]);
    expect(second.workspaces.map((w) => w.id)).toEqual([workspaceId]);

    const human = await cli(['workspace', 'list']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('Acme Invoices');
    expect((await cli(['workspace', 'create', '--name', 'x'.repeat(201)])).stderr).toContain('at most 200 characters');
    const missing = await cli(['workspace', 'get', formatId('workspace', new ObjectId())]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/Workspace ws_[0-9a-f]{24} not found/);
  });

  it('workspace update: retention set, shown, refused below a minute, removed; rename', async () => {
    expect(await cliJson(['workspace', 'get', otherWorkspaceId])).toMatchObject({ retention: null });
    expect(await cliJson(['workspace', 'update', otherWorkspaceId, '--retention', '30d'])).toMatchObject({
      id: otherWorkspaceId,
      retention: '30d',
    });
    expect((await api.workspaces.getWorkspace({ id: otherWorkspaceId })).workspace?.retention?.seconds).toBe(
      30n * 86_400n,
    );
    const human = await cli(['workspace', 'get', otherWorkspaceId]);
    expect(human.stdout).toMatch(/retention:\s+30d/);
    expect(await cliJson(['workspace', 'update', otherWorkspaceId, '--retention', '90m'])).toMatchObject({
      retention: '90m',
    });

    const tooShort = await cli(['workspace', 'update', otherWorkspaceId, '--retention', '30s']);
    expect(tooShort.code).toBe(2);
    expect(tooShort.stderr).toMatch(/--retention: retention "30s" is not valid/);
    const belowMinimum = await cli(['workspace', 'update', otherWorkspaceId, '--retention', '0m']);
    expect(belowMinimum.stderr).toContain('at least 1m');
    // The API enforces the minimum too, whatever the client.
    await expect(
      api.workspaces.updateWorkspace({ id: otherWorkspaceId, retention: { seconds: 59n, nanos: 0 } }),
    ).rejects.toThrow(/retention: must be at least 1m/);
    expect((await cli(['workspace', 'update', otherWorkspaceId])).stderr).toContain('nothing to change');

    expect(await cliJson(['workspace', 'update', otherWorkspaceId, '--name', 'Other, renamed'])).toMatchObject({
      name: 'Other, renamed',
      retention: '90m',
    });
    expect(await cliJson(['workspace', 'update', otherWorkspaceId, '--retention', 'none'])).toMatchObject({
      name: 'Other, renamed',
      retention: null,
    });
    expect((await api.workspaces.getWorkspace({ id: otherWorkspaceId })).workspace?.retention).toBeUndefined();
    const missing = await cli(['workspace', 'update', formatId('workspace', new ObjectId()), '--retention', '1d']);
    expect(missing.stderr).toMatch(/Workspace ws_[0-9a-f]{24} not found/);
  });

  it('workspace update --render-weight: set, shown, stored for the render scheduler, refused out of range', async () => {
    expect(await cliJson(['workspace', 'get', otherWorkspaceId])).toMatchObject({ renderWeight: 1 });
    expect(await cliJson(['workspace', 'update', otherWorkspaceId, '--render-weight', '3'])).toMatchObject({
      id: otherWorkspaceId,
      renderWeight: 3,
    });
    expect((await api.workspaces.getWorkspace({ id: otherWorkspaceId })).workspace?.renderWeight).toBe(3);
    expect((await cli(['workspace', 'get', otherWorkspaceId])).stdout).toMatch(/render weight:\s+3/);
    // What the render processes' fair scheduler reads.
    const weights = await new WorkspacesRepository(db).renderWeights([otherWorkspaceId, workspaceId]);
    expect(weights.get(otherWorkspaceId)).toBe(3);
    expect(weights.has(workspaceId)).toBe(false);

    const zero = await cli(['workspace', 'update', otherWorkspaceId, '--render-weight', '0']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('--render-weight "0" must be from 1 to 100');
    expect((await cli(['workspace', 'update', otherWorkspaceId, '--render-weight', '1.5'])).stderr).toContain(
      'must be a whole number',
    );
    await expect(api.workspaces.updateWorkspace({ id: otherWorkspaceId, renderWeight: 101 })).rejects.toThrow(
      /render_weight: must be from 1 to 100/,
    );
    // Other changes keep the weight.
    expect(await cliJson(['workspace', 'update', otherWorkspaceId, '--retention', '1d'])).toMatchObject({
      renderWeight: 3,
    });
  });

  it('key create|list|revoke: the key is shown once, listed by prefix, revoked', async () => {
    const created = await cliJson([
      'key',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'ci',
      '--scopes',
      'generations:trigger,generations:read',
    ]);
    expect(Object.keys(created).sort()).toEqual(['id', 'key']);
    expect(created.key).toMatch(/^svc_live_[A-Za-z0-9]{40}$/);
    expect(created.id).toMatch(/^key_[0-9a-f]{24}$/);
    keys.push(created as { id: string; key: string });
    const limited = await cliJson([
      'key',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'reader',
      '--scopes',
      'generations:read',
      '--rate-limit',
      '5',
      '--burst',
      '10',
    ]);
    keys.push(limited as { id: string; key: string });

    const bad = await cli([
      'key',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'x',
      '--scopes',
      'generations:delete',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('unknown scope "generations:delete"');
    const none = await cli(['key', 'create', '--workspace', workspaceId, '--name', 'x', '--scopes', ',']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('at least one scope');
    const noWorkspace = await cli([
      'key',
      'create',
      '--workspace',
      formatId('workspace', new ObjectId()),
      '--name',
      'x',
      '--scopes',
      'generations:read',
    ]);
    expect(noWorkspace.stderr).toContain('not found');

    const { apiKeys } = await api.apiKeys.listApiKeys({ workspaceId });
    expect(apiKeys.map((k) => k.id)).toEqual([limited.id, created.id]);
    const ci = apiKeys[1]!;
    expect(ci).toMatchObject({
      name: 'ci',
      scopes: ['generations:trigger', 'generations:read'],
      prefix: (created.key as string).slice(0, 13),
    });
    expect(ci.revokedAt).toBeUndefined();
    expect(ci.lastUsedAt).toBeUndefined();
    expect(apiKeys[0]).toMatchObject({ rateLimitPerSecond: 5, rateLimitBurst: 10 });

    const listed = await cliJson<{ apiKeys: Record<string, unknown>[] }>(['key', 'list', '--workspace', workspaceId]);
    expect(listed.apiKeys[1]).toMatchObject({ id: created.id, prefix: ci.prefix, revokedAt: null, lastUsedAt: null });
    expect(JSON.stringify(listed)).not.toContain(created.key as string);
    const human = await cli(['key', 'list', '--workspace', workspaceId]);
    expect(human.stdout).toContain(`${ci.prefix}…`);

    const revoked = await cliJson(['key', 'revoke', created.id as string]);
    expect(revoked.revokedAt).toEqual(expect.any(String));
    const after = (await api.apiKeys.listApiKeys({ workspaceId })).apiKeys.find((k) => k.id === created.id)!;
    expect(after.revokedAt).toBeDefined();
    // Revoking again keeps the first time.
    const again = await cliJson(['key', 'revoke', created.id as string]);
    expect(again.revokedAt).toBe(revoked.revokedAt);
    expect((await cli(['key', 'revoke', 'key_nope'])).stderr).toContain('API key key_nope not found');
  });

  it('webhook create|rotate|list: secrets shown once; URL rules; nothing is contacted', async () => {
    const hook = `${receiver.url}/hook`;
    // The strict server (production settings) refuses http:// and internal addresses.
    const cases: Array<[string, string]> = [
      ['http://93.184.215.14/hook', 'must use https://'],
      ['https://127.0.0.1/hook', 'loopback'],
      ['https://localhost/hook', 'loopback'],
      ['https://[::1]/hook', 'loopback'],
      ['https://10.1.2.3/hook', 'private'],
      ['https://169.254.169.254/latest', 'metadata'],
      [hook, 'must use https://'],
    ];
    for (const [url, problem] of cases) {
      const result = await cli([
        'webhook',
        'create',
        '--workspace',
        workspaceId,
        '--url',
        url,
        '--events',
        'generation.completed',
      ]);
      expect(result.code, url).toBe(1);
      expect(result.stderr, url).toContain(problem);
    }
    const publicHook = await cliJson([
      'webhook',
      'create',
      '--workspace',
      workspaceId,
      '--url',
      'https://93.184.215.14/hook',
      '--events',
      'generation.failed',
    ]);
    webhookSecrets.push(publicHook.secret as string);

    // Event selection.
    const unknownEvent = await cli([
      'webhook',
      'create',
      '--workspace',
      workspaceId,
      '--url',
      'https://93.184.215.14/x',
      '--events',
      'generation.started',
    ]);
    expect(unknownEvent.stderr).toContain('unknown event "generation.started"');
    const noEvents = await cli([
      'webhook',
      'create',
      '--workspace',
      workspaceId,
      '--url',
      'https://93.184.215.14/x',
      '--events',
      ',',
    ]);
    expect(noEvents.stderr).toContain('select at least one event');

    // The dev server (insecure URLs allowed) takes the loopback http:// receiver, not metadata.
    const created = await cliJson(
      [
        'webhook',
        'create',
        '--workspace',
        workspaceId,
        '--url',
        hook,
        '--events',
        'generation.completed,generation.failed',
        '--description',
        'local receiver',
      ],
      { url: dev.url },
    );
    expect(Object.keys(created).sort()).toEqual(['id', 'secret']);
    expect(created.id).toMatch(/^whe_[0-9a-f]{24}$/);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    endpointId = created.id as string;
    webhookSecrets.push(created.secret as string);
    const metadata = await cli(
      [
        'webhook',
        'create',
        '--workspace',
        workspaceId,
        '--url',
        'http://169.254.169.254/',
        '--events',
        'generation.failed',
      ],
      { url: dev.url },
    );
    expect(metadata.stderr).toContain('metadata');

    const rotated = await cliJson(['webhook', 'rotate', endpointId]);
    expect(Object.keys(rotated).sort()).toEqual(['id', 'secret']);
    expect(rotated.secret).not.toBe(created.secret);
    webhookSecrets.push(rotated.secret as string);

    const { endpoints } = await api.webhooks.listWebhookEndpoints({ workspaceId });
    expect(endpoints.map((e) => e.id)).toEqual([endpointId, publicHook.id]);
    expect(endpoints[0]).toMatchObject({
      url: hook,
      events: ['generation.completed', 'generation.failed'],
      description: 'local receiver',
    });
    expect(endpoints[0]!.secretRotatedAt).toBeDefined();
    const listed = await cliJson<{ endpoints: Record<string, unknown>[] }>([
      'webhook',
      'list',
      '--workspace',
      workspaceId,
    ]);
    expect(listed.endpoints[0]).toMatchObject({ id: endpointId, url: hook });

    // Sealed under DOCGEN_SECRET_KEY; the previous secret kept (sealed) for 24 h.
    const doc = (await db
      .collection<WebhookEndpointDoc>(COLLECTIONS.webhookEndpoints)
      .findOne({ _id: parseId('webhookEndpoint', endpointId)! }))!;
    const context = webhookSecretContext(doc._id);
    expect(decryptSecret(doc.secret, SECRET_KEY, context)).toBe(rotated.secret);
    expect(decryptSecret(doc.previousSecret!, SECRET_KEY, context)).toBe(created.secret);
    const validFor = doc.previousSecretExpiresAt!.getTime() - Date.now();
    expect(validFor).toBeGreaterThan(23.9 * 3600_000);
    expect(validFor).toBeLessThanOrEqual(24 * 3600_000);

    // Creating endpoints sends nothing to them.
    expect(receiver.requests).toHaveLength(0);
  });

  it('stores neither an API key nor a webhook secret in plain text (every document dumped)', async () => {
    expect(keys).toHaveLength(2);
    expect(webhookSecrets).toHaveLength(3);
    const dump = await dumpDatabase();
    expect(dump).toContain(keys[0]!.key.slice(0, 13)); // the display prefix is there...
    for (const secret of [...keys.map((k) => k.key), ...webhookSecrets]) {
      for (const form of encodingsOf(secret)) {
        expect(dump.includes(form), `a form of ${secret.slice(0, 12)}… is stored`).toBe(false);
      }
    }
  });

  it('template create|get|list|version add|version list|version get|publish with variables, CSS, partials and PDF options', async () => {
    await writeFiles({
      'invoice.liquid': '<h1>Invoice for {{ customer.name }}</h1><p>Total: {{ total }}</p>{% include "footer" %}',
      'invoice.css': 'h1 { color: #123456; }',
      'partials/footer.liquid': '<footer>{{ company }}</footer>',
      'vars.json': JSON.stringify([
        { name: 'customer', required: true, description: 'Who is billed' },
        { name: 'total', default: 0, description: 'Amount due' },
        { name: 'company', default: 'ACME' },
      ]),
      'vars-object.json': JSON.stringify({
        customer: { required: true },
        total: { default: 10 },
        company: { default: null },
        note: { description: 'Optional' },
      }),
      'pdf.json': JSON.stringify({ pageSize: 'Letter', landscape: true, margins: '10mm' }),
      'undeclared.liquid': '<p>Dear {{ customer }}, you owe {{ amount }}.</p>',
    });
    const created = await cliJson([
      'template',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'Invoice',
      '--file',
      join(files, 'invoice.liquid'),
      '--variables',
      join(files, 'vars.json'),
      '--css',
      join(files, 'invoice.css'),
      '--partials',
      join(files, 'partials'),
      '--pdf-options',
      `@${join(files, 'pdf.json')}`,
      '--publish',
    ]);
    expect(created).toEqual({ id: expect.stringMatching(/^tpl_[0-9a-f]{24}$/), version: 1 });
    templateId = created.id as string;

    const { template } = await api.templates.getTemplate({ id: templateId });
    expect(template).toMatchObject({
      workspaceId,
      name: 'Invoice',
      status: TemplateStatus.ACTIVE,
      publishedVersion: 1,
      latestVersion: 1,
    });
    const { version } = await api.templates.getTemplateVersion({ templateId, version: 1 });
    const content = version!.content!;
    expect(content.css).toBe('h1 { color: #123456; }');
    expect(content.partials).toEqual({ footer: '<footer>{{ company }}</footer>' });
    expect(content.variables.map((v) => [v.name, v.required, v.description])).toEqual([
      ['customer', true, 'Who is billed'],
      ['total', false, 'Amount due'],
      ['company', false, ''],
    ]);
    expect(content.variables[0]!.defaultValue).toBeUndefined();
    expect(content.variables[1]!.defaultValue?.kind).toEqual({ case: 'numberValue', value: 0 });
    expect(content.pdfOptions).toMatchObject({
      pageSize: 'Letter',
      landscape: true,
      printBackground: true,
      margins: { top: '10mm', right: '10mm', bottom: '10mm', left: '10mm' },
    });

    const got = await cliJson(['template', 'get', templateId]);
    expect(got).toMatchObject({ id: templateId, status: 'ACTIVE', publishedVersion: 1, latestVersion: 1 });
    const human = await cli(['template', 'get', templateId]);
    expect(human.stdout).toMatch(/published version:\s+1/);

    // Version 2 with the object form of the variables file; publish it separately.
    const v2 = await cliJson([
      'template',
      'version',
      'add',
      templateId,
      '--file',
      join(files, 'invoice.liquid'),
      '--variables',
      join(files, 'vars-object.json'),
      '--partials',
      join(files, 'partials'),
    ]);
    expect(v2).toEqual({ id: templateId, version: 2 });
    expect((await api.templates.getTemplate({ id: templateId })).template).toMatchObject({
      publishedVersion: 1,
      latestVersion: 2,
    });
    const published = await cliJson(['template', 'publish', templateId, '--version', '2']);
    expect(published).toMatchObject({ id: templateId, publishedVersion: 2 });
    expect((await api.templates.getTemplate({ id: templateId })).template?.publishedVersion).toBe(2);

    const versions = await cliJson<{ versions: { version: number; content: { variables: unknown[] } }[] }>([
      'template',
      'version',
      'list',
      templateId,
    ]);
    expect(versions.versions.map((v) => v.version)).toEqual([1, 2]);
    expect(versions.versions[1]!.content.variables).toEqual([
      { name: 'customer', required: true, description: '' },
      { name: 'total', required: false, default: 10, description: '' },
      { name: 'company', required: false, default: null, description: '' },
      { name: 'note', required: false, description: 'Optional' },
    ]);
    const one = await cliJson<{ version: number; content: { body: string; pdfOptions: { pageSize: string } } }>([
      'template',
      'version',
      'get',
      templateId,
      '--version',
      '1',
    ]);
    expect(one.content.pdfOptions.pageSize).toBe('Letter');
    expect((await cli(['template', 'version', 'get', templateId, '--version', '9'])).stderr).toContain(
      'Version 9 of template',
    );

    // The dev sample invoice (the gallery's invoice), partials as a JSON file, published at once.
    const sample = (name: string) => new URL(`../../src/gallery/invoice/${name}`, import.meta.url).pathname;
    const invoice = await cliJson([
      'template',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'Sample invoice',
      '--file',
      sample('body.liquid'),
      '--variables',
      sample('variables.json'),
      '--css',
      sample('style.css'),
      '--partials',
      sample('partials.json'),
      '--publish',
    ]);
    const invoiceVersion = (await api.templates.getTemplateVersion({ templateId: invoice.id as string, version: 1 }))
      .version!;
    expect(Object.keys(invoiceVersion.content!.partials)).toEqual(['footer']);
    expect((await api.templates.getTemplate({ id: invoice.id as string })).template?.publishedVersion).toBe(1);

    const listed = await cliJson<{ templates: { id: string }[] }>(['template', 'list', '--workspace', workspaceId]);
    expect(listed.templates.map((t) => t.id)).toEqual([invoice.id, templateId]);
    expect(
      (await cliJson<{ templates: unknown[] }>(['template', 'list', '--workspace', otherWorkspaceId])).templates,
    ).toEqual([]);
  });

  it('publishing refuses a version that uses an undeclared variable, naming it; a valid one publishes', async () => {
    const before = (await api.templates.listTemplates({ workspaceId })).templates.length;
    // --publish at create: refused, and nothing is left behind.
    const atCreate = await cli([
      'template',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'Letter',
      '--file',
      join(files, 'undeclared.liquid'),
      '--publish',
    ]);
    expect(atCreate.code).toBe(1);
    expect(atCreate.stderr).toMatch(/variable "customer" is used .*but not declared/);
    expect(atCreate.stderr).toMatch(/variable "amount" is used .*but not declared/);
    expect((await api.templates.listTemplates({ workspaceId })).templates.length).toBe(before);

    // Created as a draft, then published: refused the same way.
    const draft = await cliJson([
      'template',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'Letter',
      '--file',
      join(files, 'undeclared.liquid'),
    ]);
    expect(draft.version).toBe(1);
    const refused = await cli(['template', 'publish', draft.id as string, '--version', '1']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Version 1 cannot be published');
    expect(refused.stderr).toContain('"customer"');
    const viaApi = await api.templates
      .publishTemplateVersion({ templateId: draft.id as string, version: 1 })
      .catch((e: unknown) => e);
    expect(viaApi).toBeInstanceOf(ConnectError);
    expect((viaApi as ConnectError).code).toBe(Code.InvalidArgument);
    expect((await api.templates.getTemplate({ id: draft.id as string })).template?.publishedVersion).toBe(0);

    // Declaring the variables fixes it.
    await writeFiles({
      'letter-vars.json': JSON.stringify([
        { name: 'customer', required: true },
        { name: 'amount', default: '0.00' },
      ]),
    });
    const fixed = await cliJson([
      'template',
      'version',
      'add',
      draft.id as string,
      '--file',
      join(files, 'undeclared.liquid'),
      '--variables',
      join(files, 'letter-vars.json'),
      '--publish',
    ]);
    expect(fixed).toEqual({ id: draft.id, version: 2 });
    expect((await api.templates.getTemplate({ id: draft.id as string })).template?.publishedVersion).toBe(2);

    // Bad PDF options are refused at once.
    const badPdf = await cli([
      'template',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'Bad',
      '--file',
      join(files, 'invoice.liquid'),
      '--pdf-options',
      '{"pageSize":"B5"}',
    ]);
    expect(badPdf.code).toBe(1);
    expect(badPdf.stderr).toContain('"B5" is not a page size');
    const noRoom = await cli([
      'template',
      'version',
      'add',
      draft.id as string,
      '--file',
      join(files, 'undeclared.liquid'),
      '--variables',
      join(files, 'letter-vars.json'),
      '--pdf-options',
      '{"margins":{"left":"5in","right":"5in"}}',
      '--publish',
    ]);
    expect(noRoom.code).toBe(1);
    expect(noRoom.stderr).toContain('left + right leave no room');
  });

  it('template preview renders PDF bytes and stores nothing', async () => {
    preview = await startPreviewRenderer();
    await writeFiles({ 'preview-data.json': JSON.stringify({ customer: { name: 'Ada' }, total: 42 }) });
    const out = join(files, 'preview.pdf');
    const before = await dumpDatabase();
    const result = await cliJson([
      'template',
      'preview',
      templateId,
      '--data',
      join(files, 'preview-data.json'),
      '--out',
      out,
    ]);
    expect(result.out).toBe(out);
    const pdf = await readFile(out);
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(result.bytes).toBe(pdf.length);
    expect(await dumpDatabase()).toBe(before);

    const unknown = await cli([
      'template',
      'preview',
      templateId,
      '--version',
      '1',
      '--data',
      join(files, 'vars-object.json'),
      '--out',
      out,
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('not declared');
  });

  it('template create|version add --sample-data: saved with the version; preview without --data uses it', async () => {
    preview ??= await startPreviewRenderer();
    await writeFiles({
      'sample/greeting.liquid': '<h1>Hello {{ name }}</h1>',
      'sample/vars.json': JSON.stringify({ name: { required: true } }),
      'sample/sample-1.json': JSON.stringify({ name: 'Sample One' }),
      'sample/sample-2.json': JSON.stringify({ name: 'Sample Two' }),
      'sample/not-object.json': '[1, 2]',
    });
    const dir = join(files, 'sample');
    const created = await cliJson([
      'template',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'Sampled',
      '--file',
      join(dir, 'greeting.liquid'),
      '--variables',
      join(dir, 'vars.json'),
      '--sample-data',
      join(dir, 'sample-1.json'),
      '--publish',
    ]);
    const id = created.id as string;
    await cliJson([
      'template',
      'version',
      'add',
      id,
      '--file',
      join(dir, 'greeting.liquid'),
      '--variables',
      join(dir, 'vars.json'),
      '--sample-data',
      join(dir, 'sample-2.json'),
    ]);
    const v1 = await cliJson<{ content: { sampleData: unknown } }>([
      'template',
      'version',
      'get',
      id,
      '--version',
      '1',
    ]);
    expect(v1.content.sampleData).toEqual({ name: 'Sample One' });
    expect(
      (await api.templates.getTemplateVersion({ templateId: id, version: 2 })).version?.content?.sampleData,
    ).toEqual({ name: 'Sample Two' });

    for (const [version, expected] of [
      ['1', 'Hello Sample One'],
      ['2', 'Hello Sample Two'],
    ] as const) {
      const out = join(dir, `v${version}.pdf`);
      await cliJson(['template', 'preview', id, '--version', version, '--out', out]);
      expect(execFileSync('pdftotext', ['-enc', 'UTF-8', out, '-'], { encoding: 'utf8' })).toContain(expected);
    }
    const refused = await cli([
      'template',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'Bad',
      '--file',
      join(dir, 'greeting.liquid'),
      '--sample-data',
      join(dir, 'not-object.json'),
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--sample-data');
    expect(refused.stderr).toContain('must hold a JSON object');
  });

  it('template archive: archived templates refuse new versions', async () => {
    const archived = await cliJson(['template', 'archive', templateId]);
    expect(archived).toMatchObject({ id: templateId, status: 'ARCHIVED' });
    expect((await api.templates.getTemplate({ id: templateId })).template?.status).toBe(TemplateStatus.ARCHIVED);

    const refused = await cli(['template', 'version', 'add', templateId, '--file', join(files, 'invoice.liquid')]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is archived; archived templates do not accept new versions');
    const viaApi = await api.templates
      .createTemplateVersion({ templateId, content: { body: '<p>x</p>' } })
      .catch((e: unknown) => e);
    expect((viaApi as ConnectError).code).toBe(Code.FailedPrecondition);
    const publish = await cli(['template', 'publish', templateId, '--version', '1']);
    expect(publish.stderr).toContain('archived');
    expect((await api.templates.listTemplateVersions({ templateId })).versions).toHaveLength(2);
  });

  it('deliveries list|get|redeliver: attempts are readable; redeliver starts a new round and queues it', async () => {
    const deliveries = new DeliveriesRepository(db);
    const endpoint = parseId('webhookEndpoint', endpointId)!;
    const generationId = new ObjectId();
    const otherGeneration = new ObjectId();
    const now = Date.now();
    const attempts = [0, 1, 2, 4, 8, 16].map((delay, i) => ({
      number: i + 1,
      attemptedAt: new Date(now - 60_000 + delay * 1000),
      statusCode: i === 5 ? 0 : 503,
      error: i === 5 ? 'connection refused' : 'HTTP 503',
      durationMs: 12 + i,
    }));
    const make = (gen: ObjectId, status: DeliveryDoc['status']): DeliveryDoc => ({
      _id: new ObjectId(),
      workspaceId: parseId('workspace', workspaceId)!,
      endpointId: endpoint,
      eventId: new ObjectId(),
      event: 'generation.completed',
      generationId: gen,
      payload: { generationId: formatId('generation', gen) },
      timestamp: Math.floor(now / 1000),
      status,
      attempts: status === 'DROPPED' ? attempts : [],
      roundAttempts: status === 'DROPPED' ? 6 : 0,
      round: 1,
      createdAt: new Date(now - 60_000),
      updatedAt: new Date(now - 30_000),
      nextAttemptAt: status === 'PENDING' ? new Date(now + 60_000) : null,
    });
    const dropped = make(generationId, 'DROPPED');
    const pending = make(otherGeneration, 'PENDING');
    await deliveries.insertOnce(dropped);
    await deliveries.insertOnce(pending);
    const droppedId = formatId('delivery', dropped._id);
    const pendingId = formatId('delivery', pending._id);

    const all = await cliJson<{ deliveries: { id: string; attempts: unknown[] }[] }>([
      'deliveries',
      'list',
      '--workspace',
      workspaceId,
    ]);
    expect(all.deliveries.map((d) => d.id)).toEqual([pendingId, droppedId]);
    const byGeneration = await cliJson<{ deliveries: Record<string, unknown>[] }>([
      'deliveries',
      'list',
      '--workspace',
      workspaceId,
      '--generation',
      formatId('generation', generationId),
    ]);
    expect(byGeneration.deliveries).toHaveLength(1);
    expect(byGeneration.deliveries[0]).toMatchObject({
      id: droppedId,
      status: 'DROPPED',
      endpointId,
      generationId: formatId('generation', generationId),
    });
    expect(byGeneration.deliveries[0]!.attempts).toHaveLength(6);
    expect((byGeneration.deliveries[0]!.attempts as Record<string, unknown>[])[5]).toMatchObject({
      number: 6,
      statusCode: null,
      error: 'connection refused',
    });
    const onlyGeneration = await cliJson<{ deliveries: { id: string }[] }>([
      'deliveries',
      'list',
      '--generation',
      formatId('generation', otherGeneration),
    ]);
    expect(onlyGeneration.deliveries.map((d) => d.id)).toEqual([pendingId]);
    expect(
      (await cliJson<{ deliveries: unknown[] }>(['deliveries', 'list', '--workspace', otherWorkspaceId])).deliveries,
    ).toEqual([]);
    const human = await cli(['deliveries', 'list', '--workspace', workspaceId]);
    expect(human.stdout).toContain('DROPPED');

    const got = await cliJson(['deliveries', 'get', droppedId]);
    expect(got).toMatchObject({ id: droppedId, event: 'generation.completed', status: 'DROPPED', nextAttemptAt: null });
    const detail = await cli(['deliveries', 'get', droppedId]);
    expect(detail.stdout).toContain('connection refused');

    const redelivered = await cliJson(['deliveries', 'redeliver', droppedId]);
    expect(redelivered).toMatchObject({ id: droppedId, status: 'PENDING', nextAttemptAt: expect.any(String) });
    const viaApi = await api.deliveries.getDelivery({ id: droppedId });
    expect(viaApi.delivery?.status).toBe(DeliveryStatus.PENDING);
    expect(viaApi.delivery?.attempts).toHaveLength(6); // history kept
    const stored = (await deliveries.get(dropped._id))!;
    expect(stored).toMatchObject({ round: 2, roundAttempts: 0 });

    // The job reached the deliveries stream.
    const stream = queue.names.streams.deliveries;
    const info = await queue.jsm.streams.info(stream);
    expect(info.state.messages).toBe(1);
    const message = await queue.jsm.streams.getMessage(stream, { seq: info.state.last_seq });
    // With the endpoint, so a worker can pace a saturated endpoint without a read.
    expect(message?.json()).toEqual({ deliveryId: droppedId, endpointId });

    const again = await cli(['deliveries', 'redeliver', pendingId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already pending');
    expect((await cli(['deliveries', 'get', formatId('delivery', new ObjectId())])).stderr).toContain('not found');
    expect((await cli(['deliveries', 'list', '--generation', 'nope'])).stderr).toContain('is not a generation id');
  });

  it('webhook delete', async () => {
    const deleted = await cliJson(['webhook', 'delete', endpointId]);
    expect(deleted).toEqual({ id: endpointId, deleted: true });
    const { endpoints } = await api.webhooks.listWebhookEndpoints({ workspaceId });
    expect(endpoints.map((e) => e.id)).not.toContain(endpointId);
    const again = await cli(['webhook', 'delete', endpointId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('not found');
    expect((await cli(['webhook', 'rotate', endpointId])).stderr).toContain('not found');
  });
});

describe('admin authentication', () => {
  it('refuses calls without the token (Unauthenticated)', async () => {
    const response = await fetch(`${strict.url}/docgen.admin.v1.WorkspaceService/ListWorkspaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: 'unauthenticated' });

    const anonymous = clientsFor(strict.url, undefined);
    const err = await anonymous.workspaces.listWorkspaces({}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unauthenticated);
    expect((err as ConnectError).rawMessage).toContain('Admin token missing');
  });

  it('refuses a wrong token, and one of the right length, on every service', async () => {
    for (const token of ['dev-admin-token', ADMIN_TOKEN.slice(0, -1) + (ADMIN_TOKEN.endsWith('0') ? '1' : '0'), '']) {
      const clients = clientsFor(strict.url, token);
      const calls = [
        clients.workspaces.createWorkspace({ name: 'intruder' }),
        clients.apiKeys.listApiKeys({ workspaceId: formatId('workspace', new ObjectId()) }),
        clients.templates.listTemplates({ workspaceId: formatId('workspace', new ObjectId()) }),
        clients.webhooks.listWebhookEndpoints({ workspaceId: formatId('workspace', new ObjectId()) }),
        clients.deliveries.listDeliveries({ generationId: formatId('generation', new ObjectId()) }),
      ];
      for (const call of calls) {
        const err = await call.catch((e: unknown) => e);
        expect((err as ConnectError).code, `token ${JSON.stringify(token)}`).toBe(Code.Unauthenticated);
      }
    }
    expect((await api.workspaces.listWorkspaces({})).workspaces.map((w) => w.name)).not.toContain('intruder');
  });

  it('the CLI reports the refusal and exits non-zero (no token, since the dev token is random now; a wrong token)', async () => {
    const defaulted = await cli(['workspace', 'list'], { token: null });
    expect(defaulted.code).toBe(1);
    expect(defaulted.stderr).toContain('Admin token missing');
    expect(defaulted.stderr).toContain('DOCGEN_ADMIN_TOKEN');
    const wrong = await cli(['workspace', 'create', '--name', 'x'], { token: 'nope' });
    expect(wrong.code).toBe(1);
  });
});

describe('docgen admin command line', () => {
  it('prints usage, rejects unknown commands and missing flags with exit code 2', async () => {
    const help = await cli(['help']);
    expect(help.code).toBe(0);
    for (const line of [
      'workspace create --name NAME',
      'key revoke KEY_ID',
      'template publish TPL_ID --version N',
      'deliveries list --workspace WS_ID',
    ]) {
      expect(help.stdout).toContain(line);
    }
    expect((await cli([])).code).toBe(2);
    const unknown = await cli(['workspace', 'delete', 'ws_1']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command');
    const missing = await cli(['key', 'create', '--workspace', 'ws_1', '--name', 'x']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--scopes is required');
    const badFlag = await cli(['workspace', 'list', '--colour']);
    expect(badFlag.code).toBe(2);
    const badVersion = await cli(['template', 'publish', 'tpl_1', '--version', 'two']);
    expect(badVersion.stderr).toContain('--version must be a whole number');
    const badVars = join(files, 'bad-vars.json');
    await writeFile(badVars, JSON.stringify([{ name: 'x', requird: true }]));
    const vars = await cli([
      'template',
      'create',
      '--workspace',
      'ws_1',
      '--name',
      'x',
      '--file',
      badVars,
      '--variables',
      badVars,
    ]);
    expect(vars.code).toBe(2);
    expect(vars.stderr).toContain('unknown field "requird"');
    const unreachable = await cli(['workspace', 'list'], { url: 'http://127.0.0.1:1' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot reach the admin API at http://127.0.0.1:1');
  });
});
