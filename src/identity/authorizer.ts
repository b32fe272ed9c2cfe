// Applies the admin policy (admin-policy.ts) to one call: who is calling (the operator or a
// signed-in member), which workspace the call touches, and whether the member's role there
// holds the right. Refusals never tell a member that another workspace's object exists: an
// object outside their workspaces is "not found", exactly as one that does not exist.
import type { ObjectId } from 'mongodb';
import { quoteId, requireId } from '../admin/admin-input.ts';
import { DomainError, notFound, unauthorized } from '../domain/errors.ts';
import type { IdKind } from '../domain/ids.ts';
import type { MembershipDoc, UserDoc } from '../store/identity-documents.ts';
import { policyFor, type ObjectKind, type RpcPolicy } from './admin-policy.ts';
import { PERMISSIONS, roleAllows, type Permission } from './roles.ts';

export type Principal =
  { kind: 'operator' } | { kind: 'member'; user: UserDoc; sessionKey: ObjectId; memberships: MembershipDoc[] };

/** The workspace of an object, or null when there is no such object. */
export type WorkspaceLookup = (id: ObjectId) => Promise<{ workspaceId: ObjectId } | null>;

const OBJECTS: Record<ObjectKind, { idKind: IdKind; label: string }> = {
  template: { idKind: 'template', label: 'Template' },
  apiKey: { idKind: 'apiKey', label: 'API key' },
  webhookEndpoint: { idKind: 'webhookEndpoint', label: 'Webhook endpoint' },
  delivery: { idKind: 'delivery', label: 'Delivery' },
  generation: { idKind: 'generation', label: 'Generation' },
  asset: { idKind: 'asset', label: 'Asset' },
};

export interface Authorization {
  policy: RpcPolicy;
  /** The workspace the call touches (null: none, or several). */
  workspaceId: ObjectId | null;
}

export const forbidden = (message: string) => new DomainError('FORBIDDEN', message);

export class Authorizer {
  private readonly lookups: Record<ObjectKind, WorkspaceLookup>;
  constructor(lookups: Record<ObjectKind, WorkspaceLookup>) {
    this.lookups = lookups;
  }

  /** Allows the call or throws UNAUTHORIZED, FORBIDDEN, NOT_FOUND (or a validation error for a missing id). */
  async authorize(
    principal: Principal | undefined,
    rpc: string,
    request: Record<string, unknown>,
  ): Promise<Authorization> {
    const policy = policyFor(rpc);
    if (policy.access === 'public') return { policy, workspaceId: null };
    if (!principal)
      throw unauthorized(
        'Admin token missing: send "authorization: Bearer <DOCGEN_ADMIN_TOKEN>", or sign in to the portal',
      );
    if (principal.kind === 'operator') {
      // Everything is allowed; the workspace is only wanted for the audit trail.
      return { policy, workspaceId: policy.changes ? await this.workspaceForAudit(policy, request) : null };
    }
    if (policy.access === 'operator')
      throw forbidden('This call needs the operator token; signed-in members cannot make it');
    if (policy.access === 'signed-in' || policy.workspace.from === 'none' || policy.workspace.from === 'memberships') {
      if (policy.access !== 'signed-in' && policy.access !== 'read') {
        // A right that is only ever held per workspace cannot be checked without one.
        throw forbidden('This call needs the operator token');
      }
      return { policy, workspaceId: null };
    }
    const { workspaceId, notFoundError } = await this.locate(policy.workspace, request);
    const membership = workspaceId ? principal.memberships.find((m) => m.workspaceId.equals(workspaceId)) : undefined;
    if (!workspaceId || !membership) throw notFoundError;
    if (!roleAllows(membership.role, policy.access)) {
      throw forbidden(
        `Your role in this workspace (${membership.role}) does not allow this: it needs the right to ${PERMISSIONS[policy.access as Permission].covers}`,
      );
    }
    return { policy, workspaceId };
  }

  private async locate(
    source: RpcPolicy['workspace'],
    request: Record<string, unknown>,
  ): Promise<{ workspaceId: ObjectId | null; notFoundError: DomainError }> {
    if (source.from === 'request') {
      const value = request[source.field];
      const id = requireId('workspace', value, source.field, 'Workspace');
      return { workspaceId: id, notFoundError: notFound(`Workspace ${quoteId(String(value))}`) };
    }
    if (source.from === 'object') {
      const { idKind, label } = OBJECTS[source.kind];
      const value = request[source.field];
      const id = requireId(idKind, value, source.field, label);
      const found = await this.lookups[source.kind](id);
      return { workspaceId: found?.workspaceId ?? null, notFoundError: notFound(`${label} ${quoteId(String(value))}`) };
    }
    return { workspaceId: null, notFoundError: notFound('Workspace') };
  }

  private async workspaceForAudit(policy: RpcPolicy, request: Record<string, unknown>): Promise<ObjectId | null> {
    try {
      return (await this.locate(policy.workspace, request)).workspaceId;
    } catch {
      return null; // a bad id: the handler reports it
    }
  }
}
