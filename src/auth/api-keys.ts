// API keys (docs/interface.md#api-keys): `svc_live_` or `svc_test_` + 40 base62 characters (~238 bits).
// Only the SHA-256 hash and a short display prefix are stored; the key is shown once and never logged.
import { createHash, randomInt } from 'node:crypto';

/**
 * A key's mode (docs/interface.md#test-mode): a `test` key's generations are stamped "TEST",
 * seen only by test keys, erased after a day and kept out of live statistics.
 */
export const API_KEY_MODES = ['live', 'test'] as const;
export type ApiKeyMode = (typeof API_KEY_MODES)[number];

/** The prefix that shows a key's mode. */
export const API_KEY_PREFIXES: Readonly<Record<ApiKeyMode, string>> = { live: 'svc_live_', test: 'svc_test_' };
/** Both prefixes have this length. */
const PREFIX_LENGTH = 'svc_live_'.length;
export const SCOPES = ['generations:trigger', 'generations:read'] as const;
export type Scope = (typeof SCOPES)[number];

/** What a well-formed key looks like (docs/interface.md#api-keys); anything else is UNAUTHORIZED. */
export const API_KEY_PATTERN = /^svc_(?:live|test)_[A-Za-z0-9]{20,128}$/;

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function generateApiKey(mode: ApiKeyMode = 'live'): string {
  let body = '';
  for (let i = 0; i < 40; i++) body += BASE62[randomInt(BASE62.length)];
  return API_KEY_PREFIXES[mode] + body;
}

export function isApiKeyMode(value: string): value is ApiKeyMode {
  return (API_KEY_MODES as readonly string[]).includes(value);
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Enough to recognise a key in a list, far too little to guess it. */
export function displayPrefix(key: string): string {
  return key.slice(0, PREFIX_LENGTH + 4);
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
