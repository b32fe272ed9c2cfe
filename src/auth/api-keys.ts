// API keys (docs/interface.md#api-keys): `svc_live_` + 40 base62 characters (~238 bits). Only the SHA-256
// hash and a short display prefix are stored; the key is shown once and never logged.
import { createHash, randomInt } from 'node:crypto';

export const API_KEY_PREFIX = 'svc_live_';
export const SCOPES = ['generations:trigger', 'generations:read'] as const;
export type Scope = (typeof SCOPES)[number];

/** What a well-formed key looks like (docs/interface.md#api-keys); anything else is UNAUTHORIZED. */
export const API_KEY_PATTERN = /^svc_live_[A-Za-z0-9]{20,128}$/;

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < 40; i++) body += BASE62[randomInt(BASE62.length)];
  return API_KEY_PREFIX + body;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Enough to recognise a key in a list, far too little to guess it. */
export function displayPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + 4);
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
