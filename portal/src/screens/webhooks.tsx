import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Pager, usePagedList } from '../paging.tsx';
import { useAbilities } from '../session.tsx';
import { ConfirmButton, Empty, ErrorMessage, Page, SecretOnce, Time, useAction, TableScroll } from '../ui.tsx';

const EVENTS = ['generation.completed', 'generation.failed', 'batch.completed'];

export function WebhooksPage() {
  const { workspaceId, isOwner } = useAbilities();
  const endpoints = usePagedList((page) => api.webhooks.listWebhookEndpoints({ workspaceId, ...page }), [workspaceId]);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<string[]>(EVENTS);
  const [testEvents, setTestEvents] = useState(false);
  const [secret, setSecret] = useState<{ label: string; value: string } | undefined>();
  const [notice, setNotice] = useState<{ text: string; deliveryId?: string } | undefined>();
  const create = useAction();
  const rowAction = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void create.run(async () => {
      if (events.length === 0) throw new Error('Choose at least one event.');
      const res = await api.webhooks.createWebhookEndpoint({
        workspaceId,
        url: url.trim(),
        events,
        description,
        testEvents,
      });
      setSecret({ label: `Signing secret of ${res.endpoint?.url ?? 'the endpoint'}`, value: res.secret });
      setUrl('');
      setDescription('');
      setTestEvents(false);
      endpoints.reload();
    });
  };
  return (
    <Page title="Webhooks">
      <p class="muted">
        docgen posts signed events (Standard Webhooks) to these endpoints when generations complete or fail.
      </p>
      {isOwner ? (
        <form class="card inline-form" onSubmit={submit} aria-labelledby="add-endpoint-title">
          <h2 id="add-endpoint-title">New endpoint</h2>
          <label>
            Endpoint URL
            <input
              class="wide"
              type="url"
              required
              value={url}
              onInput={(e) => setUrl(e.currentTarget.value)}
              placeholder="https://example.com/webhooks/docgen"
            />
          </label>
          <label>
            Description
            <input type="text" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          </label>
          <fieldset>
            <legend>Events</legend>
            {EVENTS.map((event) => (
              <label class="checkbox" key={event}>
                <input
                  type="checkbox"
                  checked={events.includes(event)}
                  onChange={(e) =>
                    setEvents((s) => (e.currentTarget.checked ? [...s, event] : s.filter((x) => x !== event)))
                  }
                />
                <code>{event}</code>
              </label>
            ))}
            <label class="checkbox">
              <input
                type="checkbox"
                checked={testEvents}
                onChange={(e) => setTestEvents(e.currentTarget.checked)}
                aria-describedby="test-events-hint"
              />
              Receive test events
            </label>
            <p class="muted" id="test-events-hint">
              The events of test generations (made with <code>svc_test_…</code> keys), marked <code>"test": true</code>.
              Without this, the endpoint receives live events only.
            </p>
          </fieldset>
          <button type="submit" disabled={create.busy}>
            Add endpoint
          </button>
          <ErrorMessage error={create.error} />
        </form>
      ) : (
        <p class="notice">Only workspace owners add and change endpoints.</p>
      )}
      {secret && <SecretOnce label={secret.label} secret={secret.value} onDone={() => setSecret(undefined)} />}
      {notice && (
        <p class="notice" role="status">
          {notice.text}{' '}
          {notice.deliveryId && <a href={`/deliveries?delivery=${notice.deliveryId}`}>See the delivery</a>}
        </p>
      )}
      <ErrorMessage error={endpoints.error} />
      <ErrorMessage error={rowAction.error} />
      {endpoints.data && endpoints.data.endpoints.length === 0 && <Empty>No endpoints yet.</Empty>}
      {endpoints.data && endpoints.data.endpoints.length > 0 && (
        <TableScroll>
          <table>
            <caption class="visually-hidden">Webhook endpoints</caption>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">Description</th>
                <th scope="col">Created</th>
                <th scope="col">Secret rotated</th>
                {isOwner && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {endpoints.data.endpoints.map((ep) => (
                <tr key={ep.id}>
                  <td class="break">
                    <code>{ep.url}</code>
                  </td>
                  <td>
                    {ep.events.join(', ')}
                    {ep.testEvents && (
                      <>
                        {' '}
                        <span class="badge badge-test">Test events too</span>
                      </>
                    )}
                  </td>
                  <td>{ep.description}</td>
                  <td>
                    <Time ts={ep.createdAt} />
                  </td>
                  <td>{ep.secretRotatedAt ? <Time ts={ep.secretRotatedAt} /> : 'Never'}</td>
                  {isOwner && (
                    <td>
                      <div class="row">
                        <button
                          type="button"
                          disabled={rowAction.busy}
                          onClick={() =>
                            rowAction.run(async () => {
                              const res = await api.webhooks.sendTestEvent({ id: ep.id });
                              setNotice({
                                text: `Test event ${res.eventId} sent to ${ep.url}.`,
                                deliveryId: res.deliveryId,
                              });
                            })
                          }
                        >
                          Send test event
                        </button>
                        <ConfirmButton
                          secondary
                          label="Rotate secret"
                          question={`Issue a new signing secret for ${ep.url}? The old one keeps verifying for 24 hours.`}
                          confirmLabel="Rotate"
                          onConfirm={() =>
                            rowAction.run(async () => {
                              const res = await api.webhooks.rotateWebhookEndpointSecret({ id: ep.id });
                              setSecret({ label: `New signing secret of ${ep.url}`, value: res.secret });
                              endpoints.reload();
                            })
                          }
                        />
                        <ConfirmButton
                          label="Delete"
                          danger
                          question={`Delete the endpoint ${ep.url}? It receives no more events.`}
                          confirmLabel="Delete endpoint"
                          onConfirm={() =>
                            rowAction.run(async () => {
                              await api.webhooks.deleteWebhookEndpoint({ id: ep.id });
                              endpoints.reload();
                            })
                          }
                        />
                      </div>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <Pager list={endpoints} rows={endpoints.data?.endpoints.length ?? 0} label="Webhook endpoints" />
    </Page>
  );
}
