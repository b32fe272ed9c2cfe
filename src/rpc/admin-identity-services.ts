// Connect handlers of the identity services (SessionService, UserService, MemberService,
// AuditService): proto in, domain call, proto out. Who may call what is decided before these
// run, by the access interceptor (admin-access-interceptor.ts); the session handlers set the cookie.
import { create } from '@bufbuild/protobuf';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { AuditEventView, AuditLog } from '../access/audit-log.ts';
import type { MemberRole as DomainRole } from '../access/roles.ts';
import { clearedSessionCookie, sessionCookie } from '../auth/session-cookie.ts';
import type { Identity } from '../identity/identity.ts';
import type { MembershipView, MemberView, UserView } from '../identity/identity-views.ts';
import type { PendingInvitationView } from '../identity/people.ts';
import type { SignedIn } from '../identity/sessions.ts';
import { unauthorized } from '../domain/errors.ts';
import { formatId } from '../domain/ids.ts';
import * as pb from '../gen/docgen/admin/v1/identity_pb.js';
import { MemberRole } from '../gen/docgen/admin/v1/identity_pb.js';
import { callerKey, clientAddressKey } from './admin-access-interceptor.ts';
import { ts } from './admin-proto.ts';

const ROLE_TO_PROTO: Record<DomainRole, MemberRole> = {
  owner: MemberRole.OWNER,
  editor: MemberRole.EDITOR,
  viewer: MemberRole.VIEWER,
};
const ROLE_FROM_PROTO: Partial<Record<MemberRole, DomainRole>> = {
  [MemberRole.OWNER]: 'owner',
  [MemberRole.EDITOR]: 'editor',
  [MemberRole.VIEWER]: 'viewer',
};

/** The domain role for a proto enum value; undefined (refused by the domain) for UNSPECIFIED or unknown. */
export function roleFromProto(role: MemberRole): DomainRole | undefined {
  return ROLE_FROM_PROTO[role];
}

export function userToProto(u: UserView): pb.User {
  return create(pb.UserSchema, {
    id: u.id,
    email: u.email,
    displayName: u.displayName,
    disabled: u.disabled,
    hasPassword: u.hasPassword,
    createdAt: ts(u.createdAt),
    updatedAt: ts(u.updatedAt),
  });
}

function membershipToProto(m: MembershipView): pb.Membership {
  return create(pb.MembershipSchema, {
    workspaceId: m.workspaceId,
    workspaceName: m.workspaceName,
    role: ROLE_TO_PROTO[m.role],
  });
}

function memberToProto(m: MemberView): pb.Member {
  return create(pb.MemberSchema, {
    user: userToProto(m.user),
    workspaceId: m.workspaceId,
    role: ROLE_TO_PROTO[m.role],
    createdAt: ts(m.createdAt),
  });
}

function pendingInvitationToProto(p: PendingInvitationView): pb.PendingInvitation {
  return create(pb.PendingInvitationSchema, {
    workspaceId: p.workspaceId,
    workspaceName: p.workspaceName,
    email: p.email,
    role: ROLE_TO_PROTO[p.role],
    createdAt: ts(p.createdAt),
    expiresAt: ts(p.expiresAt),
  });
}

/** The signed-in person making the call (pending invitations are a person's, not the operator's). */
function signedInUser(ctx: HandlerContext) {
  const caller = ctx.values.get(callerKey);
  if (caller?.kind !== 'member') throw unauthorized('Sign in as the invited person to answer an invitation');
  return caller.user;
}

function auditEventToProto(e: AuditEventView): pb.AuditEvent {
  return create(pb.AuditEventSchema, { ...e, occurredAt: ts(e.occurredAt) });
}

function setSessionCookie(identity: Identity, ctx: HandlerContext, signedIn: SignedIn): void {
  ctx.responseHeader.append(
    'set-cookie',
    sessionCookie(signedIn.sessionId, {
      portalBaseUrl: identity.portalBaseUrl(),
      maxAgeSeconds: signedIn.maxAgeSeconds,
    }),
  );
}

export class SessionServiceHandler implements ServiceImpl<typeof pb.SessionService> {
  private readonly identity: Identity;
  constructor(identity: Identity) {
    this.identity = identity;
  }

