// The audit trail as ListAuditEvents serves it (the real admin services in process, MongoDB
// stand-in): each event with the acting person's name and email and the action in words from
// what it recorded at the time; filters by person, action and time that hold on every page and
// bind the page token; an older event (RPC name, no facts) still told in words. And
// GetInvitation: the address of a working link, nothing for any other token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, ConnectError } from '@connectrpc/connect';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { MongoClient, ObjectId, type Document } from 'mongodb';
import { parseId } from '../../src/domain/ids.ts';
import { AuditEventsRepository } from '../../src/store/audit-events-repository.ts';
import { COLLECTIONS, declaredIndexes } from '../../src/store/documents.ts';
import { PageTokens } from '../../src/store/pagination.ts';
import { MemberRole } from '../../src/gen/docgen/admin/v1/identity_pb.js';
import { startAdminInProcess, type AdminInProcess, type SignedInMember } from '../harness/admin-in-process.ts';
import { rejection } from '../harness/in-process.ts';

let admin: AdminInProcess;
let ws: string;
let editor: SignedInMember;
let owner: SignedInMember;
let templateId: string;
const content = { body: '<p>{{ name }}</p>', variables: [{ name: 'name' }] };

beforeAll(async () => {
  admin = await startAdminInProcess();
  ws = await admin.workspace('Audit words');
  owner = await admin.member(ws, 'owner', 'olivia@audit.example');
  editor = await admin.member(ws, 'editor', 'eddie@audit.example');
  const created = await admin.clients.templates.createTemplate(
    { workspaceId: ws, name: 'Invoice', content },
    editor.options,
  );
  templateId = created.template!.id;
  await admin.clients.templates.createTemplateVersion({ templateId, content }, editor.options);
  await admin.clients.templates.publishTemplateVersion({ templateId, version: 2 }, editor.options);
  // Renamed afterwards: the event keeps the name it had.
  await admin.clients.members.updateMemberRole(
    { workspaceId: ws, userId: editor.userId, role: MemberRole.VIEWER },
    owner.options,
  );
});

afterAll(async () => {
  await admin?.close();
});

const list = (filter: Record<string, unknown> = {}, pageSize = 100, pageToken = '') =>
  admin.clients.audit.listAuditEvents({ workspaceId: ws, pageSize, pageToken, ...filter }, owner.options);

describe('ListAuditEvents in words', () => {
  it('names the person and tells the action from the facts recorded at the time', async () => {
    const { events } = await list();
    const publish = events.find((e) => e.action === 'templates.publish')!;
    expect(publish).toMatchObject({
      actor: editor.userId,
      actorEmail: editor.email,
      targetId: templateId,
      targetKind: 'template',
      targetName: 'Invoice',
      summary: 'published version 2 of Invoice',
    });
    expect(publish.facts).toMatchObject({ version: '2', templateName: 'Invoice' });
    const role = events.find((e) => e.action === 'members.updateRole')!;
    expect(role).toMatchObject({ actorEmail: owner.email, summary: `changed the role of ${editor.email} to viewer` });
    const invite = events.find((e) => e.action === 'users.invite' && e.targetId === editor.userId)!;
    expect(invite).toMatchObject({ actor: 'operator', summary: `invited ${editor.email} as editor` });
  });

  it('an older event (the RPC as its action, no facts) reads in words too', async () => {
    await new AuditEventsRepository(admin.stack.db).insert({
      _id: new ObjectId(),
      workspaceId: parseId('workspace', ws)!,
      actor: editor.userId,
      action: 'TemplateService.PublishTemplateVersion',
      targetId: templateId,
      occurredAt: new Date(),
      detail: 'version 1',
    });
    const { events } = await list({ action: 'templates.publish' });
    expect(events.map((e) => e.summary)).toEqual(['published version 1 of Invoice', 'published version 2 of Invoice']);
    expect(events.every((e) => e.action === 'templates.publish')).toBe(true);
  });

  it('filters by person and by action on every page, and a token keeps to its filters', async () => {
    const all = await list();
    const mine = all.events.filter((e) => e.actor === editor.userId).map((e) => e.id);
    // Created, saved a version, published (signing in belongs to no workspace), and the older event.
    expect(mine.length).toBeGreaterThanOrEqual(3);
    const walked: string[] = [];
    let token = '';
    do {
      const page = await list({ actor: editor.userId }, 1, token);
      walked.push(...page.events.map((e) => e.id));
      token = page.nextPageToken;
    } while (token);
    expect(walked).toEqual(mine);
    const first = await list({ actor: editor.userId }, 1);
    const other = await rejection(list({ actor: owner.userId }, 1, first.nextPageToken), ConnectError);
    expect(other.code).toBe(Code.InvalidArgument);
    const both = await list({ actor: editor.userId, action: 'templates.create' });
    expect(both.events.map((e) => e.summary)).toEqual(['created the template Invoice']);
    const operator = await list({ actor: 'operator' });
    expect(operator.events.length).toBeGreaterThan(0);
    expect(operator.events.every((e) => e.actor === 'operator')).toBe(true);
  });

  it('filters by time: at or after, and before', async () => {
    const { events } = await list();
    const times = events.map((e) => e.occurredAt!);
    const middle = times[Math.floor(times.length / 2)]!;
    const after = await list({ occurredAfter: middle });
    const before = await list({ occurredBefore: middle });
    expect(after.events.length + before.events.length).toBe(events.length);
    const at = (t: { seconds: bigint; nanos: number }) => Number(t.seconds) * 1000 + t.nanos / 1e6;
    expect(after.events.every((e) => at(e.occurredAt!) >= at(middle))).toBe(true);
    expect(before.events.every((e) => at(e.occurredAt!) < at(middle))).toBe(true);
    const future = await list({ occurredAfter: timestampFromDate(new Date(Date.now() + 60_000)) });
    expect(future.events).toEqual([]);
  });

  it('refuses filters it cannot apply, naming the field', async () => {
    for (const [filter, field] of [
      [{ actor: 'bob' }, 'actor'],
      [{ action: 'TemplateService.PublishTemplateVersion' }, 'action'],
      [
        {
          occurredAfter: timestampFromDate(new Date('2026-01-02')),
          occurredBefore: timestampFromDate(new Date('2026-01-01')),
        },
        'occurredBefore',
      ],
    ] as const) {
      const err = await rejection(list(filter), ConnectError);
      expect(err.code, field).toBe(Code.InvalidArgument);
      expect(err.rawMessage, field).toContain(field);
    }
  });
});

