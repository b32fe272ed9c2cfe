// Who is calling: every credential docgen accepts, and how each is checked, from one place.
//   - API keys, on the public listener: api-key-authenticator.ts (format and hashing: api-keys.ts).
//   - The operator token, on the admin listener: operator-token.ts.
//   - Portal sessions, on the admin listener: portal-session.ts, carried by the cookie of
//     session-cookie.ts.
// What a caller may then do is access control's question (src/access), not this module's.
import { DomainError, unauthorized } from '../domain/errors.ts';
import { isAdminAuthorization } from './operator-token.ts';
import type { SessionAuthenticator, SignedInMember } from './portal-session.ts';
import { isAllowedOrigin, isPortalHost, readSessionCookie } from './session-cookie.ts';

export { ApiKeyAuthenticator, type Principal } from './api-key-authenticator.ts';
export { SessionAuthenticator, type SignedInMember } from './portal-session.ts';

/** The caller of an admin call: the operator (token) or a signed-in member (session). */
export type AdminCaller = { kind: 'operator' } | SignedInMember;

/** The request headers that carry or concern admin credentials. */
export interface AdminCredentials {
  authorization: string | null;
  cookie: string | null;
  origin: string | null;
  /** The address the request was sent to (Host, or :authority in HTTP/2). */
  host: string | null;
}

export interface AdminAuthenticationDeps {
  /** config.adminToken; empty accepts no token. */
  adminToken: string;
  sessions: SessionAuthenticator;
  /** DOCGEN_PORTAL_BASE_URL, or the admin listener's own address: the portal's origin. */
  portalBaseUrl: () => string;
}

export class AdminAuthentication {
  private readonly deps: AdminAuthenticationDeps;
  constructor(deps: AdminAuthenticationDeps) {
    this.deps = deps;
  }

  /**
   * The operator when an Authorization header is sent (UNAUTHORIZED when it is wrong), else the
   * member of the session cookie, else nobody. A state change made with the cookie must come
   * from the portal's origin (CSRF; FORBIDDEN otherwise). An ended session is UNAUTHORIZED
   * unless the call needs no caller (signing in again with a stale cookie works).
   */
  async authenticate(
    credentials: AdminCredentials,
    call: { changesState: boolean; needsCaller: boolean },
  ): Promise<AdminCaller | undefined> {
    if (credentials.authorization) {
      if (!isAdminAuthorization(credentials.authorization, this.deps.adminToken))
        throw unauthorized('Admin token invalid');
      return { kind: 'operator' };
    }
    const portalBaseUrl = this.deps.portalBaseUrl();
    const sessionId = readSessionCookie(credentials.cookie, portalBaseUrl);
    // No credential at all for a call that needs a caller: nothing could be authorized, and the
    // client (a CLI without its token, most likely) is told what is missing (UNAUTHENTICATED).
    if (!sessionId && call.needsCaller) return undefined;
    // Without the operator token this is a browser's call (or one pretending to be): it must
    // be addressed to the portal's host, which a DNS-rebinding page cannot claim.
    if (!isPortalHost(credentials.host, portalBaseUrl)) {
      throw new DomainError(
        'FORBIDDEN',
        `Request refused: it was addressed to ${JSON.stringify(credentials.host ?? '')}, not the portal's host (DOCGEN_PORTAL_BASE_URL ${portalBaseUrl})`,
      );
    }
    // Browsers send Origin on every POST; a state change from a browser must come from the portal.
    if (
      call.changesState &&
      (sessionId || credentials.origin) &&
      !isAllowedOrigin(credentials.origin, credentials.host, portalBaseUrl)
    ) {
      throw new DomainError(
        'FORBIDDEN',
        'Cross-origin request refused: state-changing calls with a session must come from the portal (Origin header)',
      );
    }
    if (!sessionId) return undefined;
    const member = await this.deps.sessions.authenticate(sessionId);
    if (!member && call.needsCaller)
      throw unauthorized('Your session has ended (signed out, expired or disabled); sign in again');
    return member;
  }
}
