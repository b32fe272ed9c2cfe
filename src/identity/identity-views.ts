// What the identity services answer with: users, memberships and members as plain values
// (the Connect handlers turn them into proto messages), and email normalisation.
import { validationError } from '../domain/errors.ts';
import { formatId } from '../domain/ids.ts';
import type { MemberRole, MembershipDoc, UserDoc } from '../store/identity-documents.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';

export interface UserView {
  id: string;
  email: string;
  displayName: string;
  disabled: boolean;
  hasPassword: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface MembershipView {
  workspaceId: string;
  workspaceName: string;
  role: MemberRole;
}

export interface MemberView {
  user: UserView;
  workspaceId: string;
  role: MemberRole;
  createdAt: Date;
}

export function toUserView(doc: UserDoc): UserView {
  return {
    id: formatId('user', doc._id),
    email: doc.email,
    displayName: doc.displayName,
    disabled: doc.disabled,
    hasPassword: doc.passwordHash !== null,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

export function toMemberView(user: UserDoc, membership: MembershipDoc): MemberView {
  return {
    user: toUserView(user),
    workspaceId: formatId('workspace', membership.workspaceId),
    role: membership.role,
    createdAt: membership.createdAt,
  };
}

/** The memberships with their workspace names (a workspace that is gone is left out). */
export async function membershipViews(
  workspaces: WorkspacesRepository,
  memberships: MembershipDoc[],
): Promise<MembershipView[]> {
  const views: MembershipView[] = [];
  for (const m of memberships) {
    const workspace = await workspaces.get(m.workspaceId);
    if (workspace)
      views.push({ workspaceId: formatId('workspace', m.workspaceId), workspaceName: workspace.name, role: m.role });
  }
  return views.sort((a, b) => a.workspaceName.localeCompare(b.workspaceName));
}

/** Trimmed and lower-cased: one person, one address, however it is typed. */
export function normaliseEmail(value: unknown): string {
  return typeof value === 'string' ? value.normalize('NFKC').trim().toLowerCase() : '';
}

export function requireEmail(value: unknown, field = 'email'): string {
  const email = normaliseEmail(value);
  if (email === '') throw validationError([{ field, issue: 'is required' }]);
  if (email.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
    throw validationError([{ field, issue: 'is not an email address' }]);
  return email;
}
