// The one gate of the admin plane. Every admin call passes here, whatever its transport: the
// gate finds the caller (src/auth: the operator token, or a session cookie with the CSRF
// check), applies the operations table (admin-operations.ts) through the Authorizer, and,
// once the call has succeeded, records a state change in the audit trail.
import type { ObjectId } from 'mongodb';
import type { AdminAuthentication, AdminCaller, AdminCredentials } from '../auth/authentication.ts';
import { formatId, parseId } from '../domain/ids.ts';
import { policyOf, type OperationPolicy } from './admin-operations.ts';
import type { AuditLog } from './audit-log.ts';
import type { Authorizer, Subject } from './authorizer.ts';

export interface AdminCall {
  /** The domain operation (`templates.publish`); a name without a line is operator-only. */
  operation: string;
  /** What the call names that decides its workspace. */
  subject: Subject | undefined;
  credentials: AdminCredentials;
}

/** A call let in: who makes it, and the workspace it touches (null: none, or several). */
export interface Admission {
  operation: string;
  policy: OperationPolicy;
  caller: AdminCaller | undefined;
  workspaceId: ObjectId | null;
}

export interface AdminGateDeps {
  authentication: AdminAuthentication;
  authorizer: Authorizer;
  audit: AuditLog;
  onAuditError?: ((err: unknown) => void) | undefined;
}

export class AdminGate {
  private readonly deps: AdminGateDeps;
  constructor(deps: AdminGateDeps) {
    this.deps = deps;
  }

  /** Lets the call in, or throws UNAUTHORIZED, FORBIDDEN, NOT_FOUND or a validation error. */
  async admit(call: AdminCall): Promise<Admission> {
    const policy = policyOf(call.operation);
    const caller = await this.deps.authentication.authenticate(call.credentials, {
      changesState: policy.changes,
      needsCaller: policy.access !== 'public',
    });
    const { workspaceId } = await this.deps.authorizer.authorize(caller, call.operation, call.subject);
    return { operation: call.operation, policy, caller, workspaceId };
  }

  /**
   * After the call succeeded: records a state change (reads are not recorded). `targetId` is
   * the id of the object changed; undefined means the caller themself (signing out). `facts`
   * tell the event in words later (src/domain/audit-words.ts).
   */
  async recordSuccess(
    admission: Admission,
    change: { targetId?: string | undefined; detail: string; facts?: Record<string, string> | undefined },
  ): Promise<void> {
    if (!admission.policy.changes) return;
    const { caller } = admission;
    const callerId =
      caller?.kind === 'member' ? formatId('user', caller.user._id) : caller?.kind === 'operator' ? 'operator' : '';
    const target = change.targetId ?? callerId;
    // Signing in and accepting an invitation have no caller yet: the person who signed in acted.
    const actor = callerId || (target.startsWith('usr_') ? target : 'anonymous');
    const workspaceId =
      admission.workspaceId ?? (target.startsWith('ws_') ? (parseId('workspace', target) ?? null) : null);
    try {
      await this.deps.audit.record({
        workspaceId,
        actor,
        action: admission.operation,
        targetId: target,
        detail: change.detail,
        facts: change.facts,
      });
    } catch (err) {
      // The change is made; failing the call now would invite a retry that repeats it.
      this.deps.onAuditError?.(err);
    }
  }
}
