// The admin services in process, through connect's createRouterTransport: the real
// composition and routes (access interceptor, gate, handlers, domain services) on the MongoDB
// stand-in. Covers the access policy as callers meet it (no credential, a wrong token, the
// operator, and each member role allowed and refused per docs/admin.md's roles table), its
// refusals (other workspaces, CSRF, ended sessions), the audit trail, and the handlers' round
// trips and error codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, ConnectError, type CallOptions } from '@connectrpc/connect';
import { ObjectId } from 'mongodb';
import { parseId } from '../../src/domain/ids.ts';
import { DeliveryStatus } from '../../src/gen/docgen/admin/v1/delivery_pb.js';
import { MemberRole } from '../../src/gen/docgen/admin/v1/identity_pb.js';
import { ERROR_CODE_HEADER } from '../../src/rpc/connect-errors.ts';
import { makePng } from '../fixtures/assets/make-png.ts';
import { startAdminInProcess, type AdminInProcess, type SignedInMember } from '../harness/admin-in-process.ts';
import { rejection } from '../harness/in-process.ts';

let admin: AdminInProcess;
let wsA: string;
let wsB: string;
const members: Record<'owner' | 'editor' | 'viewer', SignedInMember> = {} as never;

beforeAll(async () => {
  admin = await startAdminInProcess();
  wsA = await admin.workspace('A');
  wsB = await admin.workspace('B');
  for (const role of ['owner', 'editor', 'viewer'] as const) members[role] = await admin.member(wsA, role);
});

afterAll(async () => {
  await admin?.close();
});

const connectError = (promise: Promise<unknown>) => rejection(promise, ConnectError);
const content = { body: '<p>{{ name }}</p>', variables: [{ name: 'name' }] };

/** A dropped delivery of the workspace (what a redeliver needs). */
const droppedDelivery = (workspaceId: string) => admin.delivery(parseId('workspace', workspaceId)!, 'DROPPED');

/** A generation of the workspace, made through the public API's service. */
async function generation(workspaceId: string): Promise<string> {
  const workspace = parseId('workspace', workspaceId)!;
  const templateId = await admin.stack.template(workspace);
  const created = await admin.stack.generations.create(admin.stack.principal(workspace), {
    templateId,
    variables: {},
    format: 'pdf',
  });
  return created.id;
}

