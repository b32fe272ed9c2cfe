// One list test, run against every list endpoint docgen serves (the Svix way): the public
// generations list over REST (the real gateway on a loopback port) and over Connect, and every
// admin list through createRouterTransport, all on the in-process stack (MongoDB stand-in).
// The same body for each: walking all pages with small page sizes returns every row exactly
// once in the documented order; filters hold on every page; rows inserted during a walk never
// make it repeat or skip a row that was there when it began; forged, altered, unsigned and
// other-scope or other-filter tokens are refused as documented (REST 422 VALIDATION_ERROR,
// InvalidArgument). The rule under test is src/store/pagination.ts.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, ConnectError, createClient, createRouterTransport, type Client } from '@connectrpc/connect';
import { ObjectId } from 'mongodb';
import { createRestGateway } from '../../gateway/rest-gateway.ts';
import { formatId, parseId } from '../../src/domain/ids.ts';
import { DeliveryStatus } from '../../src/gen/docgen/admin/v1/delivery_pb.js';
import { MemberRole } from '../../src/gen/docgen/admin/v1/identity_pb.js';
import { GenerationService, GenerationStatus } from '../../src/gen/docgen/v1/generation_pb.js';
import { ERROR_CODE_HEADER, mapErrors } from '../../src/rpc/connect-errors.ts';
import { GenerationHandler } from '../../src/rpc/generation-handler.ts';
import { makePng } from '../fixtures/assets/make-png.ts';
import { pkcs12, testPki } from '../harness/signing-certificates.ts';
import { startAdminInProcess, type AdminInProcess, type SignedInMember } from '../harness/admin-in-process.ts';
import { rejection } from '../harness/in-process.ts';

let admin: AdminInProcess;
let rest: Server;
let restUrl: string;
let publicRpc: Client<typeof GenerationService>;

