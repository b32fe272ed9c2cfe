import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { timestampDate, timestampFromDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { GetGenerationResponse } from '@gen/docgen/admin/v1/generation_pb.js';
import { DeliveryItem } from './deliveries.tsx';
import { formatDuration } from './overview.tsx';
import { api, listAll, type PageRequest } from '../api.ts';
import { Pager, usePagedList } from '../paging.tsx';
import { useAbilities } from '../session.tsx';
import { ConfirmButton, Empty, ErrorMessage, Page, Time, useAction, useLoad, TableScroll } from '../ui.tsx';
import { GenerationStatus } from '@gen/docgen/v1/generation_pb.js';
import { BatchStatus, type Batch } from '@gen/docgen/v1/batch_pb.js';

const BATCH_STATUS_NAMES: Record<number, string> = {
  [BatchStatus.PENDING]: 'Pending',
  [BatchStatus.PROCESSING]: 'Processing',
  [BatchStatus.COMPLETED]: 'Completed',
};

/** A batch's progress: how many items are final, of which completed and failed, and its merged PDF. */
function BatchProgress({ batch }: { batch: Batch }) {
  const final = batch.completed + batch.failed;
  return (
    <section class="batch-progress" aria-label={`Batch ${batch.id}`}>
      <h2>
        Batch {batch.id}{' '}
        <span class={`badge ${batch.status === BatchStatus.COMPLETED ? 'badge-ok' : 'badge-muted'}`}>
          {BATCH_STATUS_NAMES[batch.status] ?? 'Unknown'}
        </span>
      </h2>
      <label class="progress-line">
        <span>
          {final} of {batch.total} items final: {batch.completed} completed, {batch.failed} failed
        </span>
        <progress max={batch.total} value={final} aria-label="Batch progress">
          {final} of {batch.total}
        </progress>
      </label>
      {batch.outputUrl && (
        <p>
          <a href={batch.outputUrl} rel="noreferrer" download={`${batch.id}.pdf`}>
            Download the merged PDF
          </a>
        </p>
      )}
    </section>
  );
}

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
  const { query } = useLocation();
  const [batchId, setBatchId] = useState(query.batch ?? '');
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
        batchId: batchId.trim(),
        ...(after ? { createdAfter: timestampFromDate(new Date(after)) } : {}),
        ...(before ? { createdBefore: timestampFromDate(new Date(before)) } : {}),
      }),
    [workspaceId, status, templateId, after, before, batchId],
  );
  const batch = useLoad<Batch | undefined>(
    async () =>
      batchId.trim() ? (await api.generations.getBatch({ workspaceId, id: batchId.trim() })).batch : undefined,
    [workspaceId, batchId],
  );
  const reload = () => {
    generations.reload();
    batch.reload();
  };
  return (
    <Page
      title="Generations"
      actions={
        <button type="button" class="secondary" onClick={reload}>
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
        <label class="inline">
          Batch
          <input
            type="search"
            placeholder="bat_…"
            value={batchId}
            spellcheck={false}
            onChange={(e) => setBatchId(e.currentTarget.value)}
          />
        </label>
      </form>
      <ErrorMessage error={batch.error} />
      {batch.data && <BatchProgress batch={batch.data} />}
      <ErrorMessage error={generations.error} />
      {generations.data && generations.data.generations.length === 0 && <Empty>No generations match.</Empty>}
      {generations.data && generations.data.generations.length > 0 && (
        <TableScroll>
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
                    {g.test && (
                      <>
                        {' '}
                        <span class="badge badge-test">Test</span>
                      </>
                    )}
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
        </TableScroll>
      )}
      <Pager list={generations} rows={generations.data?.generations.length ?? 0} label="Generations" />
    </Page>
  );
}

/** The REST call that creates a generation with the same body, for a terminal. */
export function curlFor(templateId: string, data: unknown): string {
  const body = JSON.stringify({ templateId, variables: data ?? {} });
  const quoted = `'${body.replaceAll("'", "'\\''")}'`;
  return [
    'curl -sS -X POST "$DOCGEN_API_URL/v1/generations" \\',
    '  -H "Authorization: Bearer $DOCGEN_API_KEY" \\',
    "  -H 'Content-Type: application/json' \\",
    `  --data ${quoted}`,
  ].join('\n');
}

