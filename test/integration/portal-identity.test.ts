// Portal identity through the real admin listener (an in-process api role on real
// dependencies), spoken the way a browser speaks it: Connect JSON over HTTP/1.1 with the
// session cookie, an Origin header, and no operator token. Covers invitations, sign-in, the
// role table, workspace isolation, sign-out and disable, CSRF, sign-in rate limits, the
// audit trail, and that no secret reaches MongoDB.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BSON, MongoClient, ObjectId } from 'mongodb';
import { runAdminCli } from '../../src/cli/admin/run-admin-cli.ts';
import { COLLECTIONS } from '../../src/store/documents.ts';
import { startApiStack, type ApiStack } from '../e2e/api-stack.ts';

const S = '/docgen.admin.v1.';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, any>;
}

let stack: ApiStack;
let portal: string;
let mongo: MongoClient;
/** Every secret the tests handled: none may reach MongoDB in any encoding. */
const secrets = new Set<string>();
/** Every state change the tests made, and who made it: the audit trail must show each. */
const changes: { action: string; actor: string; target?: string; workspaceId?: string }[] = [];

/** One Connect unary call over HTTP/1.1, like a browser's fetch (or curl). */
function call(
  method: string,
  body: object,
  options: { cookie?: string; origin?: string | null; token?: string; localAddress?: string } = {},
): Promise<Answer> {
  const payload = JSON.stringify(body);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(payload)),
  };
  if (options.cookie) headers.cookie = `docgen_session=${options.cookie}`;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const origin = options.origin === undefined ? (options.cookie ? portal : null) : options.origin;
  if (origin) headers.origin = origin;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: stack.app.adminPort,
        method: 'POST',
        path: `${S}${method}`,
        headers,
        localAddress: options.localAddress,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text ? (JSON.parse(text) as Record<string, any>) : {},
          });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const operator = (method: string, body: object) => call(method, body, { token: stack.deps.adminToken });

async function ok(answer: Promise<Answer>): Promise<Record<string, any>> {
  const a = await answer;
  if (a.status !== 200) throw new Error(`expected 200, got ${a.status}: ${JSON.stringify(a.body)}`);
  return a.body;
}

function sessionFrom(answer: Answer): string {
  const cookie = (answer.headers['set-cookie'] ?? []).find((c) => c.startsWith('docgen_session='));
  if (!cookie) throw new Error(`no session cookie in ${JSON.stringify(answer.headers)}`);
  const value = cookie.slice('docgen_session='.length).split(';')[0]!;
  secrets.add(value);
  return value;
}

/** Invites (as the operator) and accepts: returns the user id and a signed-in session. */
async function newMember(
  workspaceId: string,
  role: 'OWNER' | 'EDITOR' | 'VIEWER',
  email: string,
  password: string,
): Promise<{ userId: string; cookie: string }> {
  const invited = await ok(operator('UserService/InviteUser', { workspaceId, email, role: `MEMBER_ROLE_${role}` }));
  changes.push({ action: 'users.invite', actor: 'operator', target: invited.user.id, workspaceId });
  const token = tokenOf(invited.inviteUrl);
  secrets.add(password);
  const accepted = await call(
    'SessionService/AcceptInvitation',
    { token, password, displayName: email.split('@')[0] },
    { origin: portal },
  );
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  changes.push({ action: 'sessions.acceptInvitation', actor: invited.user.id });
  return { userId: invited.user.id, cookie: sessionFrom(accepted) };
}

function tokenOf(inviteUrl: string): string {
  const prefix = `${portal}/invite/`;
  expect(inviteUrl.startsWith(prefix), inviteUrl).toBe(true);
  const token = inviteUrl.slice(prefix.length);
  secrets.add(token);
  return token;
}

let wsA: string;
let wsB: string;
let templateA: string;
let templateB: string;
let keyA: string;
let keyB: string;
let endpointB: string;
let deliveryB: string;
let owner: { userId: string; cookie: string };

