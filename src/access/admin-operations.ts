// THE access table of the admin plane: one line per domain operation (`templates.publish`),
// whatever transport carries it. The admin gate (admin-gate.ts) applies it to every call, for
// the operator token and for signed-in members alike; each transport maps its calls to these
// operations at its edge (Connect: src/rpc/admin-rpc-map.ts).
//
// FAIL CLOSED: an operation without a line is operator-only, and test/unit/access-policy fails
// for any admin RPC that maps to no line. Adding an operation? Add its line here:
//   - `access`: the right a member needs (roles.ts), or 'operator' | 'signed-in' | 'public'.
//   - `scope`: 'workspace' when a member is checked against the workspace the call names
//     (the transport edge says where: a `ws_…` id, or an object whose workspace counts);
//     'memberships' for lists the handler limits to the caller's workspaces; 'none' otherwise.
//   - `changes: true` for operations that change state: they are audited and, with a session
//     cookie, need a matching Origin.
import type { Permission } from './roles.ts';

export interface OperationPolicy {
  /** A member right, or: operator token only; any signed-in caller; no credential at all. */
  access: Permission | 'operator' | 'signed-in' | 'public';
  /** Where a member's role is checked: the named workspace, their own ones, or nowhere. */
  scope: 'workspace' | 'memberships' | 'none';
  /** State-changing: audited; with a session cookie the Origin must match. */
  changes: boolean;
}

const read = (access: OperationPolicy['access'] = 'read', scope: OperationPolicy['scope'] = 'workspace') =>
  ({ access, scope, changes: false }) satisfies OperationPolicy;
const change = (access: OperationPolicy['access'], scope: OperationPolicy['scope'] = 'workspace') =>
  ({ access, scope, changes: true }) satisfies OperationPolicy;

export const ADMIN_OPERATIONS = {
  'workspaces.create': change('operator', 'none'),
  'workspaces.get': read(),
  'workspaces.list': read('read', 'memberships'),
  'workspaces.update': change('workspace.manage'),

  'apiKeys.create': change('keys.manage'),
  'apiKeys.list': read(),
  'apiKeys.revoke': change('keys.manage'),

  'templates.create': change('templates.edit'),
  'templates.get': read(),
  'templates.list': read(),
  'templates.addVersion': change('templates.edit'),
  'templates.getVersion': read(),
  'templates.listVersions': read(),
  'templates.publish': change('templates.edit'),
  'templates.archive': change('templates.edit'),
  'templates.rename': change('templates.edit'),
  // Bringing back what an editor archived is the owner's call.
  'templates.unarchive': change('templates.unarchive'),
  // A used template is archived instead, which editors may do anyway.
  'templates.delete': change('templates.edit'),
  'templates.previewVersion': read('templates.edit'),
  'templates.previewContent': read('templates.edit'),
  'templates.checkContent': read('templates.edit'),
  // The gallery is the same for everybody: nothing of any workspace.
  'templates.listGallery': read('signed-in', 'none'),

  'webhookEndpoints.create': change('endpoints.manage'),
  'webhookEndpoints.list': read(),
  'webhookEndpoints.delete': change('endpoints.manage'),
  'webhookEndpoints.rotateSecret': change('endpoints.manage'),
  'webhookEndpoints.sendTestEvent': change('endpoints.manage'),

  'deliveries.list': read(),
  'deliveries.get': read(),
  'deliveries.redeliver': change('deliveries.manage'),

  'assets.upload': change('templates.edit'),
  'assets.list': read(),
  'assets.delete': change('templates.edit'),

  // Signing certificates: whoever edits templates picks one; the key itself is never returned.
  'certificates.upload': change('templates.edit'),
  'certificates.list': read(),
  'certificates.delete': change('templates.edit'),

  'generations.list': read(),
  'generations.get': read(),
  'batches.get': read(),
  'generations.delete': change('generations.manage'),
  'generations.renderAgain': change('generations.create'),
  'generations.getPdf': read(),

  'stats.get': read(),

  'sessions.signIn': change('public', 'none'),
  'sessions.signOut': change('signed-in', 'none'),
  'sessions.getCurrent': read('signed-in', 'none'),
  'sessions.acceptInvitation': change('public', 'none'),
  // The invitation page names the address: holding a working link is the proof.
  'sessions.getInvitation': read('public', 'none'),
  // The caller's own invitations: the handler finds them by the caller's id, so no workspace
  // role is checked (the person is not a member yet).
  'sessions.acceptPendingInvitation': change('signed-in', 'none'),
  'sessions.declinePendingInvitation': change('signed-in', 'none'),

  'users.invite': change('operator', 'none'),
  'users.list': read('operator', 'none'),
  'users.disable': change('operator', 'none'),
  'users.enable': change('operator', 'none'),
  'users.reset': change('operator', 'none'),

  'members.list': read(),
  'members.invite': change('members.manage'),
  'members.updateRole': change('members.manage'),
  'members.remove': change('members.manage'),
  'members.listPendingInvitations': read(),
  'members.revokePendingInvitation': change('members.manage'),

  'auditEvents.list': read('audit.read'),
} as const satisfies Record<string, OperationPolicy>;

export type AdminOperation = keyof typeof ADMIN_OPERATIONS;

/** What an operation without a line gets: the operator token only (fail closed). */
export const OPERATOR_ONLY: OperationPolicy = { access: 'operator', scope: 'none', changes: true };

export function isAdminOperation(name: string): name is AdminOperation {
  return Object.hasOwn(ADMIN_OPERATIONS, name);
}

export function policyOf(operation: string): OperationPolicy {
  return isAdminOperation(operation) ? ADMIN_OPERATIONS[operation] : OPERATOR_ONLY;
}
