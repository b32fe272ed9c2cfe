// Applies the operations table (admin-operations.ts) to one call: who is calling (the
// operator or a signed-in member), which workspace the call touches, and whether the member's
// role there holds the right. Refusals never tell a member that another workspace's object
// exists: an object outside their workspaces is "not found", exactly as one that does not exist.
import type { ObjectId } from 'mongodb';
import type { AdminCaller } from '../auth/authentication.ts';
import { DomainError, notFound, unauthorized } from '../domain/errors.ts';
import { parseId, type IdKind } from '../domain/ids.ts';
import { quoteId, requireId } from '../domain/input.ts';
import { policyOf } from './admin-operations.ts';
import { PERMISSIONS, roleAllows, type Permission } from './roles.ts';

/** Objects whose workspace is found by looking them up. */
export type ObjectKind =
  'template' | 'apiKey' | 'webhookEndpoint' | 'delivery' | 'generation' | 'asset' | 'certificate';

/**
 * What a call names that decides its workspace: a workspace id, or the id of an object whose
 * workspace counts. `field` is where the call carried it (for "is required" errors).
 */
export interface Subject {
  kind: 'workspace' | ObjectKind;
  id: unknown;
  field: string;
}

/** The workspace of an object, or null when there is no such object. */
export type WorkspaceLookup = (id: ObjectId) => Promise<{ workspaceId: ObjectId } | null>;

const KINDS: Record<Subject['kind'], { idKind: IdKind; label: string }> = {
  workspace: { idKind: 'workspace', label: 'Workspace' },
  template: { idKind: 'template', label: 'Template' },
  apiKey: { idKind: 'apiKey', label: 'API key' },
  webhookEndpoint: { idKind: 'webhookEndpoint', label: 'Webhook endpoint' },
  delivery: { idKind: 'delivery', label: 'Delivery' },
  generation: { idKind: 'generation', label: 'Generation' },
  asset: { idKind: 'asset', label: 'Asset' },
  certificate: { idKind: 'certificate', label: 'Certificate' },
};

export const forbidden = (message: string) => new DomainError('FORBIDDEN', message);

/**
 * Whether the caller holds a right in a workspace (`ws_…`): the operator always, a member by
 * their role there. For answers that show more to those who may change a thing than to those
 * who may only look (webhook URLs).
 */
export function callerHolds(caller: AdminCaller | undefined, workspaceId: string, permission: Permission): boolean {
  if (caller?.kind === 'operator') return true;
  if (caller?.kind !== 'member') return false;
  const id = parseId('workspace', workspaceId);
  const membership = id ? caller.memberships.find((m) => m.workspaceId.equals(id)) : undefined;
  return membership !== undefined && roleAllows(membership.role, permission);
}

export class Authorizer {
  private readonly lookups: Record<ObjectKind, WorkspaceLookup>;
  constructor(lookups: Record<ObjectKind, WorkspaceLookup>) {
    this.lookups = lookups;
  }

  /**
   * Allows the operation or throws UNAUTHORIZED, FORBIDDEN, NOT_FOUND (or a validation error
   * for a missing id). Returns the workspace the call touches (null: none, or several).
   */
  async authorize(
    caller: AdminCaller | undefined,
    operation: string,
    subject: Subject | undefined,
  ): Promise<{ workspaceId: ObjectId | null }> {
    const policy = policyOf(operation);
    if (policy.access === 'public') return { workspaceId: null };
    if (!caller)
      throw unauthorized(
        'Admin token missing: send "authorization: Bearer <DOCGEN_ADMIN_TOKEN>", or sign in to the portal',
      );
    if (caller.kind === 'operator') {
      // Everything is allowed; the workspace is only wanted for the audit trail.
      return { workspaceId: policy.changes ? await this.workspaceForAudit(subject) : null };
    }
    if (policy.access === 'operator')
      throw forbidden('This call needs the operator token; signed-in members cannot make it');
    if (policy.access === 'signed-in' || policy.scope !== 'workspace') {
      if (policy.access !== 'signed-in' && policy.access !== 'read') {
        // A right that is only ever held per workspace cannot be checked without one.
        throw forbidden('This call needs the operator token');
      }
      return { workspaceId: null };
    }
    const { workspaceId, notFoundError } = await this.locate(subject);
    const membership = workspaceId ? caller.memberships.find((m) => m.workspaceId.equals(workspaceId)) : undefined;
    if (!workspaceId || !membership) throw notFoundError;
    if (!roleAllows(membership.role, policy.access)) {
      throw forbidden(
        `Your role in this workspace (${membership.role}) does not allow this: it needs the right to ${PERMISSIONS[policy.access as Permission].covers}`,
      );
    }
    return { workspaceId };
  }

  private async locate(
    subject: Subject | undefined,
  ): Promise<{ workspaceId: ObjectId | null; notFoundError: DomainError }> {
    if (!subject) return { workspaceId: null, notFoundError: notFound('Workspace') };
    const { idKind, label } = KINDS[subject.kind];
    const id = requireId(idKind, subject.id, subject.field, label);
    const notFoundError = notFound(`${label} ${quoteId(String(subject.id))}`);
    if (subject.kind === 'workspace') return { workspaceId: id, notFoundError };
    const found = await this.lookups[subject.kind](id);
    return { workspaceId: found?.workspaceId ?? null, notFoundError };
  }

  private async workspaceForAudit(subject: Subject | undefined): Promise<ObjectId | null> {
    try {
      return (await this.locate(subject)).workspaceId;
    } catch {
      return null; // a bad id: the handler reports it
    }
  }
}