beforeAll(async () => {
  stack = await startApiStack({ env: { DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true' } });
  portal = `http://127.0.0.1:${stack.app.adminPort}`;
  mongo = new MongoClient(stack.deps.mongo.url);
  await mongo.connect();
  wsA = (await ok(operator('WorkspaceService/CreateWorkspace', { name: 'Workspace A' }))).workspace.id;
  wsB = (await ok(operator('WorkspaceService/CreateWorkspace', { name: 'Workspace B' }))).workspace.id;
  const content = { body: '<p>{{ n }}</p>', variables: [{ name: 'n' }] };
  templateA = (await ok(operator('TemplateService/CreateTemplate', { workspaceId: wsA, name: 'A invoice', content })))
    .template.id;
  templateB = (await ok(operator('TemplateService/CreateTemplate', { workspaceId: wsB, name: 'B invoice', content })))
    .template.id;
  const createdKeyA = await ok(
    operator('ApiKeyService/CreateApiKey', { workspaceId: wsA, name: 'a', scopes: ['generations:read'] }),
  );
  const createdKeyB = await ok(
    operator('ApiKeyService/CreateApiKey', { workspaceId: wsB, name: 'b', scopes: ['generations:read'] }),
  );
  keyA = createdKeyA.apiKey.id;
  keyB = createdKeyB.apiKey.id;
  endpointB = (
    await ok(
      operator('WebhookEndpointService/CreateWebhookEndpoint', {
        workspaceId: wsB,
        url: 'http://127.0.0.1:9/hook',
        events: ['generation.completed'],
      }),
    )
  ).endpoint.id;
  changes.push(
    { action: 'workspaces.create', actor: 'operator', target: wsA, workspaceId: wsA },
    { action: 'templates.create', actor: 'operator', target: templateA, workspaceId: wsA },
    { action: 'apiKeys.create', actor: 'operator', target: keyA, workspaceId: wsA },
    { action: 'workspaces.create', actor: 'operator', target: wsB, workspaceId: wsB },
    { action: 'templates.create', actor: 'operator', target: templateB, workspaceId: wsB },
    { action: 'apiKeys.create', actor: 'operator', target: keyB, workspaceId: wsB },
    { action: 'webhookEndpoints.create', actor: 'operator', target: endpointB, workspaceId: wsB },
  );
  // A delivery of workspace B, as the webhooks role would have written it.
  const delivery = new ObjectId();
  deliveryB = `dlv_${delivery.toHexString()}`;
  await mongo
    .db(stack.deps.mongo.database)
    .collection(COLLECTIONS.deliveries)
    .insertOne({
      _id: delivery,
      workspaceId: new ObjectId(wsB.slice(3)),
      endpointId: new ObjectId(endpointB.slice(4)),
      eventId: new ObjectId(),
      event: 'generation.completed',
      generationId: new ObjectId(),
      payload: { generationId: `gen_${new ObjectId().toHexString()}` },
      timestamp: Date.now(),
      status: 'SUCCEEDED',
      attempts: [],
      roundAttempts: 0,
      round: 1,
      createdAt: new Date(),
      updatedAt: new Date(),
      nextAttemptAt: null,
    });
  owner = await newMember(wsA, 'OWNER', 'owner@a.example', 'a long owner passphrase');
}, 120_000);

afterAll(async () => {
  await mongo?.close();
  await stack?.close();
});

describe('invitations and sessions', () => {
  it('invite → set password → sign in → list own workspace templates (cookie HttpOnly, SameSite=Lax, not Secure on http://)', async () => {
    const signedIn = await call(
      'SessionService/SignIn',
      { email: ' Owner@A.example ', password: 'a long owner passphrase' },
      { origin: portal },
    );
    expect(signedIn.status).toBe(200);
    changes.push({ action: 'sessions.signIn', actor: owner.userId });
    const cookie = (signedIn.headers['set-cookie'] ?? [])[0]!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).not.toMatch(/Secure/);
    expect(signedIn.body.memberships).toEqual([
      { workspaceId: wsA, workspaceName: 'Workspace A', role: 'MEMBER_ROLE_OWNER' },
    ]);
    const session = sessionFrom(signedIn);
    const templates = await ok(call('TemplateService/ListTemplates', { workspaceId: wsA }, { cookie: session }));
    expect(templates.templates.map((t: { id: string }) => t.id)).toEqual([templateA]);
    const workspaces = await ok(call('WorkspaceService/ListWorkspaces', {}, { cookie: session }));
    expect(workspaces.workspaces.map((w: { id: string }) => w.id)).toEqual([wsA]);
    const me = await ok(call('SessionService/GetCurrentSession', {}, { cookie: session }));
    expect(me.user.email).toBe('owner@a.example');
    expect(me.operator ?? false).toBe(false);
  });

  it('refuses a weak password without using up the invitation, then a reused one', async () => {
    const invited = await ok(
      operator('UserService/InviteUser', { workspaceId: wsA, email: 'late@a.example', role: 'MEMBER_ROLE_VIEWER' }),
    );
    changes.push({ action: 'users.invite', actor: 'operator', target: invited.user.id, workspaceId: wsA });
    const token = tokenOf(invited.inviteUrl);
    for (const weak of ['short', 'password1234', '123456789012', 'late@a.example!!']) {
      const refused = await call('SessionService/AcceptInvitation', { token, password: weak }, { origin: portal });
      expect(refused.status, weak).toBe(400);
      expect(refused.body.message).toMatch(/password/);
    }
    secrets.add('late viewer passphrase');
    const accepted = await call(
      'SessionService/AcceptInvitation',
      { token, password: 'late viewer passphrase' },
      { origin: portal },
    );
    expect(accepted.status).toBe(200);
    changes.push({ action: 'sessions.acceptInvitation', actor: invited.user.id });
    const again = await call(
      'SessionService/AcceptInvitation',
      { token, password: 'another good passphrase' },
      { origin: portal },
    );
    expect(again.status).toBe(401);
    expect(again.body.message).toMatch(/invalid, expired or already used/);
  });

  it('races have one winner without transactions: one user per email, one use per invitation', async () => {
    const invites = await Promise.all(
      ['Racer@a.example', 'racer@A.example ', 'racer@a.example'].map((email) =>
        ok(operator('UserService/InviteUser', { workspaceId: wsA, email, role: 'MEMBER_ROLE_VIEWER' })),
      ),
    );
    const ids = new Set(invites.map((i) => i.user.id));
    expect(ids.size).toBe(1);
    const userId = [...ids][0] as string;
    for (let i = 0; i < 3; i++)
      changes.push({ action: 'users.invite', actor: 'operator', target: userId, workspaceId: wsA });
    const members = await ok(operator('MemberService/ListMembers', { workspaceId: wsA }));
    expect(members.members.filter((m: { user: { id: string } }) => m.user.id === userId)).toHaveLength(1);
    // Each invitation replaces the ones before: of the three links, used twice each at once, one works once.
    const tokens = invites.map((i) => tokenOf(i.inviteUrl));
    secrets.add('racing passphrase one');
    const answers = await Promise.all(
      tokens.flatMap((token) =>
        [1, 2].map(() =>
          call('SessionService/AcceptInvitation', { token, password: 'racing passphrase one' }, { origin: portal }),
        ),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 401)).toHaveLength(5);
    for (const a of answers.filter((x) => x.status === 200)) sessionFrom(a);
    changes.push({ action: 'sessions.acceptInvitation', actor: userId });
  });

  it('refuses an expired invitation', async () => {
    const invited = await ok(
      operator('UserService/InviteUser', { workspaceId: wsA, email: 'expired@a.example', role: 'MEMBER_ROLE_VIEWER' }),
    );
    changes.push({ action: 'users.invite', actor: 'operator', target: invited.user.id, workspaceId: wsA });
    const expiresAt = new Date(invited.inviteExpiresAt).getTime() - Date.now();
    expect(expiresAt).toBeGreaterThan(71.9 * 3600_000);
    expect(expiresAt).toBeLessThanOrEqual(72 * 3600_000);
    const token = tokenOf(invited.inviteUrl);
    // 73 hours later: the invitation's clock is moved back rather than the test's forward.
    await mongo
      .db(stack.deps.mongo.database)
      .collection(COLLECTIONS.invitations)
      .updateMany({ usedAt: null, revokedAt: null }, { $set: { expiresAt: new Date(Date.now() - 3600_000) } });
    const refused = await call(
      'SessionService/AcceptInvitation',
      { token, password: 'expired user passphrase' },
      { origin: portal },
    );
    expect(refused.status).toBe(401);
  });
});

describe('roles', () => {
  it('a viewer reads but cannot create a key (PermissionDenied)', async () => {
    const viewer = await newMember(wsA, 'VIEWER', 'viewer@a.example', 'viewer passphrase here');
    const keys = await ok(call('ApiKeyService/ListApiKeys', { workspaceId: wsA }, { cookie: viewer.cookie }));
    expect(keys.apiKeys.map((k: { id: string }) => k.id)).toEqual([keyA]);
    const refused = await call(
      'ApiKeyService/CreateApiKey',
      { workspaceId: wsA, name: 'nope', scopes: ['generations:read'] },
      { cookie: viewer.cookie },
    );
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('permission_denied');
    expect(refused.body.message).toMatch(/viewer/);
  });

  it('an editor publishes a version but cannot revoke a key; an owner can', async () => {
    // Invited by the owner from the portal this time.
    const invited = await ok(
      call(
        'MemberService/InviteMember',
        { workspaceId: wsA, email: 'editor@a.example', role: 'MEMBER_ROLE_EDITOR' },
        { cookie: owner.cookie },
      ),
    );
    const editorId = invited.member.user.id;
    changes.push({ action: 'members.invite', actor: owner.userId, target: editorId, workspaceId: wsA });
    secrets.add('editor passphrase here');
    const accepted = await call(
      'SessionService/AcceptInvitation',
      { token: tokenOf(invited.inviteUrl), password: 'editor passphrase here' },
      { origin: portal },
    );
    expect(accepted.status).toBe(200);
    changes.push({ action: 'sessions.acceptInvitation', actor: editorId });
    const editor = sessionFrom(accepted);

    const version = await ok(
      call(
        'TemplateService/CreateTemplateVersion',
        { templateId: templateA, content: { body: '<p>v2 {{ n }}</p>', variables: [{ name: 'n' }] } },
        { cookie: editor },
      ),
    );
    changes.push({
      action: 'templates.addVersion',
      actor: editorId,
      target: templateA,
      workspaceId: wsA,
    });
    await ok(
      call(
        'TemplateService/PublishTemplateVersion',
        { templateId: templateA, version: version.version.version },
        { cookie: editor },
      ),
    );
    changes.push({
      action: 'templates.publish',
      actor: editorId,
      target: templateA,
      workspaceId: wsA,
    });

    const refused = await call('ApiKeyService/RevokeApiKey', { id: keyA }, { cookie: editor });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('permission_denied');
    const audit = await call('AuditService/ListAuditEvents', { workspaceId: wsA }, { cookie: editor });
    expect(audit.status).toBe(403);

    await ok(call('ApiKeyService/RevokeApiKey', { id: keyA }, { cookie: owner.cookie }));
    changes.push({ action: 'apiKeys.revoke', actor: owner.userId, target: keyA, workspaceId: wsA });
    const members = await ok(call('MemberService/ListMembers', { workspaceId: wsA }, { cookie: editor }));
    expect(members.members.map((m: { user: { email: string } }) => m.user.email)).toContain('editor@a.example');
    // Operator-only calls stay operator-only.
    expect((await call('UserService/ListUsers', {}, { cookie: owner.cookie })).status).toBe(403);
    expect((await call('WorkspaceService/CreateWorkspace', { name: 'mine' }, { cookie: owner.cookie })).status).toBe(
      403,
    );
  });

  it("a member of A gets NotFound for B's template, key, endpoint, delivery and workspace, worded as for ids that do not exist", async () => {
    const probes: [string, Record<string, string>, Record<string, string>][] = [
      ['TemplateService/GetTemplate', { id: templateB }, { id: `tpl_${new ObjectId().toHexString()}` }],
      ['TemplateService/ArchiveTemplate', { id: templateB }, { id: `tpl_${new ObjectId().toHexString()}` }],
      ['ApiKeyService/RevokeApiKey', { id: keyB }, { id: `key_${new ObjectId().toHexString()}` }],
      [
        'WebhookEndpointService/DeleteWebhookEndpoint',
        { id: endpointB },
        { id: `whe_${new ObjectId().toHexString()}` },
      ],
      [
        'WebhookEndpointService/RotateWebhookEndpointSecret',
        { id: endpointB },
        { id: `whe_${new ObjectId().toHexString()}` },
      ],
      ['DeliveryService/GetDelivery', { id: deliveryB }, { id: `dlv_${new ObjectId().toHexString()}` }],
      ['DeliveryService/RedeliverDelivery', { id: deliveryB }, { id: `dlv_${new ObjectId().toHexString()}` }],
      ['TemplateService/ListTemplates', { workspaceId: wsB }, { workspaceId: `ws_${new ObjectId().toHexString()}` }],
      ['ApiKeyService/CreateApiKey', { workspaceId: wsB }, { workspaceId: `ws_${new ObjectId().toHexString()}` }],
    ];
    for (const [method, theirs, missing] of probes) {
      const a = await call(method, theirs, { cookie: owner.cookie });
      const b = await call(method, missing, { cookie: owner.cookie });
      expect(a.status, method).toBe(404);
      expect(b.status, method).toBe(404);
      const id = Object.values(theirs)[0]!;
      expect(a.body.message.replace(id, 'ID'), method).toBe(b.body.message.replace(Object.values(missing)[0]!, 'ID'));
    }
    // Still there for the operator: nothing of B was touched.
    expect((await ok(operator('TemplateService/GetTemplate', { id: templateB }))).template.status).toBe(
      'TEMPLATE_STATUS_ACTIVE',
    );
  });
});

describe('ending sessions', () => {
  it('sign-out revokes the session and clears the cookie', async () => {
    const member = await newMember(wsA, 'VIEWER', 'leaver@a.example', 'leaver passphrase here');
    const out = await call('SessionService/SignOut', {}, { cookie: member.cookie });
    expect(out.status).toBe(200);
    changes.push({ action: 'sessions.signOut', actor: member.userId, target: member.userId });
    expect(out.headers['set-cookie']?.[0]).toMatch(/^docgen_session=; .*Max-Age=0/);
    const after = await call('TemplateService/ListTemplates', { workspaceId: wsA }, { cookie: member.cookie });
    expect(after.status).toBe(401);
  });

  it('disabling a user revokes every session at once; enabling does not bring them back', async () => {
    const member = await newMember(wsA, 'EDITOR', 'disabled@a.example', 'disabled passphrase here');
    const second = sessionFrom(
      await call(
        'SessionService/SignIn',
        { email: 'disabled@a.example', password: 'disabled passphrase here' },
        { origin: portal },
      ),
    );
    changes.push({ action: 'sessions.signIn', actor: member.userId });
    expect((await call('TemplateService/ListTemplates', { workspaceId: wsA }, { cookie: second })).status).toBe(200);
    await ok(operator('UserService/DisableUser', { id: member.userId }));
    changes.push({ action: 'users.disable', actor: 'operator', target: member.userId });
    const started = Date.now();
    for (const cookie of [member.cookie, second])
      expect((await call('TemplateService/ListTemplates', { workspaceId: wsA }, { cookie })).status).toBe(401);
    expect(Date.now() - started).toBeLessThan(1000);
    const signIn = await call(
      'SessionService/SignIn',
      { email: 'disabled@a.example', password: 'disabled passphrase here' },
      { origin: portal, localAddress: '127.0.0.5' },
    );
    expect(signIn.status).toBe(401);
    await ok(operator('UserService/EnableUser', { id: member.userId }));
    changes.push({ action: 'users.enable', actor: 'operator', target: member.userId });
    expect((await call('TemplateService/ListTemplates', { workspaceId: wsA }, { cookie: second })).status).toBe(401);
  });

  it('a session ends 12 h after its last use, and 7 days after sign-in however busy', async () => {
    const member = await newMember(wsA, 'VIEWER', 'sleepy@a.example', 'sleepy passphrase here');
    const busy = sessionFrom(
      await call(
        'SessionService/SignIn',
        { email: 'sleepy@a.example', password: 'sleepy passphrase here' },
        { origin: portal },
      ),
    );
    changes.push({ action: 'sessions.signIn', actor: member.userId });
    const sessions = mongo.db(stack.deps.mongo.database).collection(COLLECTIONS.sessions);
    const stored = await sessions
      .find({ userId: new ObjectId(member.userId.slice(4)) })
      .sort({ createdAt: 1 })
      .toArray();
    expect(stored).toHaveLength(2);
    const [idle, old] = stored as { _id: ObjectId; createdAt: Date; idleExpiresAt: Date; absoluteExpiresAt: Date }[];
    expect(idle!.idleExpiresAt.getTime() - idle!.createdAt.getTime()).toBe(12 * 3600_000);
    expect(old!.absoluteExpiresAt.getTime() - old!.createdAt.getTime()).toBe(7 * 24 * 3600_000);
    // Use moves the idle expiry forward (written at most once a minute, never past the 7 days).
    await sessions.updateOne(
      { _id: old!._id },
      { $set: { lastSeenAt: new Date(Date.now() - 120_000), idleExpiresAt: new Date(Date.now() + 60_000) } },
    );
    expect((await call('TemplateService/ListTemplates', { workspaceId: wsA }, { cookie: busy })).status).toBe(200);
    const touched = (await sessions.findOne({ _id: old!._id }))!;
    expect(touched.idleExpiresAt.getTime()).toBeGreaterThan(Date.now() + 11.9 * 3600_000);
    // Time passes for the stored sessions: one idle past its 12 h, the other past its 7 days.
    await sessions.updateOne({ _id: idle!._id }, { $set: { idleExpiresAt: new Date(Date.now() - 1000) } });
    await sessions.updateOne(
      { _id: old!._id },
      { $set: { absoluteExpiresAt: new Date(Date.now() - 1000), idleExpiresAt: new Date(Date.now() + 3600_000) } },
    );
    for (const cookie of [member.cookie, busy])
      expect((await call('TemplateService/ListTemplates', { workspaceId: wsA }, { cookie })).status).toBe(401);
  });

  it('reset clears the password, signs the user out and issues a new link', async () => {
    const member = await newMember(wsA, 'VIEWER', 'forgetful@a.example', 'forgetful passphrase');
    const reset = await ok(operator('UserService/ResetUser', { id: member.userId }));
    changes.push({ action: 'users.reset', actor: 'operator', target: member.userId });
    expect(reset.user.hasPassword ?? false).toBe(false);
    expect((await call('TemplateService/ListTemplates', { workspaceId: wsA }, { cookie: member.cookie })).status).toBe(
      401,
    );
    secrets.add('remembered passphrase');
    const accepted = await call(
      'SessionService/AcceptInvitation',
      { token: tokenOf(reset.inviteUrl), password: 'remembered passphrase' },
      { origin: portal },
    );
    expect(accepted.status).toBe(200);
    changes.push({ action: 'sessions.acceptInvitation', actor: member.userId });
  });
});

describe('CSRF', () => {
  it('refuses a state change with the cookie from another origin, or with none', async () => {
    const body = { workspaceId: wsA, name: 'csrf', content: { body: '<p>x</p>' } };
    const cross = await call('TemplateService/CreateTemplate', body, {
      cookie: owner.cookie,
      origin: 'http://evil.example',
    });
    expect(cross.status).toBe(403);
    expect(cross.body.message).toMatch(/Cross-origin/);
    const noOrigin = await call('TemplateService/CreateTemplate', body, { cookie: owner.cookie, origin: null });
    expect(noOrigin.status).toBe(403);
    const list = await ok(operator('TemplateService/ListTemplates', { workspaceId: wsA }));
    expect(list.templates.map((t: { name: string }) => t.name)).not.toContain('csrf');
    // The same call from the portal's origin goes through.
    const same = await ok(call('TemplateService/CreateTemplate', body, { cookie: owner.cookie }));
    changes.push({
      action: 'templates.create',
      actor: owner.userId,
      target: same.template.id,
      workspaceId: wsA,
    });
  });
});

describe('sign-in rate limits', () => {
  const wrong = (email: string, localAddress: string) =>
    call('SessionService/SignIn', { email, password: 'not the password at all' }, { origin: portal, localAddress });

  it('answers the same for an unknown email and a wrong password', async () => {
    const known = await wrong('owner@a.example', '127.0.0.9');
    const unknown = await wrong('nobody@a.example', '127.0.0.9');
    expect(known.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(known.body).toEqual(unknown.body);
  });

  it('the 11th failed sign-in for one email from one address gets 429 with Retry-After; other addresses are not blocked', async () => {
    for (let i = 0; i < 10; i++) expect((await wrong('target@a.example', '127.0.0.2')).status).toBe(401);
    const limited = await wrong('target@a.example', '127.0.0.2');
    expect(limited.status).toBe(429);
    // The budget refills one attempt every 90 s (10 per 15 min): the wait is at most that,
    // less the time the ten password checks took (each is a deliberately slow scrypt).
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(90);
    expect(limited.body.code).toBe('resource_exhausted');
    expect((await wrong('target@a.example', '127.0.0.3')).status).toBe(401);
  });

  it('20 bad sign-ins from one address do not block the right password from another', async () => {
    const answers: number[] = [];
    for (let i = 0; i < 20; i++) answers.push((await wrong('owner@a.example', '127.0.0.12')).status);
    expect(answers.filter((s) => s === 401)).toHaveLength(10);
    expect(answers.filter((s) => s === 429)).toHaveLength(10);
    const signedIn = await call(
      'SessionService/SignIn',
      { email: 'owner@a.example', password: 'a long owner passphrase' },
      { origin: portal, localAddress: '127.0.0.13' },
    );
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    changes.push({ action: 'sessions.signIn', actor: owner.userId });
    sessionFrom(signedIn);
  });

  it('concurrent guesses cannot overspend: of 16 at once, 10 are answered and 6 limited', async () => {
    const answers = await Promise.all(Array.from({ length: 16 }, () => wrong('burst@a.example', '127.0.0.7')));
    expect(answers.filter((a) => a.status === 401)).toHaveLength(10);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(6);
  });

  it('the 11th failed sign-in from one address gets 429, whatever the email; other addresses are unaffected', async () => {
    for (let i = 0; i < 10; i++) expect((await wrong(`guess${i}@a.example`, '127.0.0.4')).status).toBe(401);
    const limited = await wrong('guess10@a.example', '127.0.0.4');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await wrong('guess11@a.example', '127.0.0.6')).status).toBe(401);
  });
});

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runAdminCli(args, {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env: { DOCGEN_ADMIN_URL: portal, DOCGEN_ADMIN_TOKEN: stack.deps.adminToken },
  });
  return { code, stdout, stderr };
}