  async signIn(req: pb.SignInRequest, ctx: HandlerContext): Promise<pb.SignInResponse> {
    const signedIn = await this.identity.sessions.signIn(req.email, req.password, ctx.values.get(clientAddressKey));
    setSessionCookie(this.identity, ctx, signedIn);
    return create(pb.SignInResponseSchema, {
      user: userToProto(signedIn.user),
      memberships: signedIn.memberships.map(membershipToProto),
    });
  }

  async signOut(_req: pb.SignOutRequest, ctx: HandlerContext): Promise<pb.SignOutResponse> {
    const caller = ctx.values.get(callerKey);
    if (caller?.kind === 'member') await this.identity.sessions.signOut(caller.sessionKey);
    ctx.responseHeader.append('set-cookie', clearedSessionCookie({ portalBaseUrl: this.identity.portalBaseUrl() }));
    return create(pb.SignOutResponseSchema, {});
  }

  async getCurrentSession(
    _req: pb.GetCurrentSessionRequest,
    ctx: HandlerContext,
  ): Promise<pb.GetCurrentSessionResponse> {
    const caller = ctx.values.get(callerKey);
    if (caller?.kind !== 'member')
      return create(pb.GetCurrentSessionResponseSchema, { operator: caller?.kind === 'operator' });
    const { user, memberships } = await this.identity.sessions.describe(caller);
    const pending = await this.identity.people.pendingInvitationsOf(caller.user);
    return create(pb.GetCurrentSessionResponseSchema, {
      user: userToProto(user),
      memberships: memberships.map(membershipToProto),
      operator: false,
      pendingInvitations: pending.map(pendingInvitationToProto),
    });
  }

  async acceptPendingInvitation(
    req: pb.AcceptPendingInvitationRequest,
    ctx: HandlerContext,
  ): Promise<pb.AcceptPendingInvitationResponse> {
    const membership = await this.identity.people.acceptPendingInvitation(signedInUser(ctx), req.workspaceId);
    return create(pb.AcceptPendingInvitationResponseSchema, { membership: membershipToProto(membership) });
  }

  async declinePendingInvitation(
    req: pb.DeclinePendingInvitationRequest,
    ctx: HandlerContext,
  ): Promise<pb.DeclinePendingInvitationResponse> {
    await this.identity.people.declinePendingInvitation(signedInUser(ctx), req.workspaceId);
    return create(pb.DeclinePendingInvitationResponseSchema, {});
  }

  async getInvitation(req: pb.GetInvitationRequest): Promise<pb.GetInvitationResponse> {
    const { email, expiresAt } = await this.identity.sessions.describeInvitation(req.token);
    return create(pb.GetInvitationResponseSchema, { email, expiresAt: ts(expiresAt) });
  }

  async acceptInvitation(req: pb.AcceptInvitationRequest, ctx: HandlerContext): Promise<pb.AcceptInvitationResponse> {
    const signedIn = await this.identity.sessions.acceptInvitation(req.token, req.password, req.displayName);
    setSessionCookie(this.identity, ctx, signedIn);
    return create(pb.AcceptInvitationResponseSchema, {
      user: userToProto(signedIn.user),
      memberships: signedIn.memberships.map(membershipToProto),
    });
  }
}

export class UserServiceHandler implements ServiceImpl<typeof pb.UserService> {
  private readonly identity: Identity;
  constructor(identity: Identity) {
    this.identity = identity;
  }

  async inviteUser(req: pb.InviteUserRequest): Promise<pb.InviteUserResponse> {
    const { member, invitation } = await this.identity.people.invite({
      workspaceId: req.workspaceId,
      email: req.email,
      role: roleFromProto(req.role),
      displayName: req.displayName,
    });
    return create(pb.InviteUserResponseSchema, {
      user: userToProto(member.user),
      inviteUrl: invitation.url,
      inviteExpiresAt: ts(invitation.expiresAt),
    });
  }

  async listUsers(req: pb.ListUsersRequest): Promise<pb.ListUsersResponse> {
    const page = await this.identity.people.listUsers(req.workspaceId || undefined, {
      pageSize: req.pageSize,
      pageToken: req.pageToken,
    });
    return create(pb.ListUsersResponseSchema, {
      users: page.items.map(userToProto),
      nextPageToken: page.nextPageToken,
    });
  }

  async disableUser(req: pb.DisableUserRequest): Promise<pb.DisableUserResponse> {
    return create(pb.DisableUserResponseSchema, { user: userToProto(await this.identity.people.disable(req.id)) });
  }

