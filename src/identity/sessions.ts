// Signing in and out: opening a portal session (with a password, or by accepting an
// invitation) and ending it. The session is a credential: src/auth/portal-session.ts
// recognises it on later calls, and says how long it lasts.
import type { ObjectId } from 'mongodb';
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS, type SignedInMember } from '../auth/portal-session.ts';
import { hashSecretToken, isWellFormedToken, newSecretToken, tokenDocumentId } from '../auth/secret-tokens.ts';
import { DomainError, unauthorized } from '../domain/errors.ts';
import type { SessionDoc } from '../store/identity-documents.ts';
import type { InvitationsRepository } from '../store/invitations-repository.ts';
import type { MembershipsRepository } from '../store/memberships-repository.ts';
import type { SessionsRepository } from '../store/sessions-repository.ts';
import type { UsersRepository } from '../store/users-repository.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';
import { membershipViews, normaliseEmail, toUserView, type MembershipView, type UserView } from './identity-views.ts';
import {
  checkNewPassword,
  hashPassword,
  MAX_PASSWORD_LENGTH,
  needsRehash,
  verifyAgainstDummy,
  verifyPassword,
} from './passwords.ts';
import type { SignInLimiter } from './sign-in-limiter.ts';

export interface SignedIn {
  /** The new session id: goes into the cookie, never stored. */
  sessionId: string;
  maxAgeSeconds: number;
  user: UserView;
  memberships: MembershipView[];
}

export interface SessionDeps {
  users: UsersRepository;
  memberships: MembershipsRepository;
  sessions: SessionsRepository;
  invitations: InvitationsRepository;
  workspaces: WorkspacesRepository;
  limiter: SignInLimiter;
}

export const invalidInvitation = () =>
  unauthorized('This invitation link is invalid, expired or already used; ask for a new one');
const wrongCredentials = () => unauthorized('Email or password is wrong');

export class SessionManager {
  private readonly deps: SessionDeps;
  constructor(deps: SessionDeps) {
    this.deps = deps;
  }

  /** Wrong email, wrong password, no password yet or disabled: all answer the same. */
  async signIn(emailInput: unknown, passwordInput: unknown, clientAddress: string): Promise<SignedIn> {
    const email = normaliseEmail(emailInput);
    const password = typeof passwordInput === 'string' ? passwordInput : '';
    const attempt = await this.deps.limiter.begin(email, clientAddress);
    if (email === '' || password === '' || password.length > MAX_PASSWORD_LENGTH) {
      attempt.failed();
      throw wrongCredentials();
    }
    const user = await this.deps.users.getByEmail(email);
    const ok =
      user && !user.disabled && user.passwordHash
        ? await verifyPassword(password, user.passwordHash)
        : await verifyAgainstDummy(password);
    if (!ok || !user) {
      attempt.failed();
      throw wrongCredentials();
    }
    await attempt.succeeded();
    // A hash made with older, weaker parameters is replaced while the password is at hand.
    if (user.passwordHash && needsRehash(user.passwordHash))
      await this.deps.users.replacePasswordHash(user._id, user.passwordHash, await hashPassword(password));
    return this.open(user._id);
  }

  async signOut(sessionKey: ObjectId): Promise<void> {
    await this.deps.sessions.revoke(sessionKey);
  }

  async describe(member: SignedInMember): Promise<{ user: UserView; memberships: MembershipView[] }> {
    return {
      user: toUserView(member.user),
      memberships: await membershipViews(this.deps.workspaces, member.memberships),
    };
  }

  /**
   * The address an invitation link is for, for the page it opens. Only a link acceptInvitation
   * would take answers; any other token gets the same error as accepting it, so the answer says
   * nothing to whoever does not hold a working link (docs/portal.md#invitations-threat-model).
   */
  async describeInvitation(tokenInput: unknown): Promise<{ email: string; expiresAt: Date }> {
    const { invitation, user } = await this.openInvitation(tokenInput);
    return { email: user.email, expiresAt: invitation.expiresAt };
  }

  /** The invitation of a token and its person, if the link still works; invalidInvitation otherwise. */
  private async openInvitation(tokenInput: unknown) {
    if (!isWellFormedToken(tokenInput)) throw invalidInvitation();
    const tokenHash = hashSecretToken(tokenInput);
    const id = tokenDocumentId('invitation', tokenHash);
    const invitation = await this.deps.invitations.get(id);
    const now = new Date();
    if (
      !invitation ||
      invitation.tokenHash !== tokenHash ||
      invitation.usedAt ||
      invitation.revokedAt ||
      invitation.expiresAt <= now
    )
      throw invalidInvitation();
    const user = await this.deps.users.get(invitation.userId);
    if (!user || user.disabled || !user.invitationId?.equals(id)) throw invalidInvitation();
    return { id, invitation, user };
  }

  /** Sets the password from a single-use invitation and signs the person in. */
  async acceptInvitation(tokenInput: unknown, passwordInput: unknown, displayNameInput: unknown): Promise<SignedIn> {
    const { id, user } = await this.openInvitation(tokenInput);
    // Checked before the token is used up, so a refused password can be corrected.
    const password = checkNewPassword(passwordInput, user.email);
    const displayName = typeof displayNameInput === 'string' ? displayNameInput.trim().slice(0, 200) : '';
    const passwordHash = await hashPassword(password);
    if (!(await this.deps.invitations.consume(id, new Date()))) throw invalidInvitation();
    if (!(await this.deps.users.setPasswordByInvitation(user._id, id, passwordHash, displayName || undefined)))
      throw invalidInvitation();
    return this.open(user._id);
  }

  private async open(userId: ObjectId): Promise<SignedIn> {
    const sessionId = newSecretToken();
    const idHash = hashSecretToken(sessionId);
    const now = new Date();
    const doc: SessionDoc = {
      _id: tokenDocumentId('session', idHash),
      idHash,
      userId,
      createdAt: now,
      lastSeenAt: now,
      idleExpiresAt: new Date(now.getTime() + Math.min(SESSION_IDLE_MS, SESSION_ABSOLUTE_MS)),
      absoluteExpiresAt: new Date(now.getTime() + SESSION_ABSOLUTE_MS),
      revokedAt: null,
    };
    await this.deps.sessions.insert(doc);
    const user = await this.deps.users.get(userId);
    if (!user) throw new DomainError('INTERNAL', 'user vanished while signing in');
    const memberships = await this.deps.memberships.listByUser(userId);
    return {
      sessionId,
      maxAgeSeconds: Math.floor(SESSION_ABSOLUTE_MS / 1000),
      user: toUserView(user),
      memberships: await membershipViews(this.deps.workspaces, memberships),
    };
  }
}
