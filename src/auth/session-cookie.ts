// The session cookie of the portal and the checks on browser calls to the admin listener.
// Over https the cookie is `__Host-docgen_session`: Secure, Path=/, no Domain, so the browser
// accepts it only from this very host over https (a sibling subdomain or a plain-http page
// cannot plant or overwrite it). Over plain http:// (local development) it is
// `docgen_session` without Secure. Always HttpOnly (scripts cannot read it) and SameSite=Lax
// (not sent on cross-site POSTs).
export const SESSION_COOKIE = 'docgen_session';
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;

/** The portal is served over https (anything but an http:// base URL counts as such). */
export function isSecurePortal(portalBaseUrl: string): boolean {
  return !portalBaseUrl.startsWith('http://');
}

/** `__Host-docgen_session` over https, `docgen_session` over plain http. */
export function sessionCookieName(portalBaseUrl: string): string {
  return isSecurePortal(portalBaseUrl) ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}

export function sessionCookie(value: string, options: { portalBaseUrl: string; maxAgeSeconds: number }): string {
  const secure = isSecurePortal(options.portalBaseUrl);
  return [
    `${sessionCookieName(options.portalBaseUrl)}=${value}`,
    'HttpOnly',
    'SameSite=Lax',
    'Path=/',
    `Max-Age=${options.maxAgeSeconds}`,
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

/** Tells the browser to drop the cookie. */
export function clearedSessionCookie(options: { portalBaseUrl: string }): string {
  return sessionCookie('', { ...options, maxAgeSeconds: 0 });
}

/** The session id from a Cookie header: only the cookie of the portal's scheme counts. */
export function readSessionCookie(header: string | null | undefined, portalBaseUrl: string): string | undefined {
  const name = sessionCookieName(portalBaseUrl);
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      if (value) return value;
    }
  }
  return undefined;
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * The `host[:port]` values a browser may use for the portal: the base URL's, and when that is
 * a loopback address, the other loopback names on the same port (a developer may open
 * http://localhost:8081 as well as http://127.0.0.1:8081).
 */
export function portalHosts(portalBaseUrl: string): string[] {
  const url = new URL(portalBaseUrl);
  const hosts = [url.host.toLowerCase()];
  if (LOOPBACK_NAMES.includes(url.hostname.toLowerCase()))
    for (const name of LOOPBACK_NAMES) hosts.push(url.port ? `${name}:${url.port}` : name);
  return [...new Set(hosts)];
}

/**
 * DNS rebinding: a page of another site whose name the attacker re-points at the admin
 * listener sends its own name as Host. Browser calls (a session cookie, signing in, accepting
 * an invitation) are served only when Host names the portal.
 */
export function isPortalHost(host: string | null | undefined, portalBaseUrl: string): boolean {
  return !!host && portalHosts(portalBaseUrl).includes(host.toLowerCase());
}

/**
 * CSRF check for state-changing calls made with the cookie: the Origin must be the portal's
 * (DOCGEN_PORTAL_BASE_URL, or one of its loopback aliases, as the request's own Host). A
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
  const originHost = originUrl.host.toLowerCase();
  return !!host && originHost === host.toLowerCase() && isPortalHost(originHost, portalBaseUrl);
}
