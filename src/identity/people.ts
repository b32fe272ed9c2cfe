// Users and workspace members: invitations (single use, 72 h by default, only the token's
// hash is stored), disabling (revokes every session at once), resets, roles and removal.
// Used by the operator's UserService and by owners through MemberService.
//
// Who may hold a link that sets a password (docs/portal.md#invitations-threat-model): the
// operator, and the owner whose invitation created the account. An owner inviting an email
// that already has an account gets no link and learns nothing about the account: the person
// is offered the membership (a pending invitation) and accepts it signed in, as themself.
import type { ObjectId } from 'mongodb';
import { hashSecretToken, newSecretToken, tokenDocumentId } from '../auth/secret-tokens.ts';
import { isMemberRole, MEMBER_ROLES } from '../access/roles.ts';
import { failedPrecondition, notFound, validationError } from '../domain/errors.ts';
import { formatId } from '../domain/ids.ts';
import { quoteId, requireId, requireWorkspace } from '../domain/input.ts';
import type { InvitationsRepository } from '../store/invitations-repository.ts';
import type { MemberRole, UserDoc } from '../store/identity-documents.ts';
import type { MembershipsRepository } from '../store/memberships-repository.ts';
import type { Page, PageInput, PageTokens } from '../store/pagination.ts';
import type { PendingInvitationsRepository } from '../store/pending-invitations-repository.ts';
import type { SessionsRepository } from '../store/sessions-repository.ts';
import type { UsersRepository } from '../store/users-repository.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';
import {
  requireEmail,
  toMemberView,
  toUserView,
  type MembershipView,
  type MemberView,
  type UserView,
} from './identity-views.ts';

export const INVITATION_TTL_MS = 72 * 60 * 60 * 1000;
/** How long an offer of membership to an existing account stays open. */
export const PENDING_INVITATION_TTL_MS = 14 * 24 * 60 * 60 * 1000;

export interface Invitation {
  /** `<portal base>/invite/<token>`; '' when the person already has a password (they just sign in). */
  url: string;
  expiresAt: Date | null;
}

/** A membership offered to an existing account, waiting for that person to accept it. */
export interface PendingInvitationView {
  workspaceId: string;
  workspaceName: string;
  /** The address the owner typed (for the owner's answer); the invited account's own otherwise. */
  email: string;
  role: MemberRole;
  createdAt: Date;
  expiresAt: Date;
}

/** What an owner's invitation did, told without anything about accounts outside the workspace. */
export interface MemberInvitation {
  /** The member, when the person is one now: a brand-new account, or someone already in the workspace. */
  member: MemberView | null;
  /** The password-setting link: only for a brand-new account ('' otherwise). */
  invitation: Invitation;
  /** Set instead of `member` when the email has an account outside the workspace. */
  pending: PendingInvitationView | null;
}

export interface PeopleDeps {
  users: UsersRepository;
  pendingInvitations: PendingInvitationsRepository;
  memberships: MembershipsRepository;
  sessions: SessionsRepository;
  invitations: InvitationsRepository;
  workspaces: WorkspacesRepository;
  /** DOCGEN_PORTAL_BASE_URL (or the admin listener's address), without a trailing slash. */
  portalBaseUrl: () => string;
  pageTokens: PageTokens;
  invitationTtlMs?: number;
}

export interface InviteInput {
  workspaceId: string;
  email: string;
  role: unknown;
  displayName?: string | undefined;
}

export class People {
  private readonly deps: PeopleDeps;
  constructor(deps: PeopleDeps) {
    this.deps = deps;
  }

