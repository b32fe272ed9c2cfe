import { create } from '@bufbuild/protobuf';
import { ListAuditEventsResponseSchema } from '@gen/docgen/admin/v1/identity_pb.js';
import { api } from '../api.ts';
import { Pager, usePagedList } from '../paging.tsx';
import { useAbilities } from '../session.tsx';
import { Empty, ErrorMessage, Page, Time } from '../ui.tsx';

export function AuditPage() {
  const { workspaceId, isOwner } = useAbilities();
  const events = usePagedList(
    (page) =>
      isOwner
        ? api.audit.listAuditEvents({ workspaceId, ...page })
        : Promise.resolve(create(ListAuditEventsResponseSchema, {})),
    [workspaceId, isOwner],
  );
  return (
    <Page title="Audit log">
      {!isOwner && <p class="notice">Only workspace owners read the audit log.</p>}
      <ErrorMessage error={events.error} />
      {events.data && events.data.events.length === 0 && <Empty>Nothing recorded yet.</Empty>}
      {events.data && events.data.events.length > 0 && (
        <table>
          <caption class="visually-hidden">Audit events, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">Detail</th>
            </tr>
          </thead>
          <tbody>
            {events.data.events.map((e) => (
              <tr key={e.id}>
                <td>
                  <Time ts={e.occurredAt} />
                </td>
                <td>
                  <code>{e.actor}</code>
                </td>
                <td>{e.action}</td>
                <td>
                  <code>{e.targetId}</code>
                </td>
                <td>{e.detail}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager list={events} rows={events.data?.events.length ?? 0} label="Audit events" />
    </Page>
  );
}
