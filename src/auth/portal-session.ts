// Portal sessions as a credential. The `docgen_session` cookie (session-cookie.ts) carries a
// random session id (secret-tokens.ts); MongoDB holds only its SHA-256, so a database dump
// cannot be replayed. Signing in and out opens and ends sessions (src/identity/sessions.ts);
// this recognises one on every admin call. No cache: every call re-reads the session, the
// user and the memberships, so a sign-out, a disable or a removed membership takes effect on
// the very next call.
import type { ObjectId } from 'mongodb';
import type { MembershipDoc, UserDoc } from '../store/identity-documents.ts';
import type { MembershipsRepository } from '../store/memberships-repository.ts';
import type { SessionsRepository } from '../store/sessions-repository.ts';
import type { UsersRepository } from '../store/users-repository.ts';
import { hashSecretToken, isWellFormedToken, tokenDocumentId } from './secret-tokens.ts';

/** A session ends after this long without use… */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** …or this long after sign-in, whichever comes first. */
export const SESSION_ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000;
/** The idle expiry moves forward at most this often (one write a minute, not one per call). */
const TOUCH_EVERY_MS = 60_000;

/** A person signed in to the portal: the user, their session and their memberships now. */
export interface SignedInMember {
  kind: 'member';
  user: UserDoc;
  sessionKey: ObjectId;
  memberships: MembershipDoc[];
}

export interface SessionAuthenticatorDeps {
  sessions: SessionsRepository;
  users: UsersRepository;
  memberships: MembershipsRepository;
}

export class SessionAuthenticator {
  private readonly deps: SessionAuthenticatorDeps;
  constructor(deps: SessionAuthenticatorDeps) {
    this.deps = deps;
  }

  /** The member behind a session id, or undefined when it is unknown, expired, revoked or disabled. */
  async authenticate(sessionId: string): Promise<SignedInMember | undefined> {
    if (!isWellFormedToken(sessionId)) return undefined;
    const idHash = hashSecretToken(sessionId);
    const session = await this.deps.sessions.get(tokenDocumentId('session', idHash));
    const now = new Date();
    if (
      !session ||
      session.idHash !== idHash ||
      session.revokedAt ||
      session.idleExpiresAt <= now ||
      session.absoluteExpiresAt <= now
    )
      return undefined;
    const user = await this.deps.users.get(session.userId);
    if (!user || user.disabled) return undefined;
    const memberships = await this.deps.memberships.listByUser(user._id);
    if (now.getTime() - session.lastSeenAt.getTime() >= TOUCH_EVERY_MS) {
      const idle = new Date(Math.min(now.getTime() + SESSION_IDLE_MS, session.absoluteExpiresAt.getTime()));
      await this.deps.sessions.touch(session._id, now, idle);
    }
    return { kind: 'member', user, sessionKey: session._id, memberships };
  }
}