describe('docgen admin user … and audit list', () => {
  it('invites with --json ({id, inviteUrl}), lists, disables, enables and resets', async () => {
    const invited = await cli([
      'user',
      'invite',
      '--workspace',
      wsA,
      '--email',
      'CLI@a.example',
      '--role',
      'owner',
      '--json',
    ]);
    expect(invited.code, invited.stderr).toBe(0);
    const { id, inviteUrl } = JSON.parse(invited.stdout) as { id: string; inviteUrl: string };
    expect(Object.keys(JSON.parse(invited.stdout))).toEqual(['id', 'inviteUrl']);
    expect(id).toMatch(/^usr_[0-9a-f]{24}$/);
    changes.push({ action: 'users.invite', actor: 'operator', target: id, workspaceId: wsA });
    tokenOf(inviteUrl);

    const listed = JSON.parse((await cli(['user', 'list', '--workspace', wsA, '--json'])).stdout) as {
      users: { id: string; email: string; hasPassword: boolean }[];
    };
    expect(listed.users.find((u) => u.id === id)).toMatchObject({ email: 'cli@a.example', hasPassword: false });
    expect((await cli(['user', 'list'])).stdout).toMatch(/cli@a\.example\s+-\s+invited/);

    expect((await cli(['user', 'disable', id])).stdout).toMatch(/Disabled cli@a\.example/);
    changes.push({ action: 'users.disable', actor: 'operator', target: id });
    expect(
      (
        await call(
          'SessionService/AcceptInvitation',
          { token: tokenOf(inviteUrl), password: 'cli owner passphrase' },
          { origin: portal },
        )
      ).status,
    ).toBe(401);
    expect((await cli(['user', 'enable', id])).code).toBe(0);
    changes.push({ action: 'users.enable', actor: 'operator', target: id });

    const reset = await cli(['user', 'reset', id, '--json']);
    expect(reset.code, reset.stderr).toBe(0);
    changes.push({ action: 'users.reset', actor: 'operator', target: id });
    const again = JSON.parse(reset.stdout) as { id: string; inviteUrl: string };
    expect(again.inviteUrl).not.toBe(inviteUrl);
    secrets.add('cli owner passphrase');
    expect(
      (
        await call(
          'SessionService/AcceptInvitation',
          { token: tokenOf(again.inviteUrl), password: 'cli owner passphrase' },
          { origin: portal },
        )
      ).status,
    ).toBe(200);
    changes.push({ action: 'sessions.acceptInvitation', actor: id });

    const bad = await cli(['user', 'invite', '--workspace', wsA, '--email', 'x@a.example', '--role', 'admin']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--role must be owner, editor or viewer/);
  });

  it('audit list --workspace shows the changes with their actors', async () => {
    const res = await cli(['audit', 'list', '--workspace', wsA, '--page-size', '100', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const { events } = JSON.parse(res.stdout) as { events: { actor: string; action: string; targetId: string }[] };
    expect(events.some((e) => e.action === 'users.invite' && e.actor === 'operator')).toBe(true);
    expect(events.some((e) => e.action === 'templates.publish' && e.actor.startsWith('usr_'))).toBe(true);
    const human = await cli(['audit', 'list', '--workspace', wsA]);
    expect(human.stdout.split('\n')[0]).toMatch(/^TIME\s+WHO\s+WHAT\s+TARGET\s+WORKSPACE$/);
    // In words, with the person (src/domain/audit-words.ts), never an RPC's name.
    expect(human.stdout).toMatch(/The operator \(admin token\)\s+invited cli@a\.example as owner/);
    expect(human.stdout).toMatch(/published version \d+ of /);
    expect(human.stdout).not.toMatch(/Service\.|templates\.publish/);
    const published = await cli(['audit', 'list', '--workspace', wsA, '--action', 'templates.publish', '--json']);
    const only = JSON.parse(published.stdout) as { events: { action: string; summary: string }[] };
    expect(only.events.length).toBeGreaterThan(0);
    expect(only.events.every((e) => e.action === 'templates.publish' && /^published version/.test(e.summary))).toBe(
      true,
    );
  });
});

describe('audit and storage', () => {
  it('the audit list shows each state change with its actor, newest first, page by page', async () => {
    const events: Record<string, string>[] = [];
    let pageToken = '';
    do {
      const page = await ok(operator('AuditService/ListAuditEvents', { pageSize: 7, pageToken }));
      events.push(...page.events);
      pageToken = page.nextPageToken ?? '';
    } while (pageToken);
    for (const change of changes) {
      const found = events.find(
        (e) =>
          e.action === change.action && e.actor === change.actor && (!change.target || e.targetId === change.target),
      );
      expect(found, JSON.stringify(change)).toBeDefined();
      if (change.workspaceId) expect(found!.workspaceId, JSON.stringify(change)).toBe(change.workspaceId);
    }
    const times = events.map((e) => Date.parse(e.occurredAt!));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    // An owner reads their workspace's trail; only A's events are in it.
    const mine = await ok(
      call('AuditService/ListAuditEvents', { workspaceId: wsA, pageSize: 100 }, { cookie: owner.cookie }),
    );
    expect(mine.events.length).toBeGreaterThan(5);
    expect(mine.events.every((e: { workspaceId: string }) => e.workspaceId === wsA)).toBe(true);
    expect((await call('AuditService/ListAuditEvents', { workspaceId: wsB }, { cookie: owner.cookie })).status).toBe(
      404,
    );
  });

  it('no password, session id or invitation token is stored in plain, hex or base64 form', async () => {
    const db = mongo.db(stack.deps.mongo.database);
    let dump = '';
    for (const { name } of await db.listCollections().toArray()) {
      for (const doc of await db.collection(name).find({}).toArray()) dump += `${BSON.EJSON.stringify(doc)}\n`;
    }
    expect(dump).toContain('owner@a.example');
    expect(secrets.size).toBeGreaterThan(15);
    const hexDump = dump.toLowerCase();
    for (const secret of secrets) {
      const forms = new Set([
        secret,
        Buffer.from(secret).toString('hex'),
        Buffer.from(secret).toString('base64'),
        Buffer.from(secret).toString('base64url'),
      ]);
      if (/^[A-Za-z0-9_-]{43}$/.test(secret)) {
        const raw = Buffer.from(secret, 'base64url');
        forms.add(raw.toString('hex'));
        forms.add(raw.toString('base64'));
      }
      for (const form of forms) {
        expect(dump.includes(form), `a form of a secret is stored: ${form.slice(0, 6)}…`).toBe(false);
        expect(hexDump.includes(form.toLowerCase()), `a form of a secret is stored: ${form.slice(0, 6)}…`).toBe(false);
      }
    }
  });
});
