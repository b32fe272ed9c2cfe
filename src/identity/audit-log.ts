// The audit trail: who (a `usr_…` or `operator`) changed what (the RPC), on which object,
// in which workspace, when. Written after each successful state-changing admin call.
import { ObjectId } from 'mongodb';
import { checkPage, requireWorkspace, type PageInput, type PageOf } from '../admin/admin-input.ts';
import { formatId } from '../domain/ids.ts';
import type { AuditEventsRepository } from '../store/audit-events-repository.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';

export interface AuditEventView {
  id: string;
  workspaceId: string;
  actor: string;
  action: string;
  targetId: string;
  occurredAt: Date;
  detail: string;
}

export interface AuditRecord {
  workspaceId: ObjectId | null;
  actor: string;
  action: string;
  targetId: string;
  detail: string;
}

export class AuditLog {
  private readonly events: AuditEventsRepository;
  private readonly workspaces: WorkspacesRepository;
  constructor(deps: { events: AuditEventsRepository; workspaces: WorkspacesRepository }) {
    this.events = deps.events;
    this.workspaces = deps.workspaces;
  }

  async record(event: AuditRecord): Promise<void> {
    await this.events.insert({
      _id: new ObjectId(),
      ...event,
      detail: event.detail.slice(0, 300),
      occurredAt: new Date(),
    });
  }

  /** Newest first; every event when no workspace is given (operator only, by policy). */
  async list(workspaceId: string | undefined, page?: PageInput): Promise<PageOf<AuditEventView>> {
    const { pageSize, pageToken } = checkPage(page);
    const workspace = workspaceId ? await requireWorkspace(this.workspaces, workspaceId) : undefined;
    const result = await this.events.list(workspace?._id, pageSize, pageToken);
    return {
      items: result.items.map((e) => ({
        id: formatId('auditEvent', e._id),
        workspaceId: e.workspaceId ? formatId('workspace', e.workspaceId) : '',
        actor: e.actor,
        action: e.action,
        targetId: e.targetId,
        occurredAt: e.occurredAt,
        detail: e.detail,
      })),
      nextPageToken: result.nextPageToken,
    };
  }
}
