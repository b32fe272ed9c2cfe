import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { api, listAll, type PageRequest } from '../api.ts';
import { Pager, usePagedList } from '../paging.tsx';
import { useAbilities } from '../session.tsx';
import { ConfirmButton, Empty, ErrorMessage, Page, Time, useAction, useLoad } from '../ui.tsx';
import { GenerationStatus } from '@gen/docgen/v1/generation_pb.js';

const STATUS_NAMES: Record<number, string> = {
  [GenerationStatus.PENDING]: 'Pending',
  [GenerationStatus.PROCESSING]: 'Processing',
  [GenerationStatus.COMPLETED]: 'Completed',
  [GenerationStatus.FAILED]: 'Failed',
};

function StatusBadge({ status }: { status: GenerationStatus }) {
  const tone =
    status === GenerationStatus.COMPLETED
      ? 'badge-ok'
      : status === GenerationStatus.FAILED
        ? 'badge-bad'
        : 'badge-muted';
  return <span class={`badge ${tone}`}>{STATUS_NAMES[status] ?? 'Unknown'}</span>;
}

export function GenerationsPage() {
  const { workspaceId } = useAbilities();
  const [status, setStatus] = useState('');
  const [templateId, setTemplateId] = useState('');
  const [after, setAfter] = useState('');
  const [before, setBefore] = useState('');
  const templates = useLoad(
    () => listAll((page: PageRequest) => api.templates.listTemplates({ workspaceId, ...page }), 'templates'),
    [workspaceId],
  );
  const generations = usePagedList(
    (page) =>
      api.generations.listGenerations({
        workspaceId,
        ...page,
        status: Number(status) as GenerationStatus,
        templateId,
        ...(after ? { createdAfter: timestampFromDate(new Date(after)) } : {}),
        ...(before ? { createdBefore: timestampFromDate(new Date(before)) } : {}),
      }),
    [workspaceId, status, templateId, after, before],
  );
  return (
    <Page
      title="Generations"
      actions={
        <button type="button" class="secondary" onClick={generations.reload}>
          Refresh
        </button>
      }
    >
      <form class="row filters" role="search" aria-label="Filter generations" onSubmit={(e) => e.preventDefault()}>
        <label class="inline">
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">Any status</option>
            {Object.entries(STATUS_NAMES).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label class="inline">
          Template
          <select value={templateId} onChange={(e) => setTemplateId(e.currentTarget.value)}>
            <option value="">All templates</option>
            {templates.data?.templates.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
        <label class="inline">
          Created after
          <input type="datetime-local" value={after} onChange={(e) => setAfter(e.currentTarget.value)} />
        </label>
        <label class="inline">
          Created before
          <input type="datetime-local" value={before} onChange={(e) => setBefore(e.currentTarget.value)} />
        </label>
      </form>
      <ErrorMessage error={generations.error} />
      {generations.data && generations.data.generations.length === 0 && <Empty>No generations match.</Empty>}
      {generations.data && generations.data.generations.length > 0 && (
        <table>
          <caption class="visually-hidden">Generations</caption>
          <thead>
            <tr>
              <th scope="col">Generation</th>
              <th scope="col">Template</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {generations.data.generations.map((g) => (
              <tr key={g.id}>
                <td>
                  <a href={`/generations/${g.id}`}>{g.id}</a>
                </td>
                <td>
                  {g.templateName || g.templateId} {g.templateVersion ? `v${g.templateVersion}` : ''}
                </td>
                <td>
                  <StatusBadge status={g.status} />
                </td>
                <td>
                  <Time ts={g.createdAt} />
                </td>
                <td>
                  <Time ts={g.updatedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager list={generations} rows={generations.data?.generations.length ?? 0} label="Generations" />
    </Page>
  );
}

export function GenerationDetailPage() {
  const { params } = useRoute();
  const { route } = useLocation();
  const { isOwner } = useAbilities();
  const id = params.id!;
  const loaded = useLoad(() => api.generations.getGeneration({ id }), [id]);
  const remove = useAction();
  const g = loaded.data?.generation;
  return (
    <Page
      title={`Generation ${id}`}
      actions={
        <>
          <a href="/generations">All generations</a>
          <button type="button" class="secondary" onClick={loaded.reload}>
            Refresh
          </button>
        </>
      }
    >
      <ErrorMessage error={loaded.error} />
      <ErrorMessage error={remove.error} />
      {g && (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={g.status} />
            </dd>
            <dt>Template</dt>
            <dd>
              <a href={`/templates/${g.templateId}`}>{g.templateName || g.templateId}</a>{' '}
              {g.templateVersion ? `version ${g.templateVersion}` : ''}
            </dd>
            <dt>Created</dt>
            <dd>
              <Time ts={g.createdAt} />
            </dd>
            <dt>Updated</dt>
            <dd>
              <Time ts={g.updatedAt} />
            </dd>
            <dt>Document</dt>
            <dd>
              {g.outputUrl ? (
                <a href={g.outputUrl} rel="noreferrer" download={`${g.id}.pdf`}>
                  Download PDF
                </a>
              ) : g.status === GenerationStatus.COMPLETED ? (
                'The link could not be made; refresh to try again.'
              ) : (
                'Not available until the generation completes.'
              )}
            </dd>
            {g.error && (
              <>
                <dt>Error</dt>
                <dd class="error">{g.error}</dd>
              </>
            )}
            <dt>Webhooks</dt>
            <dd>
              <a href={`/deliveries?generation=${g.id}`}>Deliveries of this generation</a>
            </dd>
          </dl>
          <h2>Data</h2>
          <pre class="json" tabIndex={0} aria-label="Generation data">
            {JSON.stringify(g.data ?? {}, null, 2)}
          </pre>
          {isOwner && (
            <ConfirmButton
              label="Delete generation"
              danger
              question={`Delete ${g.id}, its PDF and its deliveries? This cannot be undone.`}
              confirmLabel="Delete"
              onConfirm={() =>
                remove.run(async () => {
                  await api.generations.deleteGeneration({ id });
                  route('/generations');
                })
              }
            />
          )}
        </>
      )}
    </Page>
  );
}
