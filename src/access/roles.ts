// Roles of a workspace member and the rights each grants. The operations table
// (admin-operations.ts) names the right each operation needs; this table says which roles hold it.
import type { MemberRole } from '../store/identity-documents.ts';

export type { MemberRole };
export const MEMBER_ROLES: readonly MemberRole[] = ['owner', 'editor', 'viewer'];

/** Rights a member may hold in a workspace. */
export type Permission =
  | 'read'
  | 'templates.edit'
  | 'templates.unarchive'
  | 'keys.manage'
  | 'endpoints.manage'
  | 'deliveries.manage'
  | 'generations.manage'
  | 'generations.create'
  | 'members.manage'
  | 'audit.read'
  | 'workspace.manage';

/** Who holds each right, and what it covers (the docs' roles table says the same). */
export const PERMISSIONS: Record<Permission, { roles: readonly MemberRole[]; covers: string }> = {
  read: {
    roles: ['owner', 'editor', 'viewer'],
    covers: 'read the workspace, templates and versions, generations, deliveries, key and endpoint lists, members',
  },
  'templates.edit': {
    roles: ['owner', 'editor'],
    covers:
      'create templates and versions, preview, check, publish, rename, archive, delete (a used one is archived); upload and delete assets',
  },
  'templates.unarchive': { roles: ['owner'], covers: 'unarchive templates' },
  'keys.manage': { roles: ['owner'], covers: 'create and revoke API keys' },
  'endpoints.manage': { roles: ['owner'], covers: 'create, delete, rotate and test webhook endpoints' },
  'deliveries.manage': { roles: ['owner'], covers: 'redeliver webhook deliveries' },
  'generations.manage': { roles: ['owner'], covers: 'delete generations' },
  'generations.create': { roles: ['owner', 'editor'], covers: 'render a generation again (the portal)' },
  'members.manage': { roles: ['owner'], covers: 'invite members, change roles, remove members' },
  'audit.read': { roles: ['owner'], covers: 'read the audit trail' },
  'workspace.manage': { roles: ['owner'], covers: 'change workspace settings' },
};

export function roleAllows(role: MemberRole, permission: Permission): boolean {
  return PERMISSIONS[permission].roles.includes(role);
}

export function isMemberRole(value: unknown): value is MemberRole {
  return typeof value === 'string' && (MEMBER_ROLES as string[]).includes(value);
}