beforeAll(async () => {
  admin = await startAdminInProcess();
  publicRpc = createClient(
    GenerationService,
    createRouterTransport(({ service }) =>
      service(GenerationService, mapErrors(new GenerationHandler(admin.stack.api))),
    ),
  );
  rest = createServer(createRestGateway({ api: admin.stack.api, maxBodyBytes: 1024 * 1024 }));
  await new Promise<void>((resolve) => rest.listen(0, '127.0.0.1', resolve));
  restUrl = `http://127.0.0.1:${(rest.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => (rest ? rest.close(() => resolve()) : resolve()));
  await admin?.close();
});

// ---- what the test needs of a list endpoint ---------------------------------------------------

interface PageAnswer {
  ids: string[];
  /** '' on the last page. */
  next: string;
}

interface PageCall {
  pageSize: number;
  pageToken: string;
  /** Apply the endpoint's filter (see ListEndpoint.filter). */
  filtered?: boolean;
}

interface ListEndpoint<S> {
  name: string;
  /** The documented order of the rows inserted into one scope. */
  order: 'newest first' | 'oldest first' | 'by key';
  /** A scope with no rows yet (a workspace, or a member), with what the calls need. */
  scope(): Promise<S>;
  /** Adds a row; returns its id (and, for 'by key' lists, its sort key). */
  insert(scope: S, n: number): Promise<{ id: string; key?: string }>;
  page(scope: S, call: PageCall): Promise<PageAnswer>;
  /** A filter the list offers, and which inserted rows it keeps (by insertion number). */
  filter?: { name: string; keeps(n: number): boolean };
  /** REST refuses with 422 VALIDATION_ERROR, the RPC protocols with InvalidArgument. */
  transport: 'rest' | 'rpc';
}

/** The next millisecond: rows ordered by a creation time get distinct ones (no tie-break by derived ids). */
async function nextMillisecond(): Promise<void> {
  const now = Date.now();
  while (Date.now() === now) await new Promise((resolve) => setTimeout(resolve, 1));
}

const o = () => admin.operator;

/** One PKCS#12 file (a key costs ~100 ms to make), uploaded under many names. */
let p12: Buffer | undefined;
function signerP12(): Buffer {
  if (!p12) {
    const pki = testPki();
    p12 = pkcs12(pki.signer, [pki.ca], 'list test');
  }
  return p12;
}
const content = { body: '<p>{{ name }}</p>', variables: [{ name: 'name' }] };

async function newWorkspace(): Promise<{ id: string; objectId: ObjectId }> {
  const objectId = await admin.stack.workspace();
  return { id: formatId('workspace', objectId), objectId };
}

interface GenerationScope {
  workspace: ObjectId;
  templateId: string;
  key: string;
}
async function generationScope(): Promise<GenerationScope> {
  const workspace = await admin.stack.workspace();
  return {
    workspace,
    templateId: await admin.stack.template(workspace),
    key: (await admin.stack.apiKey(workspace, ['generations:trigger', 'generations:read'])).secret,
  };
}
/** Every third generation fails, so `status=FAILED` keeps n % 3 === 0. */
async function insertGeneration(scope: GenerationScope, n: number): Promise<{ id: string }> {
  const view = await admin.stack.generations.create(admin.stack.principal(scope.workspace), {
    templateId: scope.templateId,
    variables: { n },
    format: 'pdf',
  });
  if (n % 3 === 0) await admin.stack.repositories.generations.fail(parseId('generation', view.id)!, null, 'failed');
  return { id: view.id };
}
const failedEveryThird = { name: 'status FAILED', keeps: (n: number) => n % 3 === 0 };

interface BatchScope extends GenerationScope {
  batchId: string;
}
/** A scope with a batch: every third row is one of its items, the others single generations. */
async function batchScope(): Promise<BatchScope> {
  const scope = await generationScope();
  const batch = await admin.stack.batches.create(admin.stack.principal(scope.workspace), {
    items: [{ templateId: scope.templateId, variables: { n: -1 }, format: 'pdf' }],
    merge: false,
    itemEvents: true,
  });
  // The batch's own first item is not one of the test's rows: erase it from the list.
  const items = await admin.stack.repositories.generations.listBatchItems(batch.id);
  for (const item of items) await admin.stack.repositories.generations.delete(item._id);
  return { ...scope, batchId: batch.id };
}
async function insertBatchRow(scope: BatchScope, n: number): Promise<{ id: string }> {
  const { generations } = admin.stack.repositories;
  const template = parseId('template', scope.templateId)!;
  const doc = generations.newDoc({
    workspaceId: scope.workspace,
    templateId: template,
    templateRef: scope.templateId,
    templateName: 'list',
    data: { n },
    ...(n % 3 === 0 ? { batch: { batchId: scope.batchId, index: n, itemEvents: true } } : {}),
  });
  await generations.insert(doc);
  return { id: formatId('generation', doc._id) };
}

async function restPage(scope: GenerationScope, call: PageCall): Promise<PageAnswer> {
  const query = new URLSearchParams({ pageSize: String(call.pageSize) });
  if (call.pageToken) query.set('pageToken', call.pageToken);
  if (call.filtered) query.set('status', 'FAILED');
  const res = await fetch(`${restUrl}/v1/generations?${query}`, { headers: { authorization: `Bearer ${scope.key}` } });
  const body = (await res.json()) as {
    generations?: { id: string; status: string }[];
    nextPageToken?: string | null;
    error?: { code: string; details?: { field: string }[] };
  };
  if (res.status !== 200) throw new RestRefusal(res.status, body.error?.code ?? '', body.error?.details ?? []);
  if (call.filtered) for (const g of body.generations!) expect(g.status).toBe('FAILED');
  // The REST list says "no more" with null (docs/interface.md#list-generations).
  expect(body.nextPageToken === null || (typeof body.nextPageToken === 'string' && body.nextPageToken !== '')).toBe(
    true,
  );
  return { ids: body.generations!.map((g) => g.id), next: body.nextPageToken ?? '' };
}

class RestRefusal extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: { field: string }[];
  constructor(status: number, code: string, details: { field: string }[]) {
    super(`REST ${status} ${code}`);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

interface MemberScope {
  member: SignedInMember;
}

const ENDPOINTS: ListEndpoint<any>[] = [
  {
    name: 'REST GET /v1/generations?batchId=',
    order: 'newest first',
    transport: 'rest',
    scope: batchScope,
    insert: insertBatchRow,
    async page(scope, call) {
      const query = new URLSearchParams({ pageSize: String(call.pageSize) });
      if (call.pageToken) query.set('pageToken', call.pageToken);
      if (call.filtered) query.set('batchId', scope.batchId);
      const res = await fetch(`${restUrl}/v1/generations?${query}`, {
        headers: { authorization: `Bearer ${scope.key}` },
      });
      const body = (await res.json()) as {
        generations?: { id: string; data: { n: number } }[];
        nextPageToken?: string | null;
        error?: { code: string; details?: { field: string }[] };
      };
      if (res.status !== 200) throw new RestRefusal(res.status, body.error?.code ?? '', body.error?.details ?? []);
      if (call.filtered) for (const g of body.generations!) expect(g.data.n % 3).toBe(0);
      return { ids: body.generations!.map((g) => g.id), next: body.nextPageToken ?? '' };
    },
    filter: { name: 'batchId', keeps: (n: number) => n % 3 === 0 },
  } satisfies ListEndpoint<BatchScope>,
  {
    name: 'docgen.v1.GenerationService/ListGenerations (batch_id)',
    order: 'newest first',
    transport: 'rpc',
    scope: batchScope,
    insert: insertBatchRow,
    async page(scope, call) {
      const res = await publicRpc.listGenerations(
        { pageSize: call.pageSize, pageToken: call.pageToken, batchId: call.filtered ? scope.batchId : '' },
        { headers: { authorization: `Bearer ${scope.key}` } },
      );
      return { ids: res.generations.map((g) => g.id), next: res.nextPageToken };
    },
    filter: { name: 'batchId', keeps: (n: number) => n % 3 === 0 },
  } satisfies ListEndpoint<BatchScope>,
  {
    name: 'REST GET /v1/generations',
    order: 'newest first',
    transport: 'rest',
    scope: generationScope,
    insert: insertGeneration,
    page: restPage,
    filter: failedEveryThird,
  } satisfies ListEndpoint<GenerationScope>,
  {
    name: 'docgen.v1.GenerationService/ListGenerations',
    order: 'newest first',
    transport: 'rpc',
    scope: generationScope,
    insert: insertGeneration,
    async page(scope, call) {
      const res = await publicRpc.listGenerations(
        { ...call, status: call.filtered ? GenerationStatus.FAILED : GenerationStatus.UNSPECIFIED },
        { headers: { authorization: `Bearer ${scope.key}` } },
      );
      if (call.filtered) for (const g of res.generations) expect(g.status).toBe(GenerationStatus.FAILED);
      return { ids: res.generations.map((g) => g.id), next: res.nextPageToken };
    },
    filter: failedEveryThird,
  } satisfies ListEndpoint<GenerationScope>,
  {
    name: 'GenerationAdminService/ListGenerations',
    order: 'newest first',
    transport: 'rpc',
    scope: generationScope,
    insert: insertGeneration,
    async page(scope, call) {
      const res = await admin.clients.generations.listGenerations(
        {
          workspaceId: formatId('workspace', scope.workspace),
          pageSize: call.pageSize,
          pageToken: call.pageToken,
          status: call.filtered ? GenerationStatus.FAILED : GenerationStatus.UNSPECIFIED,
        },
        o(),
      );
      if (call.filtered) for (const g of res.generations) expect(g.status).toBe(GenerationStatus.FAILED);
      return { ids: res.generations.map((g) => g.id), next: res.nextPageToken };
    },
    filter: failedEveryThird,
  } satisfies ListEndpoint<GenerationScope>,
  {
    // A member's own workspaces: the scope is the member.
    name: 'WorkspaceService/ListWorkspaces (a member)',
    order: 'newest first',
    transport: 'rpc',
    async scope(): Promise<MemberScope> {
      const home = await newWorkspace();
      const member = await admin.member(home.id, 'viewer');
      // The test inserts into an empty scope: the member leaves the workspace they joined by.
      await admin.clients.members.removeMember({ workspaceId: home.id, userId: member.userId }, o());
      return { member };
    },
    async insert(scope: MemberScope) {
      const ws = await newWorkspace();
      // The operator's invitation adds an existing account at once (an owner's only offers it).
      await admin.clients.users.inviteUser(
        { workspaceId: ws.id, email: scope.member.email, role: MemberRole.VIEWER },
        o(),
      );
      return { id: ws.id };
    },
    async page(scope: MemberScope, call) {
      const res = await admin.clients.workspaces.listWorkspaces(call, scope.member.options);
      return { ids: res.workspaces.map((w) => w.id), next: res.nextPageToken };
    },
  } satisfies ListEndpoint<MemberScope>,
  {
    name: 'ApiKeyService/ListApiKeys',
    order: 'newest first',
    transport: 'rpc',
    scope: async () => (await newWorkspace()).id,
    async insert(ws: string, n) {
      const res = await admin.clients.apiKeys.createApiKey(
        { workspaceId: ws, name: `key ${n}`, scopes: ['generations:read'] },
        o(),
      );
      return { id: res.apiKey!.id };
    },
    async page(ws: string, call) {
      const res = await admin.clients.apiKeys.listApiKeys({ workspaceId: ws, ...call }, o());
      return { ids: res.apiKeys.map((k) => k.id), next: res.nextPageToken };
    },
  } satisfies ListEndpoint<string>,
  {
    name: 'TemplateService/ListTemplates',
    order: 'newest first',
    transport: 'rpc',
    scope: async () => (await newWorkspace()).id,
    async insert(ws: string, n) {
      const res = await admin.clients.templates.createTemplate({ workspaceId: ws, name: `T${n}`, content }, o());
      return { id: res.template!.id };
    },
    async page(ws: string, call) {
      const res = await admin.clients.templates.listTemplates({ workspaceId: ws, ...call }, o());
      return { ids: res.templates.map((t) => t.id), next: res.nextPageToken };
    },
  } satisfies ListEndpoint<string>,
  {
    name: 'AssetService/ListAssets',
    order: 'by key',
    transport: 'rpc',
    scope: async () => (await newWorkspace()).id,
    async insert(ws: string, n) {
      // Names in another order than the uploads: the list is by name.
      const name = `asset-${String((n * 37) % 101).padStart(3, '0')}-${n}.png`;
      const res = await admin.clients.assets.uploadAsset({ workspaceId: ws, name, content: makePng(1, 1) }, o());
      return { id: res.asset!.id, key: name };
    },
    async page(ws: string, call) {
      const res = await admin.clients.assets.listAssets({ workspaceId: ws, ...call }, o());
      return { ids: res.assets.map((a) => a.id), next: res.nextPageToken };
    },
  } satisfies ListEndpoint<string>,
  {
    name: 'CertificateService/ListCertificates',
    order: 'by key',
    transport: 'rpc',
    scope: async () => (await newWorkspace()).id,
    async insert(ws: string, n) {
      // Names in another order than the uploads: the list is by name.
      const name = `signer-${String((n * 37) % 101).padStart(3, '0')}-${n}`;
      const res = await admin.clients.certificates.uploadCertificate(
        { workspaceId: ws, name, pkcs12: signerP12(), password: 'list test' },
        o(),
      );
      return { id: res.certificate!.id, key: name };
    },
    async page(ws: string, call) {
      const res = await admin.clients.certificates.listCertificates({ workspaceId: ws, ...call }, o());
      return { ids: res.certificates.map((c) => c.id), next: res.nextPageToken };
    },
  } satisfies ListEndpoint<string>,
  {
    name: 'WebhookEndpointService/ListWebhookEndpoints',
    order: 'newest first',
    transport: 'rpc',
    scope: async () => (await newWorkspace()).id,
    async insert(ws: string, n) {
      const res = await admin.clients.webhooks.createWebhookEndpoint(
        { workspaceId: ws, url: `http://127.0.0.1:9/hook/${n}`, events: ['generation.completed'] },
        o(),
      );
      return { id: res.endpoint!.id };
    },
    async page(ws: string, call) {
      const res = await admin.clients.webhooks.listWebhookEndpoints({ workspaceId: ws, ...call }, o());
      return { ids: res.endpoints.map((e) => e.id), next: res.nextPageToken };
    },
  } satisfies ListEndpoint<string>,
  {
    // Deliveries are written by the webhook workers; the test writes them as they would.
    name: 'DeliveryService/ListDeliveries',
    order: 'newest first',
    transport: 'rpc',
    scope: newWorkspace,
    async insert(ws: { objectId: ObjectId }, n) {
      return { id: await admin.delivery(ws.objectId, n % 2 === 0 ? 'DROPPED' : 'SUCCEEDED') };
    },
    async page(ws: { id: string }, call) {
      const res = await admin.clients.deliveries.listDeliveries(
        {
          workspaceId: ws.id,
          pageSize: call.pageSize,
          pageToken: call.pageToken,
          status: call.filtered ? DeliveryStatus.DROPPED : DeliveryStatus.UNSPECIFIED,
        },
        o(),
      );
      if (call.filtered) for (const d of res.deliveries) expect(d.status).toBe(DeliveryStatus.DROPPED);
      return { ids: res.deliveries.map((d) => d.id), next: res.nextPageToken };
    },
    filter: { name: 'status DROPPED', keeps: (n) => n % 2 === 0 },
  } satisfies ListEndpoint<{ id: string; objectId: ObjectId }>,
  {
    // Users, filtered to one workspace's members (the unfiltered list is everyone's).
    name: 'UserService/ListUsers',
    order: 'newest first',
    transport: 'rpc',
    scope: async () => (await newWorkspace()).id,
    async insert(ws: string) {
      await nextMillisecond();
      const res = await admin.clients.users.inviteUser(
        { workspaceId: ws, email: `${randomBytes(5).toString('hex')}@example.com`, role: MemberRole.VIEWER },
        o(),
      );
      return { id: res.user!.id };
    },
    async page(ws: string, call) {
      const res = await admin.clients.users.listUsers({ workspaceId: ws, ...call }, o());
      return { ids: res.users.map((u) => u.id), next: res.nextPageToken };
    },
  } satisfies ListEndpoint<string>,
  {
    name: 'MemberService/ListPendingInvitations',
    order: 'oldest first',
    transport: 'rpc',
    scope: async () => (await newWorkspace()).id,
    async insert(ws: string) {
      // An account that exists (a member elsewhere) is only offered the membership.
      const email = `${randomBytes(5).toString('hex')}@example.com`;
      await admin.clients.users.inviteUser(
        { workspaceId: (await newWorkspace()).id, email, role: MemberRole.VIEWER },
        o(),
      );
      await nextMillisecond();
      const res = await admin.clients.members.inviteMember({ workspaceId: ws, email, role: MemberRole.EDITOR }, o());
      expect(res.pendingInvitation?.email).toBe(email);
      return { id: email };
    },
    async page(ws: string, call) {
      const res = await admin.clients.members.listPendingInvitations({ workspaceId: ws, ...call }, o());
      return { ids: res.pendingInvitations.map((p) => p.email), next: res.nextPageToken };
    },
  } satisfies ListEndpoint<string>,
  {
    name: 'MemberService/ListMembers',
    order: 'oldest first',
    transport: 'rpc',
    scope: async () => (await newWorkspace()).id,
    async insert(ws: string) {
      await nextMillisecond();
      const res = await admin.clients.members.inviteMember(
        { workspaceId: ws, email: `${randomBytes(5).toString('hex')}@example.com`, role: MemberRole.EDITOR },
        o(),
      );
      return { id: res.member!.user!.id };
    },
    async page(ws: string, call) {
      const res = await admin.clients.members.listMembers({ workspaceId: ws, ...call }, o());
      return { ids: res.members.map((m) => m.user!.id), next: res.nextPageToken };
    },
  } satisfies ListEndpoint<string>,
  {
    // Each successful change in the workspace is an event; renaming it is the cheapest one, and
    // every other row is a key created (the filter keeps the renames).
    name: 'AuditService/ListAuditEvents',
    order: 'newest first',
    transport: 'rpc',
    scope: async () => (await newWorkspace()).id,
    async insert(ws: string, n) {
      if (n % 2 === 0) await admin.clients.workspaces.updateWorkspace({ id: ws, name: `renamed ${n}` }, o());
      else
        await admin.clients.apiKeys.createApiKey(
          { workspaceId: ws, name: `key ${n}`, scopes: ['generations:read'] },
          o(),
        );
      const latest = await admin.clients.audit.listAuditEvents({ workspaceId: ws, pageSize: 1 }, o());
      expect(latest.events[0]).toMatchObject({
        action: n % 2 === 0 ? 'workspaces.update' : 'apiKeys.create',
        actor: 'operator',
      });
      return { id: latest.events[0]!.id };
    },
    async page(ws: string, call) {
      const action = call.filtered ? 'workspaces.update' : '';
      const res = await admin.clients.audit.listAuditEvents(
        { workspaceId: ws, pageSize: call.pageSize, pageToken: call.pageToken, action },
        o(),
      );
      if (call.filtered) for (const e of res.events) expect(e.action).toBe('workspaces.update');
      return { ids: res.events.map((e) => e.id), next: res.nextPageToken };
    },
    filter: { name: 'action workspaces.update', keeps: (n) => n % 2 === 0 },
  } satisfies ListEndpoint<string>,
];

