// The cross-workspace takeover of issue #32, played against the real admin listener the way a
// browser and the CLI speak to it (Connect JSON over HTTP/1.1, the session cookie, Origin).
// The operator invites alice@corp.example as owner of workspace B; before she sets her
// password, the owner of workspace A invites the same address. The attacker must get no link
// and learn nothing about Alice, and Alice's own link must still work. Played again after a
// ResetUser, and for a disabled account.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoClient, ObjectId } from 'mongodb';
import { COLLECTIONS } from '../../src/store/documents.ts';
import { startApiStack, type ApiStack } from './api-stack.ts';

const S = '/docgen.admin.v1.';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: Record<string, any>;
}

let stack: ApiStack;
let portal: string;
let mongo: MongoClient;

function call(method: string, body: object, options: { cookie?: string; token?: string } = {}): Promise<Answer> {
  const payload = JSON.stringify(body);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(payload)),
  };
  if (options.cookie) {
    headers.cookie = options.cookie;
    headers.origin = portal;
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: stack.app.adminPort, method: 'POST', path: `${S}${method}`, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: text ? JSON.parse(text) : {} });
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
  if (a.status !== 200) throw new Error(`expected 200, got ${a.status}: ${a.text}`);
  return a.body;
}

/** The session cookie (`name=value`) a sign-in answered with. */
function cookieOf(answer: Answer): string {
  const cookie = (answer.headers['set-cookie'] ?? []).find((c) => /^(__Host-)?docgen_session=/.test(c));
  if (!cookie) throw new Error(`no session cookie in ${JSON.stringify(answer.headers)}`);
  return cookie.split(';')[0]!;
}

function tokenOf(inviteUrl: string): string {
  expect(inviteUrl.startsWith(`${portal}/invite/`), inviteUrl).toBe(true);
  return inviteUrl.slice(`${portal}/invite/`.length);
}

const accept = (token: string, password: string) =>
  call('SessionService/AcceptInvitation', { token, password, displayName: 'Set by the accepter' });

/** The open (unused, unrevoked, unexpired) invitation links of a user, straight from MongoDB. */
async function openLinksOf(userId: string): Promise<number> {
  return mongo
    .db(stack.deps.mongo.database)
    .collection(COLLECTIONS.invitations)
    .countDocuments({
      userId: new ObjectId(userId.slice('usr_'.length)),
      usedAt: null,
      revokedAt: null,
      expiresAt: { $gt: new Date() },
    });
}

let wsA: string;
let wsB: string;
let mallory: string;

beforeAll(async () => {
  stack = await startApiStack();
  portal = `http://127.0.0.1:${stack.app.adminPort}`;
  mongo = new MongoClient(stack.deps.mongo.url);
  await mongo.connect();
  wsA = (await ok(operator('WorkspaceService/CreateWorkspace', { name: 'Attacker workspace A' }))).workspace.id;
  wsB = (await ok(operator('WorkspaceService/CreateWorkspace', { name: 'Victim workspace B' }))).workspace.id;
  // Mallory owns workspace A, legitimately.
  const invited = await ok(
    operator('UserService/InviteUser', { workspaceId: wsA, email: 'mallory@a.example', role: 'MEMBER_ROLE_OWNER' }),
  );
  mallory = cookieOf(await accept(tokenOf(invited.inviteUrl), 'mallory owns workspace a'));
}, 120_000);

afterAll(async () => {
  await mongo?.close();
  await stack?.close();
});

