// `docgen admin user …` (people of the portal), `docgen admin member list` and
// `docgen admin audit list`.
import type { AuditEvent, Member, User } from '../../gen/docgen/admin/v1/identity_pb.js';
import { MemberRole } from '../../gen/docgen/admin/v1/identity_pb.js';
import { AUDIT_ACTIONS, auditActorInWords, isAuditAction } from '../../domain/audit-words.ts';
import { need, page, PAGE_OPTIONS, str, UsageError, type Command } from './command.ts';
import { dateFlag } from './generation-commands.ts';
import { iso, more, table, time } from './output.ts';

const ROLES: Record<string, MemberRole> = {
  owner: MemberRole.OWNER,
  editor: MemberRole.EDITOR,
  viewer: MemberRole.VIEWER,
};
const ROLE_NAMES: Partial<Record<MemberRole, string>> = Object.fromEntries(
  Object.entries(ROLES).map(([name, value]) => [value, name]),
);

function role(value: string | boolean | undefined): MemberRole {
  const r = ROLES[str(value).toLowerCase()];
  if (r === undefined) throw new UsageError('--role must be owner, editor or viewer');
  return r;
}

function inviteText(user: User, inviteUrl: string, expires: string): string {
  if (!inviteUrl) return `${user.email} (${user.id}) already has a password: they sign in to the portal with it.`;
  return `Invitation for ${user.email} (${user.id}), single use, expires ${expires}:\n\n  ${inviteUrl}\n\nSend it to them over a channel you trust; whoever opens it sets the password.`;
}