describe('GetInvitation', () => {
  it('names the address of a working link, and answers any other token as accepting it would', async () => {
    const invited = await admin.clients.users.inviteUser(
      { workspaceId: ws, email: 'Newcomer@Audit.example', role: MemberRole.EDITOR },
      admin.operator,
    );
    const token = new URL(invited.inviteUrl).pathname.slice('/invite/'.length);
    const res = await admin.clients.sessions.getInvitation({ token });
    expect(res.email).toBe('newcomer@audit.example');
    expect(res.expiresAt).toBeDefined();
    const wrong = await rejection(
      admin.clients.sessions.getInvitation({ token: `${token.slice(0, -2)}xx` }),
      ConnectError,
    );
    const malformed = await rejection(admin.clients.sessions.getInvitation({ token: 'nope' }), ConnectError);
    expect(wrong.code).toBe(Code.Unauthenticated);
    expect(malformed.rawMessage).toBe(wrong.rawMessage);
    expect(wrong.rawMessage).not.toContain('newcomer');
    // Used: the link no longer names anyone.
    await admin.clients.sessions.acceptInvitation({ token, password: 'a long newcomer passphrase' });
    const used = await rejection(admin.clients.sessions.getInvitation({ token }), ConnectError);
    expect(used.rawMessage).toBe(wrong.rawMessage);
  });
});

describe('the filters on real MongoDB', () => {
  // The stand-in cannot explain a query; test/integration/mongodb-only.test.ts does on MongoDB
  // (test/harness/list-queries.ts). Here: each combination's query, as the driver sends it, is
  // equality on a declared index's leading fields with `_id` (the order, and the time range) last.
  it('every combination of person, action and time is a range on a declared index', async () => {
    const client = new MongoClient(admin.stack.mongo.url, { monitorCommands: true });
    await client.connect();
    const sent: Document[] = [];
    client.on('commandStarted', (e) => {
      if (e.commandName === 'find') sent.push(e.command);
    });
    try {
      const repo = new AuditEventsRepository(client.db(admin.stack.mongo.database));
      const tokens = new PageTokens(Buffer.alloc(32, 1));
      const indexes = declaredIndexes()[COLLECTIONS.auditEvents]!.map((i) => Object.keys(i.key));
      const person = { actor: editor.userId };
      const action = { actions: ['templates.publish', 'TemplateService.PublishTemplateVersion'] };
      const time = { occurredAfter: new Date(Date.now() - 3_600_000), occurredBefore: new Date() };
      for (const workspace of [parseId('workspace', ws)!, undefined])
        for (const filter of [
          {},
          person,
          action,
          time,
          { ...person, ...action },
          { ...person, ...time },
          { ...action, ...time },
        ]) {
          sent.length = 0;
          await repo.list(workspace, tokens.request({ pageSize: 1 }, { list: 'x', filters: {} }), filter);
          const query = sent.at(-1)!.filter as Record<string, unknown>;
          const equal = Object.keys(query).filter((k) => k !== '_id' && k !== 'occurredAt');
          const served = indexes.some(
            (keys) =>
              keys.at(-1) === '_id' &&
              keys.length - 1 === equal.length &&
              equal.every((field) => keys.slice(0, -1).includes(field)),
          );
          const what = `${workspace ? 'workspace' : 'all'} ${Object.keys(filter).join('+') || 'none'}`;
          expect(served || (equal.length === 0 && !workspace), `${what}: ${JSON.stringify(query)}`).toBe(true);
          const sort = sent.at(-1)!.sort as Map<string, number> | Record<string, number>;
          expect(sort instanceof Map ? Object.fromEntries(sort) : sort, what).toEqual({ _id: -1 });
        }
    } finally {
      await client.close();
    }
  });
});
