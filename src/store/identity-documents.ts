// MongoDB documents of the portal's people (src/identity): users, memberships, sessions,
// invitations and the audit trail. Secrets are never stored: a password is kept as its scrypt
// hash, a session id and an invitation token as their SHA-256. Uniqueness comes from derived
// _ids (one user per normalised email, one membership per user and workspace), so it holds
// on every MongoDB without unique secondary indexes or transactions.
import type { ObjectId } from 'mongodb';

export type MemberRole = 'owner' | 'editor' | 'viewer';

export interface UserDoc {
  /** deterministicObjectId('user', normalisedEmail): one user per email. */
  _id: ObjectId;
  email: string;
  displayName: string;
  /** `scrypt$…` (src/identity/passwords.ts); null until an invitation is accepted, and after a reset. */
  passwordHash: string | null;
  /**
   * The one invitation that may still set the password (the newest issued). Two invitations
   * issued at once both get stored, but only the one this points at can be accepted.
   */
  invitationId: ObjectId | null;
  disabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface MembershipDoc {
  /** deterministicObjectId('membership', userId, workspaceId): one per user and workspace. */
  _id: ObjectId;
  userId: ObjectId;
  workspaceId: ObjectId;
  role: MemberRole;
  createdAt: Date;
  updatedAt: Date;
}

export interface SessionDoc {
  /** Derived from the SHA-256 of the session id (the cookie value), which is never stored. */
  _id: ObjectId;
  /** SHA-256 of the session id, hex; compared in full on every request. */
  idHash: string;
  userId: ObjectId;
  createdAt: Date;
  /** Refreshed at most once a minute; the session ends `idle` after the last refresh. */
  lastSeenAt: Date;
  idleExpiresAt: Date;
  absoluteExpiresAt: Date;
  revokedAt: Date | null;
}

export interface InvitationDoc {
  /** Derived from the SHA-256 of the token, which is never stored. */
  _id: ObjectId;
  tokenHash: string;
  userId: ObjectId;
  /** The workspace the person was invited to (null for a reset). */
  workspaceId: ObjectId | null;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
  /** When real MongoDB may drop the row (TTL), a while after it expired. */
  purgeAt: Date;
}

/**
 * A workspace's offer of membership to a person who already has an account (pending until they
 * accept it signed in, or decline it). No token: only the invited account can accept, so an
 * offer is worthless to anyone else. One per (user, workspace): a newer invitation replaces it.
 */
export interface PendingInvitationDoc {
  /** deterministicObjectId('pending-invitation', userId, workspaceId). */
  _id: ObjectId;
  userId: ObjectId;
  workspaceId: ObjectId;
  role: MemberRole;
  /** `usr_…` of the owner who invited, or `operator`. */
  invitedBy: string;
  createdAt: Date;
  expiresAt: Date;
  /** When real MongoDB may drop the row (TTL): when it expires. */
  purgeAt: Date;
}

export interface AuditEventDoc {
  _id: ObjectId;
  workspaceId: ObjectId | null;
  /** `usr_…` or `operator`. */
  actor: string;
  /** The operation, e.g. `templates.publish` (older events: the RPC, `TemplateService.PublishTemplateVersion`). */
  action: string;
  targetId: string;
  occurredAt: Date;
  detail: string;
  /**
   * What tells the event in words (src/domain/audit-words.ts), as it was at the time: e.g.
   * `{ version: '3', templateName: 'Invoice' }`. Absent on older events.
   */
  facts?: Record<string, string>;
}