describe('access policy', () => {
  it('refuses a call without a credential and with a wrong token (Unauthenticated)', async () => {
    const none = await connectError(admin.clients.workspaces.getWorkspace({ id: wsA }));
    expect(none.code).toBe(Code.Unauthenticated);
    expect(none.rawMessage).toMatch(/Admin token missing/);
    expect(none.metadata.get(ERROR_CODE_HEADER)).toBe('UNAUTHORIZED');
    const wrong = await connectError(
      admin.clients.workspaces.getWorkspace({ id: wsA }, { headers: { authorization: 'Bearer not-the-token' } }),
    );
    expect(wrong.code).toBe(Code.Unauthenticated);
    expect(wrong.rawMessage).toBe('Admin token invalid');
  });

  // One call per right, as docs/admin.md's roles table lists them; each seeds what it needs.
  const calls: [string, (options: CallOptions) => Promise<unknown>][] = [
    ['read workspace', (o) => admin.clients.workspaces.getWorkspace({ id: wsA }, o)],
    ['list templates', (o) => admin.clients.templates.listTemplates({ workspaceId: wsA }, o)],
    ['list keys', (o) => admin.clients.apiKeys.listApiKeys({ workspaceId: wsA }, o)],
    ['list members', (o) => admin.clients.members.listMembers({ workspaceId: wsA }, o)],
    ['list assets', (o) => admin.clients.assets.listAssets({ workspaceId: wsA }, o)],
    ['create template', (o) => admin.clients.templates.createTemplate({ workspaceId: wsA, name: 'T', content }, o)],
    [
      'upload asset',
      (o) =>
        admin.clients.assets.uploadAsset(
          { workspaceId: wsA, name: `a-${new ObjectId().toHexString()}.png`, content: makePng(2, 2) },
          o,
        ),
    ],
    [
      'create key',
      (o) => admin.clients.apiKeys.createApiKey({ workspaceId: wsA, name: 'k', scopes: ['generations:read'] }, o),
    ],
    [
      'create endpoint',
      (o) =>
        admin.clients.webhooks.createWebhookEndpoint(
          { workspaceId: wsA, url: 'http://127.0.0.1:9/hook', events: ['generation.completed'] },
          o,
        ),
    ],
    ['redeliver', async (o) => admin.clients.deliveries.redeliverDelivery({ id: await droppedDelivery(wsA) }, o)],
    ['delete generation', async (o) => admin.clients.generations.deleteGeneration({ id: await generation(wsA) }, o)],
    ['render again', async (o) => admin.clients.generations.renderAgain({ id: await generation(wsA) }, o)],
    [
      'invite member',
      (o) =>
        admin.clients.members.inviteMember(
          { workspaceId: wsA, email: `${new ObjectId().toHexString()}@example.com`, role: MemberRole.VIEWER },
          o,
        ),
    ],
    ['read audit', (o) => admin.clients.audit.listAuditEvents({ workspaceId: wsA }, o)],
    ['workspace settings', (o) => admin.clients.workspaces.updateWorkspace({ id: wsA, name: 'A' }, o)],
    ['create workspace', (o) => admin.clients.workspaces.createWorkspace({ name: 'new' }, o)],
    ['list users', (o) => admin.clients.users.listUsers({}, o)],
  ];
  const expected: Record<string, string> = {
    //        Rws LsT LsK LsM LsA CrT Upl CrK CrE Red DlG RnA Inv Aud Set CrW LsU
    operator: 'ok ok  ok  ok  ok  ok  ok  ok  ok  ok  ok  ok  ok  ok  ok  ok  ok',
    owner: '   ok ok  ok  ok  ok  ok  ok  ok  ok  ok  ok  ok  ok  ok  ok  no  no',
    editor: '  ok ok  ok  ok  ok  ok  ok  no  no  no  no  ok  no  no  no  no  no',
    viewer: '  ok ok  ok  ok  ok  no  no  no  no  no  no  no  no  no  no  no  no',
  };
  for (const [who, row] of Object.entries(expected)) {
    it(`${who}: allowed and refused (PermissionDenied) as the roles table says`, async () => {
      const options = who === 'operator' ? admin.operator : members[who as 'owner'].options;
      const got: string[] = [];
      for (const [name, call] of calls) {
        try {
          await call(options);
          got.push('ok');
        } catch (err) {
          expect(err, name).toBeInstanceOf(ConnectError);
          expect([name, (err as ConnectError).code]).toEqual([name, Code.PermissionDenied]);
          got.push('no');
        }
      }
      expect(got).toEqual(row.trim().split(/\s+/));
      expect(admin.internal).toEqual([]);
    });
  }

  it('answers NotFound for another workspace and its objects, worded as for ids that do not exist', async () => {
    const theirs = await admin.clients.templates.createTemplate(
      { workspaceId: wsB, name: 'Theirs', content },
      admin.operator,
    );
    const owner = members.owner.options;
    const other = await connectError(admin.clients.templates.getTemplate({ id: theirs.template!.id }, owner));
    const missing = `tpl_${new ObjectId().toHexString()}`;
    const absent = await connectError(admin.clients.templates.getTemplate({ id: missing }, owner));
    expect([other.code, absent.code]).toEqual([Code.NotFound, Code.NotFound]);
    expect(other.rawMessage).toBe(`Template ${theirs.template!.id} not found`);
    expect(absent.rawMessage).toBe(`Template ${missing} not found`);
    const workspace = await connectError(admin.clients.apiKeys.listApiKeys({ workspaceId: wsB }, owner));
    expect(workspace.code).toBe(Code.NotFound);
  });

  it('a member sees only their own workspaces', async () => {
    const mine = await admin.clients.workspaces.listWorkspaces({ pageSize: 100 }, members.viewer.options);
    expect(mine.workspaces.map((w) => w.id)).toEqual([wsA]);
  });

  it('refuses a state change made with the cookie from another origin (CSRF), not a read', async () => {
    const cookie = (members.owner.options.headers as Record<string, string>).cookie!;
    const change = admin.clients.workspaces.updateWorkspace(
      { id: wsA, name: 'A' },
      { headers: { cookie, origin: 'https://evil.example' } },
    );
    const refused = await connectError(change);
    expect(refused.code).toBe(Code.PermissionDenied);
    expect(refused.rawMessage).toMatch(/^Cross-origin request refused/);
    const bare = await connectError(
      admin.clients.workspaces.updateWorkspace({ id: wsA, name: 'A' }, { headers: { cookie } }),
    );
    expect(bare.code).toBe(Code.PermissionDenied);
    await admin.clients.workspaces.getWorkspace({ id: wsA }, { headers: { cookie } });
  });

  it('after sign-out the cookie is refused (Unauthenticated), and signing in again works', async () => {
    const person = await admin.member(wsA, 'viewer');
    await admin.clients.sessions.signOut({}, person.options);
    const ended = await connectError(admin.clients.workspaces.getWorkspace({ id: wsA }, person.options));
    expect(ended.code).toBe(Code.Unauthenticated);
    expect(ended.rawMessage).toMatch(/session has ended/);
    // A stale cookie does not stand in the way of signing in again.
    const again = await admin.clients.sessions.signIn(
      { email: person.email, password: person.password },
      person.options,
    );
    expect(again.user!.id).toBe(person.userId);
  });

  it('records each change once it succeeded: actor, domain operation, target, workspace', async () => {
    const owner = members.owner;
    const key = await admin.clients.apiKeys.createApiKey(
      { workspaceId: wsA, name: 'audited', scopes: ['generations:read'] },
      owner.options,
    );
    await admin.clients.apiKeys.revokeApiKey({ id: key.apiKey!.id }, admin.operator);
    // A refused change records nothing.
    await connectError(
      admin.clients.apiKeys.createApiKey({ workspaceId: wsA, name: 'no', scopes: [] }, members.viewer.options),
    );
    const events = (await admin.clients.audit.listAuditEvents({ workspaceId: wsA, pageSize: 100 }, admin.operator))
      .events;
    const ofKey = events.filter((e) => e.targetId === key.apiKey!.id);
    expect(ofKey.map((e) => [e.action, e.actor, e.workspaceId])).toEqual([
      ['apiKeys.revoke', 'operator', wsA],
      ['apiKeys.create', owner.userId, wsA],
    ]);
    expect(events.some((e) => e.actor === members.viewer.userId && e.action === 'apiKeys.create')).toBe(false);
  });
});