  async enableUser(req: pb.EnableUserRequest): Promise<pb.EnableUserResponse> {
    return create(pb.EnableUserResponseSchema, { user: userToProto(await this.identity.people.enable(req.id)) });
  }

  async resetUser(req: pb.ResetUserRequest): Promise<pb.ResetUserResponse> {
    const { user, invitation } = await this.identity.people.reset(req.id);
    return create(pb.ResetUserResponseSchema, {
      user: userToProto(user),
      inviteUrl: invitation.url,
      inviteExpiresAt: ts(invitation.expiresAt),
    });
  }
}

export class MemberServiceHandler implements ServiceImpl<typeof pb.MemberService> {
  private readonly identity: Identity;
  constructor(identity: Identity) {
    this.identity = identity;
  }

  async listMembers(req: pb.ListMembersRequest): Promise<pb.ListMembersResponse> {
    const page = await this.identity.people.listMembers(req.workspaceId, {
      pageSize: req.pageSize,
      pageToken: req.pageToken,
    });
    return create(pb.ListMembersResponseSchema, {
      members: page.items.map(memberToProto),
      nextPageToken: page.nextPageToken,
    });
  }

  async inviteMember(req: pb.InviteMemberRequest, ctx: HandlerContext): Promise<pb.InviteMemberResponse> {
    const caller = ctx.values.get(callerKey);
    const invitedBy = caller?.kind === 'member' ? formatId('user', caller.user._id) : 'operator';
    const { member, invitation, pending } = await this.identity.people.inviteAsOwner(
      {
        workspaceId: req.workspaceId,
        email: req.email,
        role: roleFromProto(req.role),
        displayName: req.displayName,
      },
      invitedBy,
    );
    return create(pb.InviteMemberResponseSchema, {
      member: member ? memberToProto(member) : undefined,
      inviteUrl: invitation.url,
      inviteExpiresAt: ts(invitation.expiresAt),
      pendingInvitation: pending ? pendingInvitationToProto(pending) : undefined,
    });
  }

  async updateMemberRole(req: pb.UpdateMemberRoleRequest): Promise<pb.UpdateMemberRoleResponse> {
    const member = await this.identity.people.updateRole(req.workspaceId, req.userId, roleFromProto(req.role));
    return create(pb.UpdateMemberRoleResponseSchema, { member: memberToProto(member) });
  }

  async removeMember(req: pb.RemoveMemberRequest): Promise<pb.RemoveMemberResponse> {
    await this.identity.people.removeMember(req.workspaceId, req.userId);
    return create(pb.RemoveMemberResponseSchema, {});
  }

  async listPendingInvitations(req: pb.ListPendingInvitationsRequest): Promise<pb.ListPendingInvitationsResponse> {
    const page = await this.identity.people.listPendingInvitations(req.workspaceId, {
      pageSize: req.pageSize,
      pageToken: req.pageToken,
    });
    return create(pb.ListPendingInvitationsResponseSchema, {
      pendingInvitations: page.items.map(pendingInvitationToProto),
      nextPageToken: page.nextPageToken,
    });
  }

  async revokePendingInvitation(req: pb.RevokePendingInvitationRequest): Promise<pb.RevokePendingInvitationResponse> {
    await this.identity.people.revokePendingInvitation(req.workspaceId, req.email);
    return create(pb.RevokePendingInvitationResponseSchema, {});
  }
}

export class AuditServiceHandler implements ServiceImpl<typeof pb.AuditService> {
  private readonly audit: AuditLog;
  constructor(audit: AuditLog) {
    this.audit = audit;
  }

  async listAuditEvents(req: pb.ListAuditEventsRequest): Promise<pb.ListAuditEventsResponse> {
    const page = await this.audit.list(
      req.workspaceId || undefined,
      { pageSize: req.pageSize, pageToken: req.pageToken },
      {
        actor: req.actor,
        action: req.action,
        occurredAfter: req.occurredAfter ? timestampDate(req.occurredAfter) : undefined,
        occurredBefore: req.occurredBefore ? timestampDate(req.occurredBefore) : undefined,
      },
    );
    return create(pb.ListAuditEventsResponseSchema, {
      events: page.items.map(auditEventToProto),
      nextPageToken: page.nextPageToken,
    });
  }
}