// ---- the one test body ------------------------------------------------------------------------

async function seed<S>(endpoint: ListEndpoint<S>, scope: S, count: number): Promise<{ id: string; key?: string }[]> {
  const rows: { id: string; key?: string }[] = [];
  for (let n = 0; n < count; n++) rows.push(await endpoint.insert(scope, n));
  return rows;
}

function documentedOrder(order: ListEndpoint<unknown>['order'], rows: { id: string; key?: string }[]): string[] {
  if (order === 'newest first') return rows.map((r) => r.id).reverse();
  if (order === 'oldest first') return rows.map((r) => r.id);
  return [...rows].sort((a, b) => (a.key! < b.key! ? -1 : a.key! > b.key! ? 1 : 0)).map((r) => r.id);
}

/** Every page until the last; `between` runs after each page (concurrent inserts). */
async function walk<S>(
  endpoint: ListEndpoint<S>,
  scope: S,
  pageSize: number,
  options: { filtered?: boolean; between?: () => Promise<void> } = {},
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let pageToken = '';
  let pages = 0;
  do {
    const page = await endpoint.page(scope, { pageSize, pageToken, filtered: options.filtered });
    expect(page.ids.length).toBeLessThanOrEqual(pageSize);
    ids.push(...page.ids);
    pageToken = page.next;
    pages++;
    expect(pages, 'the walk ends').toBeLessThan(100);
    await options.between?.();
  } while (pageToken);
  return { ids, pages };
}

