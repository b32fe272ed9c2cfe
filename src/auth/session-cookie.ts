// The session cookie of the portal: `docgen_session=<opaque id>`, HttpOnly (scripts cannot
// read it), SameSite=Lax (not sent on cross-site POSTs), Path=/, and Secure unless the portal
// is served over plain http:// (local development).
export const SESSION_COOKIE = 'docgen_session';

export function sessionCookie(value: string, options: { secure: boolean; maxAgeSeconds: number }): string {
  return [
    `${SESSION_COOKIE}=${value}`,
    'HttpOnly',
    'SameSite=Lax',
    'Path=/',
    `Max-Age=${options.maxAgeSeconds}`,
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}

/** Tells the browser to drop the cookie. */
export function clearedSessionCookie(options: { secure: boolean }): string {
  return sessionCookie('', { ...options, maxAgeSeconds: 0 });
}

/** The session id from a Cookie header, if any. */
export function readSessionCookie(header: string | null | undefined): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      if (value) return value;
    }
  }
  return undefined;
}

/**
 * CSRF check for state-changing calls made with the cookie: the Origin must be the portal's
 * own (DOCGEN_PORTAL_BASE_URL) or the origin the request was addressed to (its Host). A
 * cross-site page sends its own origin, which matches neither.
 */
export function isAllowedOrigin(
  origin: string | null | undefined,
  host: string | null | undefined,
  portalBaseUrl: string,
): boolean {
  if (!origin || origin === 'null') return false;
  let originUrl: URL;
  try {
    originUrl = new URL(origin);
  } catch {
    return false;
  }
  if (originUrl.origin === new URL(portalBaseUrl).origin) return true;
  return !!host && originUrl.host.toLowerCase() === host.toLowerCase();
}