  /**
   * The operator's invitation: creates the user if new, adds (or changes) the membership, and
   * issues a link if they have no password yet (revoking their older links).
   */
  async invite(input: InviteInput): Promise<{ member: MemberView; invitation: Invitation }> {
    const email = requireEmail(input.email);
    const role = requireRole(input.role);
    const displayName = (input.displayName ?? '').trim().slice(0, 200);
    const workspace = await requireWorkspace(this.deps.workspaces, input.workspaceId);
    const { user } = await this.deps.users.getOrCreate(email, displayName);
    if (user.disabled) throw failedPrecondition(`User ${email} is disabled; enable them before inviting them`);
    if (displayName && !user.displayName) await this.deps.users.setDisplayNameIfEmpty(user._id, displayName);
    await this.guardLastOwner(workspace._id, user._id, role);
    const membership = await this.deps.memberships.put(user._id, workspace._id, role);
    const invitation =
      user.passwordHash === null ? await this.issueInvitation(user._id, workspace._id) : { url: '', expiresAt: null };
    const fresh = (await this.deps.users.get(user._id)) ?? user;
    return { member: toMemberView(fresh, membership), invitation };
  }

  /**
   * An owner's invitation (MemberService). A new email gets an account, the membership and the
   * account's first link. An email with an account never gets a link and is never added
   * without consent: a member of the workspace has their role changed; anyone else is offered
   * the membership, which they accept signed in. Disabled or not, with a password or not, the
   * answer is the same: the owner learns nothing about accounts outside their workspace.
   */
  async inviteAsOwner(input: InviteInput, invitedBy: string): Promise<MemberInvitation> {
    const email = requireEmail(input.email);
    const role = requireRole(input.role);
    const displayName = (input.displayName ?? '').trim().slice(0, 200);
    const workspace = await requireWorkspace(this.deps.workspaces, input.workspaceId);
    const { user, created } = await this.deps.users.getOrCreate(email, displayName);
    const none: Invitation = { url: '', expiresAt: null };
    if (created) {
      const membership = await this.deps.memberships.put(user._id, workspace._id, role);
      const invitation = await this.issueInvitation(user._id, workspace._id);
      const fresh = (await this.deps.users.get(user._id)) ?? user;
      return { member: toMemberView(fresh, membership), invitation, pending: null };
    }
    if (await this.deps.memberships.get(user._id, workspace._id)) {
      await this.guardLastOwner(workspace._id, user._id, role);
      const membership = await this.deps.memberships.setRole(user._id, workspace._id, role);
      if (membership) return { member: toMemberView(user, membership), invitation: none, pending: null };
      // Removed meanwhile: offered like anybody else's.
    }
    const offer = await this.deps.pendingInvitations.put({
      userId: user._id,
      workspaceId: workspace._id,
      role,
      invitedBy,
      expiresAt: new Date(Date.now() + PENDING_INVITATION_TTL_MS),
    });
    return {
      member: null,
      invitation: none,
      pending: {
        workspaceId: formatId('workspace', workspace._id),
        workspaceName: workspace.name,
        email,
        role,
        createdAt: offer.createdAt,
        expiresAt: offer.expiresAt,
      },
    };
  }

  /** The workspace's open offers to existing accounts, oldest first (what its owners invited). */
  async listPendingInvitations(workspaceId: string, input?: PageInput): Promise<Page<PendingInvitationView>> {
    const page = this.deps.pageTokens.request(input, {
      list: 'pendingInvitations',
      filters: { workspace: workspaceId },
    });
    const workspace = await requireWorkspace(this.deps.workspaces, workspaceId);
    const offers = await this.deps.pendingInvitations.pageOfWorkspace(workspace._id, page);
    const users = new Map(
      (await this.deps.users.getMany(offers.items.map((o) => o.userId))).map((u) => [u._id.toHexString(), u]),
    );
    return {
      items: offers.items.flatMap((offer) => {
        const user = users.get(offer.userId.toHexString());
        // Only the address the owner typed (the account's normalised email): nothing else of it.
        return user
          ? [
              {
                workspaceId: formatId('workspace', workspace._id),
                workspaceName: workspace.name,
                email: user.email,
                role: offer.role,
                createdAt: offer.createdAt,
                expiresAt: offer.expiresAt,
              },
            ]
          : [];
      }),
      nextPageToken: offers.nextPageToken,
    };
  }

