import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ApiKeyMode } from '@gen/docgen/admin/v1/api_key_pb.js';
import { Pager, usePagedList } from '../paging.tsx';
import { useAbilities } from '../session.tsx';
import { ConfirmButton, Empty, ErrorMessage, Page, SecretOnce, Time, useAction, TableScroll } from '../ui.tsx';

const SCOPES = [
  ['generations:trigger', 'Create generations'],
  ['generations:read', 'Read generations'],
] as const;

export function ApiKeysPage() {
  const { workspaceId, isOwner } = useAbilities();
  const keys = usePagedList((page) => api.apiKeys.listApiKeys({ workspaceId, ...page }), [workspaceId]);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(SCOPES.map(([s]) => s));
  const [test, setTest] = useState(false);
  const [secret, setSecret] = useState('');
  const create = useAction();
  const revoke = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void create.run(async () => {
      if (scopes.length === 0) throw new Error('Choose at least one scope.');
      const res = await api.apiKeys.createApiKey({
        workspaceId,
        name: name.trim(),
        scopes,
        mode: test ? ApiKeyMode.TEST : ApiKeyMode.LIVE,
      });
      setSecret(res.secret);
      setName('');
      setTest(false);
      keys.reload();
    });
  };
  return (
    <Page title="API keys">
      <p class="muted">
        Applications call the public API with these keys. A key is shown once, when it is created; only its prefix is
        kept.
      </p>
      {isOwner ? (
        <form class="card inline-form" onSubmit={submit} aria-labelledby="create-key-title">
          <h2 id="create-key-title">New key</h2>
          <label>
            Key name
            <input
              type="text"
              required
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
              placeholder="e.g. billing service"
            />
          </label>
          <fieldset>
            <legend>Scopes</legend>
            {SCOPES.map(([scope, label]) => (
              <label class="checkbox" key={scope}>
                <input
                  type="checkbox"
                  checked={scopes.includes(scope)}
                  onChange={(e) =>
                    setScopes((s) => (e.currentTarget.checked ? [...s, scope] : s.filter((x) => x !== scope)))
                  }
                />
                {label} <code>{scope}</code>
              </label>
            ))}
          </fieldset>
          <fieldset>
            <legend>Mode</legend>
            <label class="checkbox">
              <input type="radio" name="key-mode" checked={!test} onChange={() => setTest(false)} />
              Live key
            </label>
            <label class="checkbox">
              <input
                type="radio"
                name="key-mode"
                checked={test}
                onChange={() => setTest(true)}
                aria-describedby="test-mode-hint"
              />
              Test key
            </label>
            <p class="muted" id="test-mode-hint">
              Live keys start <code>svc_live_</code>, test keys <code>svc_test_</code>. A test key renders the same
              templates, but its documents carry a “TEST” stamp on every page, are seen only by test keys, reach only
              webhook endpoints that receive test events, and are erased after a day.
            </p>
          </fieldset>
          <button type="submit" disabled={create.busy}>
            Create key
          </button>
          <ErrorMessage error={create.error} />
        </form>
      ) : (
        <p class="notice">Only workspace owners create and revoke keys.</p>
      )}
      {secret && <SecretOnce label="New API key" secret={secret} onDone={() => setSecret('')} />}
      <ErrorMessage error={keys.error} />
      <ErrorMessage error={revoke.error} />
      {keys.data && keys.data.apiKeys.length === 0 && <Empty>No API keys yet.</Empty>}
      {keys.data && keys.data.apiKeys.length > 0 && (
        <TableScroll>
          <table>
            <caption class="visually-hidden">API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Mode</th>
                <th scope="col">Prefix</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">State</th>
                {isOwner && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {keys.data.apiKeys.map((key) => (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>
                    {key.mode === ApiKeyMode.TEST ? (
                      <span class="badge badge-test">Test</span>
                    ) : (
                      <span class="badge badge-live">Live</span>
                    )}
                  </td>
                  <td>
                    <code>{key.prefix}…</code>
                  </td>
                  <td>{key.scopes.join(', ')}</td>
                  <td>
                    <Time ts={key.createdAt} />
                  </td>
                  <td>{key.lastUsedAt ? <Time ts={key.lastUsedAt} /> : 'Never'}</td>
                  <td>
                    {key.revokedAt ? (
                      <span class="badge badge-muted">Revoked</span>
                    ) : (
                      <span class="badge badge-ok">Active</span>
                    )}
                  </td>
                  {isOwner && (
                    <td>
                      {!key.revokedAt && (
                        <ConfirmButton
                          label="Revoke"
                          danger
                          question={`Revoke the key “${key.name}” (${key.prefix}…)? Applications using it stop working at once.`}
                          confirmLabel="Revoke key"
                          onConfirm={() =>
                            revoke.run(async () => {
                              await api.apiKeys.revokeApiKey({ id: key.id });
                              keys.reload();
                            })
                          }
                        />
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <Pager list={keys} rows={keys.data?.apiKeys.length ?? 0} label="API keys" />
    </Page>
  );
}
