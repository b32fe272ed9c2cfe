// The one gate of the admin API. Every admin call passes here: it finds the caller (the
// operator token, or a session cookie), checks a state-changing cookie call's Origin (CSRF),
// applies the policy table (src/identity/admin-policy.ts) through the Authorizer, hands the
// caller to the handler, and records the audit event once the call succeeded.
import { createContextKey, createContextValues, type ContextValues, type Interceptor } from '@connectrpc/connect';
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { ObjectId } from 'mongodb';
import { DomainError, unauthorized } from '../domain/errors.ts';
import { formatId, parseId } from '../domain/ids.ts';
import { policyFor, type RpcPolicy } from '../identity/admin-policy.ts';
import type { Principal } from '../identity/authorizer.ts';
import type { Identity } from '../identity/identity.ts';
import { isAllowedOrigin, readSessionCookie } from '../identity/session-cookie.ts';
import { isAdminAuthorization } from './admin-auth.ts';
import { toConnectError } from './connect-errors.ts';

/** The authenticated caller of the current admin call (set by the access interceptor). */
export const callerKey = createContextKey<Principal | undefined>(undefined, { description: 'docgen admin caller' });
/** The peer address of the connection (for sign-in rate limits). */
export const clientAddressKey = createContextKey<string>('unknown', { description: 'docgen client address' });

/**
 * connectNodeAdapter's `contextValues`: remembers the client address of each request: the TCP
 * peer, or, behind `trustedProxyHops` proxies that each append the address they saw to
 * X-Forwarded-For, the entry that many hops from the right (entries further left are the
 * client's own claims and prove nothing).
 */
export function adminContextValues(
  trustedProxyHops: number,
): (req: IncomingMessage | Http2ServerRequest) => ContextValues {
  return (req) => {
    const values = createContextValues();
    values.set(
      clientAddressKey,
      clientAddress(req.socket?.remoteAddress, req.headers['x-forwarded-for'], trustedProxyHops),
    );
    return values;
  };
}

export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trustedProxyHops: number,
): string {
  const forwarded = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : (forwardedFor ?? ''))
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  const chain = [...forwarded, peer ?? 'unknown'];
  return chain[Math.max(0, chain.length - 1 - trustedProxyHops)]!;
}

export interface AdminAccessDeps {
  /** config.adminToken; empty accepts no token. */
  adminToken: string;
  identity: Identity;
  onAuditError?: ((err: unknown) => void) | undefined;
  /** Told about unexpected errors while authenticating (answered as INTERNAL/UNAVAILABLE). */
  onInternal?: ((cause: unknown) => void) | undefined;
}

export function adminAccessInterceptor(deps: AdminAccessDeps): Interceptor {
  return (next) => async (req) => {
    const rpc = `${req.service.typeName}/${req.method.name}`;
    const policy = policyFor(rpc);
    const authorization = req.header.get('authorization');
    const sessionId = authorization ? undefined : readSessionCookie(req.header.get('cookie'));
    const origin = req.header.get('origin');
    let caller: Principal | undefined;
    try {
      if (authorization) {
        if (!isAdminAuthorization(authorization, deps.adminToken)) throw unauthorized('Admin token invalid');
        caller = { kind: 'operator' };
      } else {
        // Browsers send Origin on every POST; a state change from a browser must come from the portal.
        if (
          policy.changes &&
          (sessionId || origin) &&
          !isAllowedOrigin(
            origin,
            req.header.get('host') ?? req.header.get(':authority'),
            deps.identity.portalBaseUrl(),
          )
        ) {
          throw new DomainError(
            'FORBIDDEN',
            'Cross-origin request refused: state-changing calls with a session must come from the portal (Origin header)',
          );
        }
        if (sessionId) {
          caller = await deps.identity.sessions.authenticate(sessionId);
          if (!caller && policy.access !== 'public')
            throw unauthorized('Your session has ended (signed out, expired or disabled); sign in again');
        }
      }
      const message = req.message as unknown as Record<string, unknown>;
      const { workspaceId } = await deps.identity.authorizer.authorize(caller, rpc, message);
      req.contextValues.set(callerKey, caller);
      const res = await next(req);
      if (policy.changes && !res.stream) {
        await recordAudit(
          deps,
          policy,
          rpc,
          caller,
          message,
          res.message as unknown as Record<string, unknown>,
          workspaceId,
        );
      }
      return res;
    } catch (err) {
      throw toConnectError(err, deps.onInternal);
    }
  };
}

async function recordAudit(
  deps: AdminAccessDeps,
  policy: RpcPolicy,
  rpc: string,
  caller: Principal | undefined,
  request: Record<string, unknown>,
  response: Record<string, unknown>,
  workspace: ObjectId | null,
): Promise<void> {
  const callerId =
    caller?.kind === 'member' ? formatId('user', caller.user._id) : caller?.kind === 'operator' ? 'operator' : '';
  const target = policy.target === 'caller' ? callerId : pick(policy.target ?? '', request, response);
  // Sign-in and accepting an invitation have no caller yet: the person who signed in acted.
  const actor = callerId || (target.startsWith('usr_') ? target : 'anonymous');
  const workspaceId = workspace ?? (target.startsWith('ws_') ? (parseId('workspace', target) ?? null) : null);
  try {
    await deps.identity.audit.record({
      workspaceId,
      actor,
      action: rpc.replace(/^docgen\.admin\.v1\./, '').replace('/', '.'),
      targetId: target,
      detail: policy.detail?.(request) ?? '',
    });
  } catch (err) {
    // The change is made; failing the call now would invite a retry that repeats it.
    deps.onAuditError?.(err);
  }
}

/** `request.id`, `response.template.id`: a string field of the request or the response. */
function pick(path: string, request: Record<string, unknown>, response: Record<string, unknown>): string {
  const [root, ...rest] = path.split('.');
  let value: unknown = root === 'request' ? request : root === 'response' ? response : undefined;
  for (const key of rest)
    value = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return typeof value === 'string' ? value : '';
}