export const userCommands: Command[] = [
  {
    path: ['user', 'invite'],
    synopsis: '--workspace WS_ID --email EMAIL --role owner|editor|viewer [--name DISPLAY_NAME]',
    summary: 'Add a person to a workspace; prints a single-use link (72 h) where they set their password.',
    positionals: [],
    options: {
      workspace: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string' },
      name: { type: 'string' },
    },
    required: ['workspace', 'email', 'role'],
    async run({ values, clients, print }) {
      const res = await clients.users.inviteUser({
        workspaceId: str(values.workspace),
        email: str(values.email),
        role: role(values.role),
        displayName: str(values.name),
      });
      const user = need(res.user);
      print({ id: user.id, inviteUrl: res.inviteUrl }, inviteText(user, res.inviteUrl, time(res.inviteExpiresAt)));
    },
  },
  {
    path: ['user', 'list'],
    synopsis: '[--workspace WS_ID] [--page-size N] [--page-token TOKEN]',
    summary: 'List users (only members of the workspace when given).',
    positionals: [],
    options: { workspace: { type: 'string' }, ...PAGE_OPTIONS },
    async run({ values, clients, print }) {
      const res = await clients.users.listUsers({ workspaceId: str(values.workspace), ...page(values) });
      print(
        { users: res.users.map(userJson), nextPageToken: res.nextPageToken || null },
        table(
          ['ID', 'EMAIL', 'NAME', 'STATE', 'CREATED'],
          res.users.map((u) => [u.id, u.email, u.displayName || '-', state(u), time(u.createdAt)]),
        ) + more(res.nextPageToken),
      );
    },
  },
  {
    path: ['user', 'disable'],
    synopsis: 'USER_ID',
    summary: 'Disable a user: every session ends at once and sign-in is refused.',
    positionals: ['USER_ID'],
    options: {},
    async run({ args, clients, print }) {
      const u = need((await clients.users.disableUser({ id: args[0]! })).user);
      print(userJson(u), `Disabled ${u.email} (${u.id}); their sessions are revoked.`);
    },
  },
  {
    path: ['user', 'enable'],
    synopsis: 'USER_ID',
    summary: 'Enable a disabled user again (they sign in anew).',
    positionals: ['USER_ID'],
    options: {},
    async run({ args, clients, print }) {
      const u = need((await clients.users.enableUser({ id: args[0]! })).user);
      print(userJson(u), `Enabled ${u.email} (${u.id}).`);
    },
  },
  {
    path: ['user', 'reset'],
    synopsis: 'USER_ID',
    summary: 'Clear the password, end all sessions, and print a new invitation link.',
    positionals: ['USER_ID'],
    options: {},
    async run({ args, clients, print }) {
      const res = await clients.users.resetUser({ id: args[0]! });
      const user = need(res.user);
      print({ id: user.id, inviteUrl: res.inviteUrl }, inviteText(user, res.inviteUrl, time(res.inviteExpiresAt)));
    },
  },
  {
    path: ['member', 'list'],
    synopsis: '--workspace WS_ID [--page-size N] [--page-token TOKEN]',
    summary: "List a workspace's members and their roles, in the order they joined.",
    positionals: [],
    options: { workspace: { type: 'string' }, ...PAGE_OPTIONS },
    required: ['workspace'],
    async run({ values, clients, print }) {
      const res = await clients.members.listMembers({ workspaceId: str(values.workspace), ...page(values) });
      print(
        { members: res.members.map(memberJson), nextPageToken: res.nextPageToken || null },
        table(
          ['USER', 'EMAIL', 'ROLE', 'STATE', 'JOINED'],
          res.members.map((m) => {
            const u = need(m.user);
            return [u.id, u.email, ROLE_NAMES[m.role] ?? '-', state(u), time(m.createdAt)];
          }),
        ) + more(res.nextPageToken),
      );
    },
  },
  {
    path: ['audit', 'list'],
    synopsis:
      '[--workspace WS_ID] [--actor USR_ID|operator] [--action OPERATION] [--after ISO] [--before ISO] [--page-size N] [--page-token TOKEN]',
    summary: 'Who changed what and when, in words, newest first (one workspace, or everything).',
    positionals: [],
    options: {
      workspace: { type: 'string' },
      actor: { type: 'string' },
      action: { type: 'string' },
      after: { type: 'string' },
      before: { type: 'string' },
      ...PAGE_OPTIONS,
    },
    async run({ values, clients, print }) {
      const action = str(values.action);
      if (action && !isAuditAction(action))
        throw new UsageError(`--action ${JSON.stringify(action)}: use one of ${Object.keys(AUDIT_ACTIONS).join(', ')}`);
      const res = await clients.audit.listAuditEvents({
        workspaceId: str(values.workspace),
        actor: str(values.actor),
        action,
        occurredAfter: values.after === undefined ? undefined : dateFlag('--after', str(values.after)),
        occurredBefore: values.before === undefined ? undefined : dateFlag('--before', str(values.before)),
        ...page(values),
      });
      print(
        { events: res.events.map(auditJson), nextPageToken: res.nextPageToken || null },
        table(
          ['TIME', 'WHO', 'WHAT', 'TARGET', 'WORKSPACE'],
          res.events.map((e) => [
            time(e.occurredAt),
            auditActorInWords({ id: e.actor, email: e.actorEmail, displayName: e.actorDisplayName }),
            e.summary || e.action,
            e.targetId || '-',
            e.workspaceId || '-',
          ]),
        ) + more(res.nextPageToken),
      );
    },
  },
];

function state(u: User): string {
  if (u.disabled) return 'disabled';
  return u.hasPassword ? 'active' : 'invited';
}

function userJson(u: User) {
  return {
    id: u.id,
    email: u.email,
    displayName: u.displayName,
    disabled: u.disabled,
    hasPassword: u.hasPassword,
    createdAt: iso(u.createdAt),
    updatedAt: iso(u.updatedAt),
  };
}

function memberJson(m: Member) {
  return { user: userJson(need(m.user)), role: ROLE_NAMES[m.role] ?? null, joinedAt: iso(m.createdAt) };
}

function auditJson(e: AuditEvent) {
  return {
    id: e.id,
    workspaceId: e.workspaceId || null,
    actor: e.actor,
    action: e.action,
    targetId: e.targetId,
    occurredAt: iso(e.occurredAt),
    detail: e.detail,
    actorEmail: e.actorEmail || null,
    actorDisplayName: e.actorDisplayName || null,
    summary: e.summary,
    targetKind: e.targetKind || null,
    targetName: e.targetName || null,
    facts: e.facts,
  };
}
