// The identity module: people (users, members, invitations) and signing in and out, built from
// their repositories. Transport-neutral (never imports Connect); src/rpc serves it. Recognising
// a session on later calls is authentication's (src/auth); what a member may do, and the audit
// trail, are access control's (src/access).
import type { Db } from 'mongodb';
import { AuditEventsRepository } from '../store/audit-events-repository.ts';
import { InvitationsRepository } from '../store/invitations-repository.ts';
import { MembershipsRepository } from '../store/memberships-repository.ts';
import type { PageTokens } from '../store/pagination.ts';
import type { RateLimitsRepository } from '../store/rate-limits-repository.ts';
import { PendingInvitationsRepository } from '../store/pending-invitations-repository.ts';
import { SessionsRepository } from '../store/sessions-repository.ts';
import { UsersRepository } from '../store/users-repository.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';
import { People } from './people.ts';
import { SessionManager } from './sessions.ts';
import { SignInLimiter, type SignInLimits } from './sign-in-limiter.ts';

/** The collections of people, their sessions and the audit trail. */
export interface IdentityRepositories {
  users: UsersRepository;
  memberships: MembershipsRepository;
  sessions: SessionsRepository;
  invitations: InvitationsRepository;
  pendingInvitations: PendingInvitationsRepository;
  auditEvents: AuditEventsRepository;
}

export function createIdentityRepositories(db: Db): IdentityRepositories {
  return {
    users: new UsersRepository(db),
    memberships: new MembershipsRepository(db),
    sessions: new SessionsRepository(db),
    invitations: new InvitationsRepository(db),
    pendingInvitations: new PendingInvitationsRepository(db),
    auditEvents: new AuditEventsRepository(db),
  };
}

export interface IdentityDeps {
  repositories: IdentityRepositories;
  workspaces: WorkspacesRepository;
  rateLimits: RateLimitsRepository;
  /** DOCGEN_PORTAL_BASE_URL, or the admin listener's address once it is bound. */
  portalBaseUrl: () => string;
  pageTokens: PageTokens;
  signInLimits?: Partial<SignInLimits> | undefined;
}

export interface Identity {
  sessions: SessionManager;
  people: People;
  portalBaseUrl: () => string;
}

export function createIdentity(deps: IdentityDeps): Identity {
  const { users, memberships, sessions, invitations } = deps.repositories;
  const workspaces = deps.workspaces;
  return {
    sessions: new SessionManager({
      users,
      memberships,
      sessions,
      invitations,
      workspaces,
      limiter: new SignInLimiter(deps.rateLimits, deps.signInLimits),
    }),
    people: new People({
      users,
      pendingInvitations: deps.repositories.pendingInvitations,
      memberships,
      sessions,
      invitations,
      workspaces,
      portalBaseUrl: deps.portalBaseUrl,
      pageTokens: deps.pageTokens,
    }),
    portalBaseUrl: deps.portalBaseUrl,
  };
}