/** The documented refusal of a page token: REST 422 VALIDATION_ERROR on pageToken, or InvalidArgument. */
async function expectTokenRefused(transport: 'rest' | 'rpc', call: Promise<unknown>, what: string): Promise<void> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (transport === 'rest') {
    expect(err, what).toBeInstanceOf(RestRefusal);
    const refusal = err as RestRefusal;
    expect([refusal.status, refusal.code, refusal.details.map((d) => d.field)], what).toEqual([
      422,
      'VALIDATION_ERROR',
      ['pageToken'],
    ]);
  } else {
    const connect = await rejection(Promise.reject(err as Error), ConnectError);
    expect([connect.code, connect.metadata.get(ERROR_CODE_HEADER)], what).toEqual([
      Code.InvalidArgument,
      'VALIDATION_ERROR',
    ]);
    expect(connect.rawMessage, what).toBe('pageToken: is not a valid page token for this query');
  }
}

function altered(token: string): string {
  const [payload, mac] = token.split('.');
  const fields = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as Record<string, unknown>;
  const edited = Buffer.from(JSON.stringify({ ...fields, i: new ObjectId().toHexString() })).toString('base64url');
  return `${edited}.${mac}`;
}

describe.each(ENDPOINTS.map((e) => [e.name, e] as const))('list %s', (_, endpoint) => {
  let scope: unknown;
  let rows: { id: string; key?: string }[];

  beforeAll(async () => {
    scope = await endpoint.scope();
    rows = await seed(endpoint, scope, 7);
  });

  it('walks every page with small page sizes: every row exactly once, in the documented order', async () => {
    const expected = documentedOrder(endpoint.order, rows);
    for (const pageSize of [2, 3]) {
      const { ids, pages } = await walk(endpoint, scope, pageSize);
      expect(ids).toEqual(expected);
      expect(pages).toBe(Math.ceil(rows.length / pageSize));
    }
    // One page holds them all, with no token after it.
    expect(await endpoint.page(scope, { pageSize: 100, pageToken: '' })).toEqual({ ids: expected, next: '' });
  });

  it('keeps its filter on every page', async () => {
    if (!endpoint.filter) {
      // Its only filter is the scope: another scope's rows never show up.
      const other = await endpoint.scope();
      const theirs = await seed(endpoint, other, 2);
      const { ids } = await walk(endpoint, scope, 2);
      expect(ids.some((id) => theirs.some((r) => r.id === id))).toBe(false);
      return;
    }
    const keep = endpoint.filter.keeps;
    const expected = documentedOrder(
      endpoint.order,
      rows.filter((_, n) => keep(n)),
    );
    expect(expected.length).toBeGreaterThan(1);
    const { ids } = await walk(endpoint, scope, 1, { filtered: true });
    expect(ids).toEqual(expected);
  });

  it('is stable under inserts during the walk: no row repeated, none that was there skipped', async () => {
    const own = await endpoint.scope();
    const before = await seed(endpoint, own, 6);
    const added: string[] = [];
    let n = 100;
    const { ids } = await walk(endpoint, own, 2, {
      between: async () => {
        if (added.length < 4) added.push((await endpoint.insert(own, n++)).id);
      },
    });
    expect(new Set(ids).size).toBe(ids.length);
    // The rows that were there when the walk began come in their documented order, each once.
    expect(ids.filter((id) => !added.includes(id))).toEqual(documentedOrder(endpoint.order, before));
    // Newest-first lists put what is inserted meanwhile before the walk's position: never shown.
    if (endpoint.order === 'newest first') expect(ids.filter((id) => added.includes(id))).toEqual([]);
  });

  it('refuses forged, altered, unsigned and other-scope tokens (and other-filter ones)', async () => {
    const first = await endpoint.page(scope, { pageSize: 2, pageToken: '' });
    expect(first.next).not.toBe('');
    const t = endpoint.transport;
    await expectTokenRefused(t, endpoint.page(scope, { pageSize: 2, pageToken: altered(first.next) }), 'altered');
    const forged = `${Buffer.from(JSON.stringify({ q: 'x', i: new ObjectId().toHexString() })).toString('base64url')}.${'A'.repeat(43)}`;
    await expectTokenRefused(t, endpoint.page(scope, { pageSize: 2, pageToken: forged }), 'forged');
    const unsigned = Buffer.from(new ObjectId().toHexString()).toString('base64url');
    await expectTokenRefused(t, endpoint.page(scope, { pageSize: 2, pageToken: unsigned }), 'unsigned');
    const other = await endpoint.scope();
    await seed(endpoint, other, 1);
    await expectTokenRefused(t, endpoint.page(other, { pageSize: 2, pageToken: first.next }), 'other scope');
    if (endpoint.filter) {
      await expectTokenRefused(
        t,
        endpoint.page(scope, { pageSize: 2, pageToken: first.next, filtered: true }),
        'other filter',
      );
    }
    // The real token still works.
    expect((await endpoint.page(scope, { pageSize: 2, pageToken: first.next })).ids.length).toBeGreaterThan(0);
    expect(admin.internal).toEqual([]);
  });
});