  /** An owner withdraws the workspace's offer to this email (NOT_FOUND when there is none). */
  async revokePendingInvitation(workspaceId: string, emailInput: unknown): Promise<void> {
    const email = requireEmail(emailInput);
    const workspace = await requireWorkspace(this.deps.workspaces, workspaceId);
    const user = await this.deps.users.getByEmail(email);
    if (!user || !(await this.deps.pendingInvitations.remove(user._id, workspace._id)))
      throw notFound(`Pending invitation for ${email}`);
  }

  /** The memberships offered to this user and still open, oldest first. */
  async pendingInvitationsOf(user: UserDoc): Promise<PendingInvitationView[]> {
    const offers = await this.deps.pendingInvitations.listOpenOfUser(user._id);
    const views: PendingInvitationView[] = [];
    for (const offer of offers) {
      const workspace = await this.deps.workspaces.get(offer.workspaceId);
      if (!workspace) continue;
      views.push({
        workspaceId: formatId('workspace', offer.workspaceId),
        workspaceName: workspace.name,
        email: user.email,
        role: offer.role,
        createdAt: offer.createdAt,
        expiresAt: offer.expiresAt,
      });
    }
    return views;
  }

  /**
   * The signed-in user accepts the workspace's offer: they become a member with the offered
   * role (a membership they already have keeps its role). Only the invited account can: the
   * offer is found by the caller's own id.
   */
  async acceptPendingInvitation(user: UserDoc, workspaceId: string): Promise<MembershipView> {
    const workspace = await requireWorkspace(this.deps.workspaces, workspaceId);
    const offer = await this.deps.pendingInvitations.getOpen(user._id, workspace._id);
    if (!offer) throw notFound(`Invitation to workspace ${quoteId(workspaceId)}`);
    // Membership first, then the offer goes: a crash in between leaves an offer that accepts again.
    const membership = await this.deps.memberships.addIfAbsent(user._id, workspace._id, offer.role);
    await this.deps.pendingInvitations.remove(user._id, workspace._id);
    return { workspaceId: formatId('workspace', workspace._id), workspaceName: workspace.name, role: membership.role };
  }

  async declinePendingInvitation(user: UserDoc, workspaceId: string): Promise<void> {
    const workspace = await requireWorkspace(this.deps.workspaces, workspaceId);
    if (!(await this.deps.pendingInvitations.remove(user._id, workspace._id)))
      throw notFound(`Invitation to workspace ${quoteId(workspaceId)}`);
  }

  /** Newest first; only the workspace's members when one is given. */
  async listUsers(workspaceId: string | undefined, input?: PageInput): Promise<Page<UserView>> {
    const page = this.deps.pageTokens.request(input, { list: 'users', filters: { workspace: workspaceId } });
    let ids: ObjectId[] | undefined;
    if (workspaceId) {
      const workspace = await requireWorkspace(this.deps.workspaces, workspaceId);
      ids = (await this.deps.memberships.listByWorkspace(workspace._id)).map((m) => m.userId);
    }
    const result = await this.deps.users.list(ids, page);
    return { items: result.items.map(toUserView), nextPageToken: result.nextPageToken };
  }

  /** Disables the user and revokes all their sessions and open invitations. */
  async disable(id: string): Promise<UserView> {
    const user = await this.requireUser(id);
    const updated = await this.deps.users.setDisabled(user._id, true);
    await this.deps.sessions.revokeAllOfUser(user._id);
    await this.deps.users.setInvitation(user._id, null);
    await this.deps.invitations.revokeOpenOfUser(user._id);
    return toUserView(updated ?? user);
  }

  async enable(id: string): Promise<UserView> {
    const user = await this.requireUser(id);
    return toUserView((await this.deps.users.setDisabled(user._id, false)) ?? user);
  }

  /** Clears the password, signs the user out everywhere and issues a new invitation link. */
  async reset(id: string): Promise<{ user: UserView; invitation: Invitation }> {
    const user = await this.requireUser(id);
    if (user.disabled) throw failedPrecondition(`User ${user.email} is disabled; enable them before resetting`);
    const cleared = await this.deps.users.clearPassword(user._id);
    await this.deps.sessions.revokeAllOfUser(user._id);
    const invitation = await this.issueInvitation(user._id, null);
    return { user: toUserView(cleared ?? user), invitation };
  }