const STEP_WORDS: Record<string, string> = {
  picked_up: 'Picked up by a render process',
  retry: 'Attempt failed; tried again',
  handed_back: 'Handed back (the render process shut down)',
};

function since(from: Timestamp | undefined, to: Timestamp | undefined): string {
  if (!from || !to) return '';
  const ms = timestampDate(to).getTime() - timestampDate(from).getTime();
  return ms >= 0 ? `+${formatDuration(ms)}` : '';
}

function Timeline({ detail }: { detail: GetGenerationResponse }) {
  const t = detail.timeline;
  const g = detail.generation!;
  if (!t) return null;
  // Each step with its attempt number and the time since the step before it.
  const rows: Array<{ step: (typeof t.steps)[number]; attempt: number; gap: string }> = [];
  let attempt = 0;
  let previous = t.createdAt;
  for (const step of t.steps) {
    if (step.event === 'picked_up') attempt++;
    rows.push({ step, attempt, gap: since(previous, step.at) });
    previous = step.at;
  }
  const final = g.status === GenerationStatus.COMPLETED || g.status === GenerationStatus.FAILED;
  return (
    <ol class="timeline" aria-label="Timeline">
      <li>
        <strong>Created</strong>
        <span class="when">
          <Time ts={t.createdAt} />
        </span>
      </li>
      {rows.map(({ step, attempt, gap }, i) => {
        return (
          <li key={i} class={step.event === 'retry' ? 'bad' : ''}>
            <strong>
              {STEP_WORDS[step.event] ?? step.event}
              {step.event === 'picked_up' ? ` (attempt ${attempt})` : ''}
            </strong>
            <span class="when">
              <Time ts={step.at} /> {gap}
            </span>
            {step.error && (
              <p class="error-text">
                {step.code && <code>{step.code}</code>} {step.error}
              </p>
            )}
          </li>
        );
      })}
      {t.steps.length === 0 && t.pickedUpAt && (
        <li>
          <strong>Picked up by a render process</strong>
          <span class="when">
            <Time ts={t.pickedUpAt} /> {since(t.createdAt, t.pickedUpAt)}
          </span>
        </li>
      )}
      {final ? (
        <li class={g.status === GenerationStatus.COMPLETED ? 'ok' : 'bad'}>
          <strong>{g.status === GenerationStatus.COMPLETED ? 'Completed' : 'Failed'}</strong>
          <span class="when">
            <Time ts={t.finishedAt} /> {since(previous, t.finishedAt)}
          </span>
          <p class="muted">
            {t.attempts} attempt{t.attempts === 1 ? '' : 's'}; {formatDurationBetween(t.createdAt, t.finishedAt)} from
            creation
            {t.pickedUpAt ? `, ${formatDurationBetween(t.createdAt, t.pickedUpAt)} waiting for a render process` : ''}
          </p>
          {g.status === GenerationStatus.FAILED && g.error && (
            <p class="error-text">
              {detail.errorCode && <code>{detail.errorCode}</code>} {g.error}
            </p>
          )}
        </li>
      ) : (
        <li>
          <strong>{t.pickedUpAt ? 'Rendering' : 'Waiting for a render process'}</strong>
        </li>
      )}
    </ol>
  );
}

function formatDurationBetween(from: Timestamp | undefined, to: Timestamp | undefined): string {
  if (!from || !to) return '—';
  return formatDuration(Math.max(0, timestampDate(to).getTime() - timestampDate(from).getTime()));
}

// pdf.js is large: it loads with the first document shown, as with the template editor.
type PdfViewModule = typeof import('../editor/pdf-view.tsx');

function InlinePdf({ id }: { id: string }) {
  const pdf = useLoad(() => api.generations.getGenerationPdf({ id }).then((r) => r.pdf), [id]);
  const viewer = useLoad<PdfViewModule>(() => import('../editor/pdf-view.tsx'), []);
  const PdfView = viewer.data?.PdfView;
  const [problem, setProblem] = useState('');
  return (
    <section aria-labelledby="document-heading">
      <h2 id="document-heading">Document</h2>
      <ErrorMessage error={pdf.error} />
      {problem && <p class="error">{problem}</p>}
      <ErrorMessage error={viewer.error} />
      {(pdf.loading || viewer.loading) && <p role="status">Loading the PDF…</p>}
      <div class="pdf-frame" role="document" aria-label={`PDF of generation ${id}`} tabIndex={0}>
        {PdfView && <PdfView pdf={pdf.data} onError={setProblem} />}
      </div>
    </section>
  );
}

