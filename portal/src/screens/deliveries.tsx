import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, listAll, type PageRequest } from '../api.ts';
import { Pager, usePagedList } from '../paging.tsx';
import { useAbilities } from '../session.tsx';
import { Empty, ErrorMessage, Page, Time, useAction, useLoad, TableScroll } from '../ui.tsx';
import { DeliveryStatus, type Delivery } from '@gen/docgen/admin/v1/delivery_pb.js';

const STATUS_NAMES: Record<number, string> = {
  [DeliveryStatus.PENDING]: 'Pending',
  [DeliveryStatus.SUCCEEDED]: 'Succeeded',
  [DeliveryStatus.DROPPED]: 'Dropped',
};

export function DeliveriesPage() {
  const { workspaceId, isOwner } = useAbilities();
  const { query, route } = useLocation();
  const [endpointId, setEndpointId] = useState(query.endpoint ?? '');
  const [status, setStatus] = useState(query.status ?? '');
  const [generationId, setGenerationId] = useState(query.generation ?? '');
  const endpoints = useLoad(
    () => listAll((page: PageRequest) => api.webhooks.listWebhookEndpoints({ workspaceId, ...page }), 'endpoints'),
    [workspaceId],
  );
  const deliveries = usePagedList(
    (page) =>
      api.deliveries.listDeliveries({
        workspaceId,
        generationId: generationId.trim(),
        endpointId,
        status: Number(status) as DeliveryStatus,
        ...page,
      }),
    [workspaceId, generationId, endpointId, status],
  );
  const redeliver = useAction();
  const [notice, setNotice] = useState('');
  const urlOf = (id: string) => endpoints.data?.endpoints.find((e) => e.id === id)?.url ?? id;
  const shown = deliveries.data?.deliveries ?? [];
  const applyQuery = (change: Record<string, string>) => {
    const params = new URLSearchParams({ endpoint: endpointId, status, generation: generationId, ...change });
    for (const [k, v] of [...params]) if (!v) params.delete(k);
    route(`/deliveries${params.size ? `?${params}` : ''}`, true);
  };
  return (
    <Page
      title="Deliveries"
      actions={
        <button type="button" class="secondary" onClick={deliveries.reload}>
          Refresh
        </button>
      }
    >
      <form class="row filters" role="search" aria-label="Filter deliveries" onSubmit={(e) => e.preventDefault()}>
        <label class="inline">
          Endpoint
          <select
            value={endpointId}
            onChange={(e) => {
              setEndpointId(e.currentTarget.value);
              applyQuery({ endpoint: e.currentTarget.value });
            }}
          >
            <option value="">All endpoints</option>
            {endpoints.data?.endpoints.map((ep) => (
              <option key={ep.id} value={ep.id}>
                {ep.url}
              </option>
            ))}
          </select>
        </label>
        <label class="inline">
          Status
          <select
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value);
              applyQuery({ status: e.currentTarget.value });
            }}
          >
            <option value="">Any status</option>
            {Object.entries(STATUS_NAMES).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label class="inline">
          Generation
          <input
            type="search"
            placeholder="gen_…"
            value={generationId}
            onChange={(e) => {
              setGenerationId(e.currentTarget.value);
              applyQuery({ generation: e.currentTarget.value });
            }}
          />
        </label>
      </form>
      <ErrorMessage error={deliveries.error} />
      <ErrorMessage error={redeliver.error} />
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {deliveries.data && shown.length === 0 && <Empty>No deliveries match.</Empty>}
      {shown.length > 0 && (
        <ul class="delivery-list" aria-label="Deliveries">
          {shown.map((d) => (
            <DeliveryItem
              key={d.id}
              delivery={d}
              endpointUrl={urlOf(d.endpointId)}
              open={query.delivery === d.id}
              canRedeliver={isOwner}
              busy={redeliver.busy}
              onRedeliver={() =>
                redeliver.run(async () => {
                  await api.deliveries.redeliverDelivery({ id: d.id });
                  setNotice(`Delivery ${d.id} is being sent again.`);
                  deliveries.reload();
                })
              }
            />
          ))}
        </ul>
      )}
      <Pager list={deliveries} rows={shown.length} label="Deliveries" />
    </Page>
  );
}

/** One delivery with its attempts (also on a generation's page). */
export function DeliveryItem({
  delivery: d,
  endpointUrl,
  open,
  canRedeliver,
  busy,
  onRedeliver,
}: {
  delivery: Delivery;
  endpointUrl: string;
  open: boolean;
  canRedeliver: boolean;
  busy: boolean;
  onRedeliver: () => void;
}) {
  const statusName = STATUS_NAMES[d.status] ?? 'Unknown';
  return (
    <li class="delivery">
      <div class="delivery-head">
        <span
          class={`badge ${d.status === DeliveryStatus.SUCCEEDED ? 'badge-ok' : d.status === DeliveryStatus.DROPPED ? 'badge-bad' : 'badge-muted'}`}
        >
          {statusName}
        </span>
        <code>{d.event}</code>
        {d.test && <span class="badge badge-muted">Test event</span>}
        <span class="break">to {endpointUrl}</span>
        {d.generationId && !d.test && (
          <span>
            for <a href={`/generations/${d.generationId}`}>{d.generationId}</a>
          </span>
        )}
        {d.batchId && (
          <span>
            for batch <a href={`/generations?batch=${d.batchId}`}>{d.batchId}</a>
          </span>
        )}
        <span class="muted">
          <Time ts={d.createdAt} />
        </span>
        {canRedeliver && (
          <button
            type="button"
            class="secondary"
            disabled={busy}
            onClick={onRedeliver}
            aria-describedby={`dlv-${d.id}`}
          >
            Redeliver
          </button>
        )}
      </div>
      <details open={open}>
        <summary id={`dlv-${d.id}`}>
          {d.id}: {d.attempts.length} attempt{d.attempts.length === 1 ? '' : 's'}
          {d.nextAttemptAt ? ', next attempt scheduled' : ''}
        </summary>
        {d.attempts.length === 0 ? (
          <p class="muted">No attempt yet.</p>
        ) : (
          <TableScroll>
            <table class="compact">
              <caption class="visually-hidden">Attempts of delivery {d.id}</caption>
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Time</th>
                  <th scope="col">Result</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Response</th>
                </tr>
              </thead>
              <tbody>
                {d.attempts.map((a) => (
                  <tr key={a.number}>
                    <td>{a.number}</td>
                    <td>
                      <Time ts={a.attemptedAt} />
                    </td>
                    <td class="break">
                      {a.statusCode ? `HTTP ${a.statusCode}` : ''}
                      {a.error ? `${a.statusCode ? ': ' : ''}${a.error}` : ''}
                    </td>
                    <td>{a.durationMs} ms</td>
                    <td>
                      {a.responseExcerpt ? (
                        <pre class="excerpt">{a.responseExcerpt.slice(0, 500)}</pre>
                      ) : (
                        <span class="muted">—</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </details>
    </li>
  );
}
