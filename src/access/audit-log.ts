// The audit trail: who (a `usr_…` or `operator`) did what (the operation, e.g.
// `templates.publish`), to which object, in which workspace, when. Written by the admin gate
// (admin-gate.ts) after each successful state-changing admin call.
import { ObjectId } from 'mongodb';
import { formatId } from '../domain/ids.ts';
import { requireWorkspace } from '../domain/input.ts';
import type { AuditEventsRepository } from '../store/audit-events-repository.ts';
import type { Page, PageInput, PageTokens } from '../store/pagination.ts';
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
  private readonly pageTokens: PageTokens;
  constructor(deps: { events: AuditEventsRepository; workspaces: WorkspacesRepository; pageTokens: PageTokens }) {
    this.events = deps.events;
    this.workspaces = deps.workspaces;
    this.pageTokens = deps.pageTokens;
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
  async list(workspaceId: string | undefined, input?: PageInput): Promise<Page<AuditEventView>> {
    const page = this.pageTokens.request(input, { list: 'auditEvents', filters: { workspace: workspaceId } });
    const workspace = workspaceId ? await requireWorkspace(this.workspaces, workspaceId) : undefined;
    const result = await this.events.list(workspace?._id, page);
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
