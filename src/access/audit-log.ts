// The audit trail: who (a `usr_…` or `operator`) did what (the operation, e.g.
// `templates.publish`), to which object, in which workspace, when, with the facts that tell it
// in words later (the version, the template's name at the time). Written by the admin gate
// (admin-gate.ts) after each successful state-changing admin call; read back with the people's
// names and emails and each event in words (src/domain/audit-words.ts), filtered by person,
// action and time on the server (each filter an index range: schema step 8).
import { ObjectId } from 'mongodb';
import {
  auditActionOf,
  auditEventInWords,
  auditTargetKind,
  isAuditAction,
  type AuditTargetKind,
} from '../domain/audit-words.ts';
import { validationError, type FieldIssue } from '../domain/errors.ts';
import { formatId, ID_PREFIXES, parseId, type IdKind } from '../domain/ids.ts';
import { requireWorkspace } from '../domain/input.ts';
import type { AuditEventsRepository } from '../store/audit-events-repository.ts';
import type { AuditEventDoc } from '../store/identity-documents.ts';
import type { Page, PageInput, PageTokens } from '../store/pagination.ts';
import type { UsersRepository } from '../store/users-repository.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';

export interface AuditEventView {
  id: string;
  workspaceId: string;
  actor: string;
  /** The operation (older events' RPC names are told as the operation they were). */
  action: string;
  targetId: string;
  occurredAt: Date;
  detail: string;
  actorEmail: string;
  actorDisplayName: string;
  targetKind: AuditTargetKind | '';
  targetName: string;
  facts: Record<string, string>;
  /** The action in words, without the actor. */
  summary: string;
}

export interface AuditRecord {
  workspaceId: ObjectId | null;
  actor: string;
  action: string;
  targetId: string;
  detail: string;
  facts?: Record<string, string> | undefined;
}

/** What a list of the trail narrows to; absent fields do not narrow. */
export interface AuditListFilter {
  /** `usr_…` or `operator`. */
  actor?: string | undefined;
  /** An operation, e.g. `templates.publish`. */
  action?: string | undefined;
  occurredAfter?: Date | undefined;
  occurredBefore?: Date | undefined;
}

export interface AuditLogDeps {
  events: AuditEventsRepository;
  workspaces: WorkspacesRepository;
  users: UsersRepository;
  /**
   * The current name of an object an event did not record the name of (older events; the
   * actions whose answer carries none), e.g. a template's; undefined when gone or not kept.
   */
  currentName: (kind: AuditTargetKind, id: ObjectId) => Promise<string | undefined>;
  pageTokens: PageTokens;
  /** Older events' actions: the RPC's `Service.Method` → its operation (src/rpc/admin-rpc-map.ts). */
  legacyActions?: ReadonlyMap<string, string> | undefined;
}

const MAX_FACT_LENGTH = 300;

export class AuditLog {
  private readonly deps: AuditLogDeps;
  private readonly legacyActions: ReadonlyMap<string, string>;
  constructor(deps: AuditLogDeps) {
    this.deps = deps;
    this.legacyActions = deps.legacyActions ?? new Map();
  }

  async record(event: AuditRecord): Promise<void> {
    const facts = Object.fromEntries(
      Object.entries(event.facts ?? {})
        .filter(([, value]) => value !== '')
        .map(([key, value]) => [key, value.slice(0, MAX_FACT_LENGTH)]),
    );
    await this.deps.events.insert({
      _id: new ObjectId(),
      workspaceId: event.workspaceId,
      actor: event.actor,
      action: event.action,
      targetId: event.targetId,
      detail: event.detail.slice(0, 300),
      occurredAt: new Date(),
      ...(Object.keys(facts).length > 0 ? { facts } : {}),
    });
  }

  /** Newest first; every event when no workspace is given (operator only, by policy). */
  async list(
    workspaceId: string | undefined,
    input?: PageInput,
    filter: AuditListFilter = {},
  ): Promise<Page<AuditEventView>> {
    const checked = this.checkFilter(filter);
    const page = this.deps.pageTokens.request(input, {
      list: 'auditEvents',
      filters: {
        workspace: workspaceId,
        actor: checked.actor,
        action: checked.action,
        after: checked.occurredAfter?.toISOString(),
        before: checked.occurredBefore?.toISOString(),
      },
    });
    const workspace = workspaceId ? await requireWorkspace(this.deps.workspaces, workspaceId) : undefined;
    const result = await this.deps.events.list(workspace?._id, page, {
      actor: checked.actor,
      actions: checked.action ? this.namesOf(checked.action) : undefined,
      occurredAfter: checked.occurredAfter,
      occurredBefore: checked.occurredBefore,
    });
    return { items: await this.tell(result.items), nextPageToken: result.nextPageToken };
  }