/** What an owner may learn from inviting an address with an account: nothing about it. */
function expectNothingAbout(
  answer: Record<string, any>,
  email: string,
  userId: string,
  displayName: string,
  role = 'MEMBER_ROLE_OWNER',
): void {
  expect(answer.inviteUrl ?? '').toBe('');
  expect(answer.inviteExpiresAt).toBeUndefined();
  expect(answer.member).toBeUndefined();
  expect(answer.pendingInvitation).toMatchObject({ workspaceId: wsA, email, role });
  const text = JSON.stringify(answer);
  expect(text).not.toContain(userId);
  expect(text).not.toContain(userId.slice('usr_'.length));
  expect(text).not.toContain(displayName);
  expect(text).not.toMatch(/disabled|hasPassword|invite\//);
}

describe('an owner of A inviting an address that already has an account', () => {
  it('Alice, invited to B and not yet signed up: the attacker gets no link, and her own link still works', async () => {
    const invited = await ok(
      operator('UserService/InviteUser', {
        workspaceId: wsB,
        email: 'alice@corp.example',
        role: 'MEMBER_ROLE_OWNER',
        displayName: 'Alice Victim',
      }),
    );
    const alice = invited.user.id as string;
    const alicesLink = tokenOf(invited.inviteUrl);
    expect(await openLinksOf(alice)).toBe(1);

    // The takeover attempt: every way an owner of A can invite the address.
    for (const email of ['alice@corp.example', ' Alice@Corp.Example ']) {
      for (const role of ['MEMBER_ROLE_OWNER', 'MEMBER_ROLE_VIEWER']) {
        const answer = await ok(
          call(
            'MemberService/InviteMember',
            { workspaceId: wsA, email, role, displayName: 'Mallory was here' },
            { cookie: mallory },
          ),
        );
        expectNothingAbout(answer, 'alice@corp.example', alice, 'Alice Victim', role);
      }
    }
    // No new link was issued, and Alice's was not revoked.
    expect(await openLinksOf(alice)).toBe(1);
    // Alice is not in A without her consent, and the attacker cannot answer her invitation.
    const members = await ok(call('MemberService/ListMembers', { workspaceId: wsA }, { cookie: mallory }));
    expect(JSON.stringify(members)).not.toContain('alice@corp.example');
    const answered = await call('SessionService/AcceptPendingInvitation', { workspaceId: wsA }, { cookie: mallory });
    expect(answered.status).toBe(404);
    // The operator's reset stays the operator's.
    expect((await call('UserService/ResetUser', { id: alice }, { cookie: mallory })).status).toBe(403);

    // Alice's own link works: she sets her password and is an owner of B, nothing else yet.
    const accepted = await accept(alicesLink, 'alice chooses her own passphrase');
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.user.id).toBe(alice);
    expect(accepted.body.memberships).toEqual([
      { workspaceId: wsB, workspaceName: 'Victim workspace B', role: 'MEMBER_ROLE_OWNER' },
    ]);
    const aliceCookie = cookieOf(accepted);

    // Signed in, she sees A's invitation (with the role last offered) and decides.
    const session = await ok(call('SessionService/GetCurrentSession', {}, { cookie: aliceCookie }));
    expect(session.pendingInvitations).toEqual([
      expect.objectContaining({
        workspaceId: wsA,
        workspaceName: 'Attacker workspace A',
        email: 'alice@corp.example',
        role: 'MEMBER_ROLE_VIEWER',
      }),
    ]);
    const joined = await ok(
      call('SessionService/AcceptPendingInvitation', { workspaceId: wsA }, { cookie: aliceCookie }),
    );
    expect(joined.membership).toEqual({
      workspaceId: wsA,
      workspaceName: 'Attacker workspace A',
      role: 'MEMBER_ROLE_VIEWER',
    });
    const after = await ok(call('SessionService/GetCurrentSession', {}, { cookie: aliceCookie }));
    expect(after.pendingInvitations ?? []).toEqual([]);
    expect(after.memberships.map((m: { workspaceId: string }) => m.workspaceId).sort()).toEqual([wsA, wsB].sort());
    // Accepted once: a second answer finds nothing.
    expect(
      (await call('SessionService/AcceptPendingInvitation', { workspaceId: wsA }, { cookie: aliceCookie })).status,
    ).toBe(404);

    // The audit trail of A shows who joined.
    const audit = await ok(operator('AuditService/ListAuditEvents', { workspaceId: wsA }));
    expect(audit.events).toContainEqual(
      expect.objectContaining({ actor: alice, action: 'sessions.acceptPendingInvitation', targetId: wsA }),
    );
  });

  it('after a ResetUser: the attacker gets no link, and the new link from the operator works', async () => {
    const invited = await ok(
      operator('UserService/InviteUser', { workspaceId: wsB, email: 'bob@corp.example', role: 'MEMBER_ROLE_OWNER' }),
    );
    const bob = invited.user.id as string;
    expect((await accept(tokenOf(invited.inviteUrl), 'bob first passphrase here')).status).toBe(200);
    const reset = await ok(operator('UserService/ResetUser', { id: bob }));
    const bobsLink = tokenOf(reset.inviteUrl);

    const answer = await ok(
      call(
        'MemberService/InviteMember',
        { workspaceId: wsA, email: 'bob@corp.example', role: 'MEMBER_ROLE_OWNER' },
        { cookie: mallory },
      ),
    );
    expectNothingAbout(answer, 'bob@corp.example', bob, 'Set by the accepter');
    expect(await openLinksOf(bob)).toBe(1);
    const accepted = await accept(bobsLink, 'bob second passphrase now');
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.user.id).toBe(bob);
  });

  it('a disabled account answers exactly like any other (no error, no state), and a new address gets its first link', async () => {
    const invited = await ok(
      operator('UserService/InviteUser', {
        workspaceId: wsB,
        email: 'carol@corp.example',
        role: 'MEMBER_ROLE_EDITOR',
        displayName: 'Carol Hidden',
      }),
    );
    const carol = invited.user.id as string;
    await ok(operator('UserService/DisableUser', { id: carol }));
    const answer = await ok(
      call(
        'MemberService/InviteMember',
        { workspaceId: wsA, email: 'carol@corp.example', role: 'MEMBER_ROLE_OWNER' },
        { cookie: mallory },
      ),
    );
    expectNothingAbout(answer, 'carol@corp.example', carol, 'Carol Hidden');
    // The owner sees what A offered (the address and role, nothing of the account) and can withdraw it.
    const pending = await ok(call('MemberService/ListPendingInvitations', { workspaceId: wsA }, { cookie: mallory }));
    const carolsOffer = pending.pendingInvitations.find((p: { email: string }) => p.email === 'carol@corp.example');
    expect(carolsOffer).toMatchObject({ workspaceId: wsA, role: 'MEMBER_ROLE_OWNER' });
    expect(JSON.stringify(pending)).not.toContain(carol.slice('usr_'.length));
    await ok(
      call(
        'MemberService/RevokePendingInvitation',
        { workspaceId: wsA, email: 'carol@corp.example' },
        { cookie: mallory },
      ),
    );
    const after = await ok(call('MemberService/ListPendingInvitations', { workspaceId: wsA }, { cookie: mallory }));
    expect(JSON.stringify(after)).not.toContain('carol@corp.example');
    expect(
      (
        await call(
          'MemberService/RevokePendingInvitation',
          { workspaceId: wsA, email: 'carol@corp.example' },
          { cookie: mallory },
        )
      ).status,
    ).toBe(404);
    const aliceLike = await ok(
      call(
        'MemberService/InviteMember',
        { workspaceId: wsA, email: 'alice@corp.example', role: 'MEMBER_ROLE_OWNER' },
        { cookie: mallory },
      ),
    );
    // Alice is now a member of A: her role changes, as for any member. Carol's answer has the
    // same shape as an existing outsider's, whatever her state.
    expect(aliceLike.member.role).toBe('MEMBER_ROLE_OWNER');
    const dave = await ok(
      call(
        'MemberService/InviteMember',
        { workspaceId: wsA, email: 'dave@new.example', role: 'MEMBER_ROLE_VIEWER' },
        { cookie: mallory },
      ),
    );
    expect(dave.member.user.email).toBe('dave@new.example');
    expect(dave.pendingInvitation).toBeUndefined();
    const daveSignedIn = await accept(tokenOf(dave.inviteUrl), 'dave picks a passphrase');
    expect(daveSignedIn.status, daveSignedIn.text).toBe(200);
    // Inviting Dave again (he has an account now) gives no link either.
    const again = await ok(
      call(
        'MemberService/InviteMember',
        { workspaceId: wsA, email: 'dave@new.example', role: 'MEMBER_ROLE_EDITOR' },
        { cookie: mallory },
      ),
    );
    expect(again.inviteUrl ?? '').toBe('');
    expect(again.member.role).toBe('MEMBER_ROLE_EDITOR');
  });
});
