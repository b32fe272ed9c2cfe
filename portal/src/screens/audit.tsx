// The audit log: who changed what and when, in words ("published version 3 of Invoice"), the
// person by name and email, the object changed as a link to its screen. Filters by person,
// action and time are the server's (ListAuditEvents), so they hold across pages. The words are
// the one rule of src/domain/audit-words.ts, which the server and the CLI use too.
import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { useState } from 'preact/hooks';
import { ListAuditEventsResponseSchema, type AuditEvent } from '@gen/docgen/admin/v1/identity_pb.js';
import {
  AUDIT_ACTIONS,
  auditActorInWords,
  auditEventInWords,
  type AuditTargetKind,
  type AuditWordPart,
} from '../../../src/domain/audit-words.ts';
import { api } from '../api.ts';
import { Pager, usePagedList } from '../paging.tsx';
import { useAbilities } from '../session.tsx';
import { Empty, ErrorMessage, Page, Time, useLoad } from '../ui.tsx';

/** Where each kind of object is looked at in the portal (none: not a screen of its own). */
function targetHref(kind: AuditTargetKind, id: string): string | undefined {
  switch (kind) {
    case 'template':
      return `/templates/${id}`;
    case 'generation':
      return `/generations/${id}`;
    case 'apiKey':
      return '/api-keys';
    case 'webhookEndpoint':
      return '/webhooks';
    case 'delivery':
      return '/deliveries';
    case 'asset':
      return '/assets';
    case 'certificate':
      return '/certificates';
    case 'user':
      return '/members';
    default:
      return undefined;
  }
}

/** A date field's value (`2026-11-27`) as the start of that day here; undefined when empty. */
function startOfDay(value: string, plusDays = 0): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return undefined;
  return new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]) + plusDays);
}

const OPERATOR = 'operator';

export function AuditPage() {
  const { workspaceId, isOwner } = useAbilities();
  const [actor, setActor] = useState('');
  const [action, setAction] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const people = useLoad(
    () => (isOwner ? api.members.listMembers({ workspaceId, pageSize: 100 }) : Promise.resolve(undefined)),
    [workspaceId, isOwner],
  );
  const after = startOfDay(from);
  // "To" includes that day: events before the start of the next.
  const before = startOfDay(to, 1);
  const events = usePagedList(
    (page) =>
      isOwner
        ? api.audit.listAuditEvents({
            workspaceId,
            actor,
            action,
            occurredAfter: after ? timestampFromDate(after) : undefined,
            occurredBefore: before ? timestampFromDate(before) : undefined,
            ...page,
          })
        : Promise.resolve(create(ListAuditEventsResponseSchema, {})),
    [workspaceId, isOwner, actor, action, from, to],
  );
  const filtered = actor !== '' || action !== '' || from !== '' || to !== '';
  const clear = () => {
    setActor('');
    setAction('');
    setFrom('');
    setTo('');
  };
  return (
    <Page title="Audit log">
      {!isOwner && <p class="notice">Only workspace owners read the audit log.</p>}
      {isOwner && (
        <form
          class="card inline-form audit-filters"
          aria-labelledby="audit-filter-title"
          onSubmit={(e) => e.preventDefault()}
        >
          <h2 id="audit-filter-title" class="visually-hidden">
            Filter the audit log
          </h2>
          <label>
            Person
            <select value={actor} onChange={(e) => setActor(e.currentTarget.value)}>
              <option value="">Everyone</option>
              {people.data?.members.map((m) => (
                <option key={m.user?.id} value={m.user?.id}>
                  {m.user?.displayName ? `${m.user.displayName} (${m.user.email})` : m.user?.email}
                </option>
              ))}
              <option value={OPERATOR}>The operator (admin token)</option>
            </select>
          </label>
          <label>
            Action
            <select value={action} onChange={(e) => setAction(e.currentTarget.value)}>
              <option value="">Every action</option>
              {Object.entries(AUDIT_ACTIONS).map(([name, label]) => (
                <option key={name} value={name}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <label>
            From
            <input type="date" value={from} max={to || undefined} onInput={(e) => setFrom(e.currentTarget.value)} />
          </label>
          <label>
            To
            <input type="date" value={to} min={from || undefined} onInput={(e) => setTo(e.currentTarget.value)} />
          </label>
          <button type="button" class="secondary" disabled={!filtered} onClick={clear}>
            Clear filters
          </button>
        </form>
      )}
      <ErrorMessage error={people.error} />
      <ErrorMessage error={events.error} />
      {events.data && events.data.events.length === 0 && (
        <Empty>{filtered ? 'No event matches these filters.' : 'Nothing recorded yet.'}</Empty>
      )}
      {events.data && events.data.events.length > 0 && (
        <table class="audit-log">
          <caption class="visually-hidden">Audit events, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
            </tr>
          </thead>
          <tbody>
            {events.data.events.map((e) => (
              <tr key={e.id}>
                <td>
                  <Time ts={e.occurredAt} />
                </td>
                <td>
                  <Actor event={e} />
                </td>
                <td>
                  <Words event={e} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager list={events} rows={events.data?.events.length ?? 0} label="Audit events" />
    </Page>
  );
}

function Actor({ event }: { event: AuditEvent }) {
  if (event.actorDisplayName && event.actorEmail)
    return (
      <>
        <span class="audit-person">{event.actorDisplayName}</span> <span class="muted">{event.actorEmail}</span>
      </>
    );
  return <>{auditActorInWords({ id: event.actor, email: event.actorEmail, displayName: event.actorDisplayName })}</>;
}

function Words({ event }: { event: AuditEvent }) {
  const { parts } = auditEventInWords({
    action: event.action,
    targetId: event.targetId,
    detail: event.detail,
    facts: event.facts,
    targetName: event.targetName,
  });
  return <>{parts.map((part, i) => (typeof part === 'string' ? part : <Target key={i} part={part} />))}</>;
}

function Target({ part }: { part: Exclude<AuditWordPart, string> }) {
  const href = targetHref(part.kind, part.targetId);
  return href ? <a href={href}>{part.text}</a> : <strong>{part.text}</strong>;
}