  /** Every name an operation was recorded under: itself, and the RPCs it was before. */
  private namesOf(action: string): string[] {
    const names = [action];
    for (const [rpc, operation] of this.legacyActions) if (operation === action) names.push(rpc);
    return names;
  }

  private checkFilter(filter: AuditListFilter): AuditListFilter {
    const issues: FieldIssue[] = [];
    const actor = filter.actor || undefined;
    if (actor !== undefined && actor !== 'operator' && !parseId('user', actor))
      issues.push({ field: 'actor', issue: 'must be a user id (usr_…) or "operator"' });
    const action = filter.action || undefined;
    if (action !== undefined && !isAuditAction(action))
      issues.push({ field: 'action', issue: 'is not an audited action (docs/admin.md#audit-trail lists them)' });
    const after = filter.occurredAfter;
    const before = filter.occurredBefore;
    if (after && Number.isNaN(after.getTime())) issues.push({ field: 'occurredAfter', issue: 'is not a time' });
    if (before && Number.isNaN(before.getTime())) issues.push({ field: 'occurredBefore', issue: 'is not a time' });
    if (after && before && !(after.getTime() < before.getTime()))
      issues.push({ field: 'occurredBefore', issue: 'must be later than occurredAfter' });
    if (issues.length > 0) throw validationError(issues);
    return { actor, action, occurredAfter: after, occurredBefore: before };
  }

  /** The page's events with the people's names and emails and each one in words. */
  private async tell(events: AuditEventDoc[]): Promise<AuditEventView[]> {
    const userIds = new Map<string, ObjectId>();
    const unnamed = new Map<string, { kind: AuditTargetKind; id: ObjectId }>();
    for (const e of events) {
      for (const id of [e.actor, e.targetId]) {
        const userId = parseId('user', id);
        if (userId) userIds.set(id, userId);
      }
      const kind = auditTargetKind(e.targetId);
      const id = kind && kind !== 'user' && kind in ID_PREFIXES ? parseId(kind as IdKind, e.targetId) : undefined;
      if (kind && id && !recordedName(kind, e.facts ?? {})) unnamed.set(e.targetId, { kind, id });
    }
    const [users, names] = await Promise.all([
      userIds.size > 0 ? this.deps.users.getMany([...userIds.values()]) : Promise.resolve([]),
      Promise.all(
        [...unnamed].map(
          async ([targetId, { kind, id }]) => [targetId, (await this.deps.currentName(kind, id)) ?? ''] as const,
        ),
      ),
    ]);
    const people = new Map(users.map((u) => [formatId('user', u._id), u]));
    const currentNames = new Map(names);
    return events.map((e) => {
      const action = auditActionOf(e.action, this.legacyActions);
      const facts = e.facts ?? {};
      const kind = auditTargetKind(e.targetId);
      const person = people.get(e.actor);
      const targetPerson = people.get(e.targetId);
      const targetName =
        kind === 'user'
          ? targetPerson?.email || facts.email || ''
          : (kind && recordedName(kind, facts)) || currentNames.get(e.targetId) || '';
      return {
        id: formatId('auditEvent', e._id),
        workspaceId: e.workspaceId ? formatId('workspace', e.workspaceId) : '',
        actor: e.actor,
        action,
        targetId: e.targetId,
        occurredAt: e.occurredAt,
        detail: e.detail,
        actorEmail: person?.email ?? '',
        actorDisplayName: person?.displayName ?? '',
        targetKind: kind ?? '',
        targetName,
        facts,
        summary: auditEventInWords({ action, targetId: e.targetId, detail: e.detail, facts, targetName }).text,
      };
    });
  }
}

/** The target's name as the event recorded it ('' when it did not). */
function recordedName(kind: AuditTargetKind, facts: Record<string, string>): string {
  return (kind === 'template' ? facts.templateName : facts.name) ?? '';
}
