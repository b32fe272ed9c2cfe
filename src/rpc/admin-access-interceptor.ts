// The admin services' access control at the Connect edge: the call's headers and RPC go to the
// admin gate (src/access/admin-gate.ts) as credentials and a domain operation; what the gate
// decides comes back as the caller in the handler context, or as a Connect error. Also the
// client address of each request, for the sign-in limits.
import { createContextKey, createContextValues, type ContextValues, type Interceptor } from '@connectrpc/connect';
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { AdminGate } from '../access/admin-gate.ts';
import type { AdminCaller } from '../auth/authentication.ts';
import { rpcBinding } from './admin-rpc-map.ts';
import { toConnectError } from './connect-errors.ts';

/** The authenticated caller of the current admin call (set by the access interceptor). */
export const callerKey = createContextKey<AdminCaller | undefined>(undefined, { description: 'docgen admin caller' });
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

/**
 * The admin services' interceptor: maps the RPC to its domain operation (admin-rpc-map.ts),
 * lets the gate admit the call, hands the caller to the handler (`callerKey`), and after a
 * success lets the gate record the change. Errors leave as Connect errors.
 */
export function adminAccessInterceptor(
  gate: AdminGate,
  onInternal?: ((cause: unknown) => void) | undefined,
): Interceptor {
  return (next) => async (req) => {
    const rpc = `${req.service.typeName}/${req.method.name}`;
    const binding = rpcBinding(rpc);
    const request = req.message as unknown as Record<string, unknown>;
    try {
      const admission = await gate.admit({
        // An RPC without a line keeps its own name: the gate treats it as operator-only.
        operation: binding?.operation ?? rpc,
        subject: binding?.subject?.(request),
        credentials: {
          authorization: req.header.get('authorization'),
          cookie: req.header.get('cookie'),
          origin: req.header.get('origin'),
          // The address the request was sent to: the Host header, or HTTP/2's :authority, which
          // connect-node puts into the request URL (pseudo-headers are not Headers entries).
          host: req.header.get('host') ?? new URL(req.url).host,
        },
      });
      req.contextValues.set(callerKey, admission.caller);
      const res = await next(req);
      if (!res.stream) {
        const target = binding?.target;
        const response = res.message as unknown as Record<string, unknown>;
        await gate.recordSuccess(admission, {
          targetId: target === 'caller' ? undefined : (target?.(request, response) ?? ''),
          detail: binding?.detail?.(request, response) ?? '',
          facts: binding?.facts?.(request, response),
        });
      }
      return res;
    } catch (err) {
      throw toConnectError(err, onInternal);
    }
  };
}
