// The operator token: the operator's credential on the admin listener,
// `authorization: Bearer <DOCGEN_ADMIN_TOKEN>`.
// Compared as SHA-256 digests with timingSafeEqual, so neither the content nor the length of
// the token leaks through response timing.
import { createHash, timingSafeEqual } from 'node:crypto';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Checks an Authorization header value against the admin token; an empty token accepts nothing. */
export function isAdminAuthorization(header: string | null | undefined, adminToken: string): boolean {
  const match = BEARER.exec(header ?? '');
  const given = digest(match?.[1] ?? '');
  const expected = digest(adminToken);
  // Always compare, even when the header is missing, so every refusal takes the same path.
  const equal = timingSafeEqual(given, expected);
  return equal && match !== null && adminToken !== '';
}