export function GenerationDetailPage() {
  const { params } = useRoute();
  const { route } = useLocation();
  const { isOwner, canEditTemplates } = useAbilities();
  const id = params.id!;
  const loaded = useLoad(() => api.generations.getGeneration({ id }), [id]);
  const deliveries = useLoad(
    () =>
      listAll(
        (page: PageRequest) =>
          api.deliveries.listDeliveries({
            workspaceId: loaded.data?.generation?.workspaceId ?? '',
            generationId: id,
            ...page,
          }),
        'deliveries',
        3,
      ),
    [id, loaded.data?.generation?.workspaceId ?? ''],
  );
  const remove = useAction();
  const again = useAction();
  const [copied, setCopied] = useState('');
  const [renderedAgain, setRenderedAgain] = useState<string[]>([]);
  const g = loaded.data?.generation;
  const curl = g ? curlFor(g.templateId, g.data) : '';
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
      <ErrorMessage error={again.error} />
      {g && loaded.data && (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={g.status} />
            </dd>
            <dt>Mode</dt>
            <dd>
              {g.test ? (
                <>
                  <span class="badge badge-test">Test</span> made with a test key: “TEST” on every page, erased after a
                  day
                </>
              ) : (
                <span class="badge badge-live">Live</span>
              )}
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
            <dt>Download</dt>
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
                <dd class="error">
                  {loaded.data.errorCode && <code>{loaded.data.errorCode}</code>} {g.error}
                </dd>
              </>
            )}
            {loaded.data.renderedFrom && (
              <>
                <dt>Renders again</dt>
                <dd>
                  <a href={`/generations/${loaded.data.renderedFrom}`}>{loaded.data.renderedFrom}</a>
                </dd>
              </>
            )}
            {renderedAgain.length > 0 && (
              <>
                <dt>Rendered again as</dt>
                <dd>
                  <ul class="plain">
                    {renderedAgain.map((other) => (
                      <li key={other}>
                        <a href={`/generations/${other}`}>{other}</a>
                      </li>
                    ))}
                  </ul>
                </dd>
              </>
            )}
          </dl>
          <div class="row">
            {canEditTemplates && (
              <button
                type="button"
                disabled={again.busy}
                onClick={() =>
                  again.run(async () => {
                    const res = await api.generations.renderAgain({ id });
                    if (res.generation) setRenderedAgain((list) => [res.generation!.id, ...list]);
                  })
                }
              >
                Render again
              </button>
            )}
            <button
              type="button"
              class="secondary"
              onClick={() =>
                navigator.clipboard.writeText(curl).then(
                  () => setCopied('Copied the curl command.'),
                  () => setCopied('Copying was refused by the browser; select the command below.'),
                )
              }
            >
              Copy as curl
            </button>
            <span role="status" class="muted">
              {copied}
            </span>
          </div>

          <h2>Timeline</h2>
          <Timeline detail={loaded.data} />

          {g.status === GenerationStatus.COMPLETED && <InlinePdf id={id} />}

          <h2>Webhook deliveries</h2>
          <ErrorMessage error={deliveries.error} />
          {deliveries.data && deliveries.data.deliveries.length === 0 && (
            <Empty>No webhook delivery for this generation.</Empty>
          )}
          {deliveries.data && deliveries.data.deliveries.length > 0 && (
            <ul class="delivery-list" aria-label="Deliveries of this generation">
              {deliveries.data.deliveries.map((d) => (
                <DeliveryItem
                  key={d.id}
                  delivery={d}
                  endpointUrl={d.endpointId}
                  open
                  canRedeliver={false}
                  busy={false}
                  onRedeliver={() => {}}
                />
              ))}
            </ul>
          )}

          <h2>Data</h2>
          <pre class="json" tabIndex={0} aria-label="Generation data">
            {JSON.stringify(g.data ?? {}, null, 2)}
          </pre>
          <details>
            <summary>The curl command</summary>
            <pre class="json" tabIndex={0} aria-label="curl command">
              {curl}
            </pre>
            <p class="muted">
              Set DOCGEN_API_URL to the public API (for example http://127.0.0.1:8080) and DOCGEN_API_KEY to a key with
              the generations:write scope.
            </p>
          </details>
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
