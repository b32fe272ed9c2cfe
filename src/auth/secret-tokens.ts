// Random bearer secrets of the portal (session ids; invitation tokens, issued by src/identity).
// They are 256-bit random strings, so a single SHA-256 is a safe way to store them (no salt or
// slow hash needed: there is nothing to guess); the document _id is derived from that hash.
import { createHash, randomBytes } from 'node:crypto';
import type { ObjectId } from 'mongodb';
import { deterministicObjectId } from '../domain/ids.ts';

/** 32 random bytes, base64url (43 characters). */
export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashSecretToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The _id of the document that stores this token's hash (`kind`: 'session' or 'invitation'). */
export function tokenDocumentId(kind: string, tokenHash: string): ObjectId {
  return deterministicObjectId(kind, tokenHash);
}

/** A plausible token: bounded, base64url; anything else cannot have been issued by docgen. */
export function isWellFormedToken(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value);
}
