// The identity module: builds sessions, people, the audit log and the authorizer from their
// repositories. Transport-neutral (never imports Connect); src/rpc serves it.
import type { Db } from 'mongodb';
import { AuditEventsRepository } from '../store/audit-events-repository.ts';
import { InvitationsRepository } from '../store/invitations-repository.ts';
import { MembershipsRepository } from '../store/memberships-repository.ts';
import type { RateLimitsRepository } from '../store/rate-limits-repository.ts';
import { SessionsRepository } from '../store/sessions-repository.ts';
import { UsersRepository } from '../store/users-repository.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';
import type { ObjectKind } from './admin-policy.ts';
import { AuditLog } from './audit-log.ts';
import { Authorizer, type WorkspaceLookup } from './authorizer.ts';
import { People } from './people.ts';
import { SessionManager } from './sessions.ts';
import { SignInLimiter, type SignInLimits } from './sign-in-limiter.ts';

export interface IdentityRepositories {
  users: UsersRepository;
  memberships: MembershipsRepository;
  sessions: SessionsRepository;
  invitations: InvitationsRepository;
  auditEvents: AuditEventsRepository;
}

export function createIdentityRepositories(db: Db): IdentityRepositories {
  return {
    users: new UsersRepository(db),
    memberships: new MembershipsRepository(db),
    sessions: new SessionsRepository(db),
    invitations: new InvitationsRepository(db),
    auditEvents: new AuditEventsRepository(db),
  };
}

export interface IdentityDeps {
  repositories: IdentityRepositories;
  workspaces: WorkspacesRepository;
  rateLimits: RateLimitsRepository;
  /** The workspace of an object by its id, for the policy's object lookups. */
  lookups: Record<ObjectKind, WorkspaceLookup>;
  /** DOCGEN_PORTAL_BASE_URL, or the admin listener's address once it is bound. */
  portalBaseUrl: () => string;
  signInLimits?: SignInLimits;
}

export interface Identity {
  sessions: SessionManager;
  people: People;
  audit: AuditLog;
  authorizer: Authorizer;
  portalBaseUrl: () => string;
}

export function createIdentity(deps: IdentityDeps): Identity {
  const { users, memberships, sessions, invitations, auditEvents } = deps.repositories;
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
    people: new People({ users, memberships, sessions, invitations, workspaces, portalBaseUrl: deps.portalBaseUrl }),
    audit: new AuditLog({ events: auditEvents, workspaces }),
    authorizer: new Authorizer(deps.lookups),
    portalBaseUrl: deps.portalBaseUrl,
  };
}