  /** In the order they joined. */
  async listMembers(workspaceId: string, input?: PageInput): Promise<Page<MemberView>> {
    const page = this.deps.pageTokens.request(input, { list: 'members', filters: { workspace: workspaceId } });
    const workspace = await requireWorkspace(this.deps.workspaces, workspaceId);
    const memberships = await this.deps.memberships.page(workspace._id, page);
    const users = new Map(
      (await this.deps.users.getMany(memberships.items.map((m) => m.userId))).map((u) => [u._id.toHexString(), u]),
    );
    return {
      items: memberships.items.flatMap((m) => {
        const user = users.get(m.userId.toHexString());
        return user ? [toMemberView(user, m)] : [];
      }),
      nextPageToken: memberships.nextPageToken,
    };
  }

  async updateRole(workspaceId: string, userId: string, roleInput: unknown): Promise<MemberView> {
    const role = requireRole(roleInput);
    const workspace = await requireWorkspace(this.deps.workspaces, workspaceId);
    const user = await this.requireUser(userId, 'userId');
    await this.guardLastOwner(workspace._id, user._id, role);
    const membership = await this.deps.memberships.setRole(user._id, workspace._id, role);
    if (!membership) throw notFound(`Member ${quoteId(userId)}`);
    return toMemberView(user, membership);
  }

  async removeMember(workspaceId: string, userId: string): Promise<void> {
    const workspace = await requireWorkspace(this.deps.workspaces, workspaceId);
    const user = await this.requireUser(userId, 'userId');
    await this.guardLastOwner(workspace._id, user._id, undefined);
    if (!(await this.deps.memberships.remove(user._id, workspace._id))) throw notFound(`Member ${quoteId(userId)}`);
  }

  /** A workspace keeps at least one owner (the operator can always add another first). */
  private async guardLastOwner(
    workspaceId: ObjectId,
    userId: ObjectId,
    newRole: MemberRole | undefined,
  ): Promise<void> {
    if (newRole === 'owner') return;
    const current = await this.deps.memberships.get(userId, workspaceId);
    if (current?.role !== 'owner') return;
    if ((await this.deps.memberships.countOwners(workspaceId)) <= 1) {
      throw failedPrecondition("This is the workspace's last owner; make someone else owner first");
    }
  }

  private async requireUser(id: string, field = 'id'): Promise<UserDoc> {
    const objectId = requireId('user', id, field, 'User');
    const user = await this.deps.users.get(objectId);
    if (!user) throw notFound(`User ${quoteId(id)}`);
    return user;
  }

  /**
   * A new single-use link; the user's older links stop working. The user document names the
   * newest, so even invitations issued at the same moment leave exactly one that works.
   */
  private async issueInvitation(userId: ObjectId, workspaceId: ObjectId | null): Promise<Invitation> {
    await this.deps.invitations.revokeOpenOfUser(userId);
    const token = newSecretToken();
    const tokenHash = hashSecretToken(token);
    const _id = tokenDocumentId('invitation', tokenHash);
    const now = new Date();
    const expiresAt = new Date(now.getTime() + (this.deps.invitationTtlMs ?? INVITATION_TTL_MS));
    await this.deps.invitations.insert({
      _id,
      tokenHash,
      userId,
      workspaceId,
      createdAt: now,
      expiresAt,
      usedAt: null,
      revokedAt: null,
      purgeAt: new Date(expiresAt.getTime() + 30 * 24 * 60 * 60 * 1000),
    });
    await this.deps.users.setInvitation(userId, _id);
    return { url: `${this.deps.portalBaseUrl().replace(/\/+$/, '')}/invite/${token}`, expiresAt };
  }
}

function requireRole(value: unknown): MemberRole {
  if (!isMemberRole(value))
    throw validationError([{ field: 'role', issue: `must be one of ${MEMBER_ROLES.join(', ')}` }]);
  return value;
}
