// Secrets docgen must read back are stored encrypted: webhook signing secrets
// (docs/interface.md#webhooks) and PDF passwords (src/store/pdf-password-box.ts). AES-256-GCM
// under a key derived from DOCGEN_SECRET_KEY, one derived key per purpose. GCM authenticates,
// so a tampered or foreign ciphertext fails to decrypt instead of yielding a wrong secret.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { ObjectId } from 'mongodb';
import { DomainError } from '../domain/errors.ts';
import { formatId } from '../domain/ids.ts';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** Random bytes behind a new secret: 256 bits, within Standard Webhooks' 24..64 bytes. */
export const WEBHOOK_SECRET_BYTES = 32;

/** The encrypted form, as stored in a MongoDB document (all fields base64). */
export interface SealedSecret {
  v: 1;
  iv: string;
  tag: string;
  data: string;
}

/** What a secret is for: each purpose has its own derived key (HKDF info). */
export type SecretPurpose = 'webhook-secret' | 'pdf-password';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
// DOCGEN_SECRET_KEY also signs page tokens: derive a key used for nothing but this purpose.
const hkdfInfo = (purpose: SecretPurpose) => `docgen/${purpose}/aes-256-gcm/v1`;

/** A new signing secret: `whsec_` + standard base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(WEBHOOK_SECRET_BYTES).toString('base64');
}

/** True for a string of the form generateWebhookSecret() returns (any 24..64-byte key). */
export function isWebhookSecret(value: string): boolean {
  if (typeof value !== 'string' || !value.startsWith(WEBHOOK_SECRET_PREFIX)) return false;
  const b64 = value.slice(WEBHOOK_SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) return false;
  const n = Buffer.from(b64, 'base64').length;
  return n >= 24 && n <= 64;
}

/**
 * The AES-GCM context (authenticated, not stored) a secret of this endpoint is sealed
 * under: the endpoint's public id. Decrypting needs the same value, so a sealed secret
 * copied onto another endpoint's row does not open.
 */
export function webhookSecretContext(endpointId: ObjectId): string {
  return formatId('webhookEndpoint', endpointId);
}

/**
 * Encrypts a secret. `context` (e.g. the endpoint id) is authenticated but not stored:
 * decrypting needs the same value, so a ciphertext copied to another row does not open.
 */
export function sealSecret(
  secret: string,
  key: Buffer,
  context = '',
  purpose: SecretPurpose = 'webhook-secret',
): SealedSecret {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(key, purpose), iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad(context, purpose));
  const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return {
    v: 1,
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
}

/** Encrypts a secret into one compact string: `v1.<iv>.<tag>.<ciphertext>` (base64url). */
export function encryptSecret(
  secret: string,
  key: Buffer,
  context = '',
  purpose: SecretPurpose = 'webhook-secret',
): string {
  const s = sealSecret(secret, key, context, purpose);
  return [VERSION, s.iv, s.tag, s.data].map((part, i) => (i === 0 ? part : toBase64Url(part))).join('.');
}

/**
 * Decrypts either form. Throws DomainError INTERNAL when the value is malformed, was
 * tampered with, or was sealed under another key or context: never returns a wrong secret.
 */
export function decryptSecret(
  sealed: string | SealedSecret,
  key: Buffer,
  context = '',
  purpose: SecretPurpose = 'webhook-secret',
): string {
  const s = typeof sealed === 'string' ? parseCompact(sealed) : sealed;
  if (!s || s.v !== 1 || typeof s.iv !== 'string' || typeof s.tag !== 'string' || typeof s.data !== 'string') {
    throw cannotDecrypt(purpose, 'it is not a sealed secret (v1)');
  }
  const iv = Buffer.from(s.iv, 'base64');
  const tag = Buffer.from(s.tag, 'base64');
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES)
    throw cannotDecrypt(purpose, 'its IV or tag has the wrong length');
  try {
    const decipher = createDecipheriv('aes-256-gcm', deriveKey(key, purpose), iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad(context, purpose));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(Buffer.from(s.data, 'base64')), decipher.final()]).toString('utf8');
  } catch (err) {
    throw cannotDecrypt(purpose, 'authentication failed (wrong DOCGEN_SECRET_KEY, or the record was altered)', err);
  }
}

function deriveKey(key: Buffer, purpose: SecretPurpose): Buffer {
  if (!Buffer.isBuffer(key) || key.length !== 32) {
    throw new DomainError('INTERNAL', 'The secret key must be 32 bytes (DOCGEN_SECRET_KEY)');
  }
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), hkdfInfo(purpose), 32));
}

function aad(context: string, purpose: SecretPurpose): Buffer {
  return Buffer.from(`${hkdfInfo(purpose)}\u0000${context}`, 'utf8');
}

function parseCompact(value: string): SealedSecret | undefined {
  const parts = value.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) return undefined;
  if (!parts.slice(1).every((p) => /^[A-Za-z0-9_-]*$/.test(p))) return undefined;
  const [, iv, tag, data] = parts.map((p) => Buffer.from(p, 'base64url').toString('base64'));
  return { v: 1, iv: iv!, tag: tag!, data: data! };
}

function toBase64Url(b64: string): string {
  return Buffer.from(b64, 'base64').toString('base64url');
}

function cannotDecrypt(purpose: SecretPurpose, why: string, cause?: unknown): DomainError {
  const what = purpose === 'webhook-secret' ? 'A webhook signing secret' : 'A PDF password';
  return new DomainError('INTERNAL', `${what} cannot be decrypted: ${why}`, { cause });
}