describe('handlers', () => {
  it('workspaces: create, get, update retention (whole seconds only)', async () => {
    const o = admin.operator;
    const ws = await admin.clients.workspaces.createWorkspace({ name: 'Handlers' }, o);
    const id = ws.workspace!.id;
    const updated = await admin.clients.workspaces.updateWorkspace({ id, retention: { seconds: 3600n, nanos: 0 } }, o);
    expect(updated.workspace!.retention?.seconds).toBe(3600n);
    expect((await admin.clients.workspaces.getWorkspace({ id }, o)).workspace!.name).toBe('Handlers');
    const fraction = await connectError(
      admin.clients.workspaces.updateWorkspace({ id, retention: { seconds: 60n, nanos: 5 } }, o),
    );
    expect([fraction.code, fraction.rawMessage]).toEqual([Code.InvalidArgument, 'retention: must be whole seconds']);
    expect(fraction.metadata.get(ERROR_CODE_HEADER)).toBe('VALIDATION_ERROR');
  });

  it('templates, keys and endpoints: create, read, change, with validation errors named', async () => {
    const o = admin.operator;
    const ws = await admin.workspace();
    const t = await admin.clients.templates.createTemplate(
      { workspaceId: ws, name: 'Letter', content, publish: true },
      o,
    );
    expect(t.template!.publishedVersion).toBe(1);
    await admin.clients.templates.createTemplateVersion({ templateId: t.template!.id, content }, o);
    const versions = await admin.clients.templates.listTemplateVersions({ templateId: t.template!.id }, o);
    expect(versions.versions.map((v) => v.version)).toEqual([1, 2]);
    const key = await admin.clients.apiKeys.createApiKey(
      { workspaceId: ws, name: 'k', scopes: ['generations:read'] },
      o,
    );
    expect(key.secret).toMatch(/^svc_live_/);
    const revoked = await admin.clients.apiKeys.revokeApiKey({ id: key.apiKey!.id }, o);
    expect(revoked.apiKey!.revokedAt).toBeDefined();
    const badScope = await connectError(
      admin.clients.apiKeys.createApiKey({ workspaceId: ws, name: 'k', scopes: ['everything'] }, o),
    );
    expect(badScope.code).toBe(Code.InvalidArgument);
    expect(badScope.rawMessage).toMatch(/scopes/);
    const endpoint = await admin.clients.webhooks.createWebhookEndpoint(
      { workspaceId: ws, url: 'http://127.0.0.1:9/hook', events: ['generation.failed'] },
      o,
    );
    expect(endpoint.secret).toMatch(/^whsec_/);
    const rotated = await admin.clients.webhooks.rotateWebhookEndpointSecret({ id: endpoint.endpoint!.id }, o);
    expect(rotated.secret).not.toBe(endpoint.secret);
    await admin.clients.webhooks.sendTestEvent({ id: endpoint.endpoint!.id }, o);
    expect(admin.enqueued.length).toBeGreaterThan(0);
    await admin.clients.webhooks.deleteWebhookEndpoint({ id: endpoint.endpoint!.id }, o);
    const gone = await connectError(admin.clients.webhooks.deleteWebhookEndpoint({ id: endpoint.endpoint!.id }, o));
    expect(gone.code).toBe(Code.NotFound);
  });

  it('deliveries, generations and assets: read, redeliver, erase, upload and delete', async () => {
    const o = admin.operator;
    const ws = await admin.workspace();
    const deliveryId = await droppedDelivery(ws);
    const redelivered = await admin.clients.deliveries.redeliverDelivery({ id: deliveryId }, o);
    expect(redelivered.delivery!.status).toBe(DeliveryStatus.PENDING);
    const again = await connectError(admin.clients.deliveries.redeliverDelivery({ id: deliveryId }, o));
    expect(again.code).toBe(Code.FailedPrecondition);
    const generationId = await generation(ws);
    expect((await admin.clients.generations.getGeneration({ id: generationId }, o)).generation!.id).toBe(generationId);
    await admin.clients.generations.deleteGeneration({ id: generationId }, o);
    expect((await connectError(admin.clients.generations.getGeneration({ id: generationId }, o))).code).toBe(
      Code.NotFound,
    );
    const png = makePng(3, 3);
    const asset = await admin.clients.assets.uploadAsset({ workspaceId: ws, name: 'logo.png', content: png }, o);
    expect(asset.asset!.contentType).toBe('image/png');
    const stored = [...admin.objects.objects.entries()].find(([k]) => k.endsWith(`/assets/${asset.asset!.id}`));
    expect(stored?.[1].bytes.equals(png)).toBe(true);
    const listed = await admin.clients.assets.listAssets({ workspaceId: ws }, o);
    expect(listed.assets.map((a) => a.name)).toEqual(['logo.png']);
    expect(listed.usedBytes).toBe(BigInt(png.length));
    const taken = await connectError(
      admin.clients.assets.uploadAsset({ workspaceId: ws, name: 'logo.png', content: png }, o),
    );
    expect(taken.code).toBe(Code.AlreadyExists);
    await admin.clients.assets.deleteAsset({ id: asset.asset!.id }, o);
    const keys = [...admin.objects.objects.keys()];
    expect(keys.some((k) => k.endsWith(`/assets/${asset.asset!.id}`))).toBe(false);
  });

  it('members and users: invite, change role, keep the last owner, remove, disable, enable, reset', async () => {
    const o = admin.operator;
    const ws = await admin.workspace();
    const first = await admin.clients.members.inviteMember(
      { workspaceId: ws, email: `${new ObjectId().toHexString()}@example.com`, role: MemberRole.OWNER },
      o,
    );
    expect(first.inviteUrl).toContain('/invite/');
    const userId = first.member!.user!.id;
    const lastOwner = await connectError(
      admin.clients.members.updateMemberRole({ workspaceId: ws, userId, role: MemberRole.VIEWER }, o),
    );
    expect(lastOwner.code).toBe(Code.FailedPrecondition);
    const noRole = await connectError(
      admin.clients.members.inviteMember({ workspaceId: ws, email: 'x@example.com', role: MemberRole.UNSPECIFIED }, o),
    );
    expect([noRole.code, noRole.rawMessage]).toEqual([
      Code.InvalidArgument,
      'role: must be one of owner, editor, viewer',
    ]);
    expect((await admin.clients.users.disableUser({ id: userId }, o)).user!.disabled).toBe(true);
    expect((await admin.clients.users.enableUser({ id: userId }, o)).user!.disabled).toBe(false);
    expect((await admin.clients.users.resetUser({ id: userId }, o)).inviteUrl).toContain('/invite/');
    const second = await admin.clients.members.inviteMember(
      { workspaceId: ws, email: `${new ObjectId().toHexString()}@example.com`, role: MemberRole.OWNER },
      o,
    );
    await admin.clients.members.removeMember({ workspaceId: ws, userId }, o);
    const left = await admin.clients.members.listMembers({ workspaceId: ws }, o);
    expect(left.members.map((m) => m.user!.id)).toEqual([second.member!.user!.id]);
    expect(admin.internal).toEqual([]);
  });
});
