import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api.ts';
import { Pager, usePagedList } from '../paging.tsx';
import { useAbilities } from '../session.tsx';
import { Empty, ErrorMessage, Page, Time } from '../ui.tsx';
import { TemplateStatus } from '@gen/docgen/admin/v1/template_pb.js';
import { takeNextEditorMessage } from '../editor/next-message.ts';

export function TemplatesPage() {
  const { route } = useLocation();
  const { workspaceId, canEditTemplates } = useAbilities();
  const templates = usePagedList((page) => api.templates.listTemplates({ workspaceId, ...page }), [workspaceId]);
  const [search, setSearch] = useState('');
  // A template just deleted on its page says so here.
  const [message, setMessage] = useState(() => takeNextEditorMessage());
  const [status, setStatus] = useState<'active' | 'archived' | 'all'>('active');
  const words = search.trim().toLowerCase();
  const shown = (templates.data?.templates ?? []).filter(
    (t) =>
      (status === 'all' || (status === 'archived') === (t.status === TemplateStatus.ARCHIVED)) &&
      (words === '' || t.name.toLowerCase().includes(words) || t.id.includes(words)),
  );
  return (
    <Page
      title="Templates"
      actions={
        canEditTemplates && (
          <button type="button" onClick={() => route('/templates/new')}>
            New template
          </button>
        )
      }
    >
      {message && (
        <div class="notice editor-message" role="status">
          <p class="message-text">{message.text}</p>
          <button type="button" class="secondary small" onClick={() => setMessage(undefined)}>
            Dismiss
          </button>
        </div>
      )}
      <ErrorMessage error={templates.error} />
      {templates.loading && !templates.data && <p role="status">Loading templates…</p>}
      {templates.data && templates.data.templates.length === 0 && (
        <Empty>No templates yet.{canEditTemplates && ' Create one with “New template”.'}</Empty>
      )}
      {templates.data && templates.data.templates.length > 0 && (
        <div class="row filters" role="search" aria-label="Find templates">
          <label class="inline">
            Search
            <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
          </label>
          <label class="inline">
            Status
            <select value={status} onChange={(e) => setStatus(e.currentTarget.value as 'active' | 'archived' | 'all')}>
              <option value="active">Active</option>
              <option value="archived">Archived</option>
              <option value="all">All</option>
            </select>
          </label>
        </div>
      )}
      {templates.data && templates.data.templates.length > 0 && shown.length === 0 && (
        <Empty>No {status === 'all' ? '' : `${status} `}templates match.</Empty>
      )}
      {shown.length > 0 && (
        <table>
          <caption class="visually-hidden">Templates of this workspace</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Published version</th>
              <th scope="col">Latest version</th>
              <th scope="col">Updated</th>
              <th scope="col">ID</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((t) => (
              <tr key={t.id}>
                <td>
                  <a href={`/templates/${t.id}`}>{t.name}</a>
                </td>
                <td>
                  <span class={`badge ${t.status === TemplateStatus.ARCHIVED ? 'badge-muted' : 'badge-ok'}`}>
                    {t.status === TemplateStatus.ARCHIVED ? 'Archived' : 'Active'}
                  </span>
                </td>
                <td>{t.publishedVersion ? `v${t.publishedVersion}` : 'Not published'}</td>
                <td>v{t.latestVersion}</td>
                <td>
                  <Time ts={t.updatedAt} />
                </td>
                <td>
                  <code>{t.id}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager list={templates} rows={templates.data?.templates.length ?? 0} label="Templates" />
    </Page>
  );
}
