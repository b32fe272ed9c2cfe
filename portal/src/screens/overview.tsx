// The workspace at a glance (the portal's first screen): for the last 24 hours, 7 days or 30
// days, generations per hour or day stacked by final status, failure causes by error code,
// create→final latency per template, webhook delivery outcomes, the queue now and the batches
// in progress (each a progress bar linking to its generations). One call,
// GetWorkspaceStats, which reads pre-aggregated counters (docs/architecture.md#workspace-statistics).
import { useState } from 'preact/hooks';
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { api } from '../api.ts';
import { BarChart } from '../charts.tsx';
import { useAbilities } from '../session.tsx';
import { Empty, ErrorMessage, Page, useLoad, TableScroll } from '../ui.tsx';
import { StatsPeriod, type BatchInProgress, type GetWorkspaceStatsResponse } from '@gen/docgen/admin/v1/stats_pb.js';

/** As many as GetWorkspaceStats sends at most (src/stats/workspace-stats.ts BATCHES_IN_PROGRESS_SHOWN). */
const BATCHES_SHOWN = 10;

const PERIODS: Array<[StatsPeriod, string, string]> = [
  [StatsPeriod.STATS_PERIOD_24H, '24 h', 'the last 24 hours'],
  [StatsPeriod.STATS_PERIOD_7D, '7 d', 'the last 7 days'],
  [StatsPeriod.STATS_PERIOD_30D, '30 d', 'the last 30 days'],
];

const COMPLETED_COLOR = '#1a7f37';
const FAILED_COLOR = '#cf222e';
const P50_COLOR = '#1d4ed8';
const P95_COLOR = '#9a6700';

const n = (value: bigint | number) => Number(value).toLocaleString();

/** "3 s", "1.2 s", "850 ms", "4 min 10 s": latencies and waits in words. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

function bucketLabel(ts: Timestamp | undefined, hourly: boolean): string {
  if (!ts) return '';
  const date = timestampDate(ts);
  return hourly
    ? date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
    : date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
}

export function OverviewPage() {
  const { workspaceId } = useAbilities();
  const [period, setPeriod] = useState(StatsPeriod.STATS_PERIOD_24H);
  const stats = useLoad(() => api.stats.getWorkspaceStats({ workspaceId, period }), [workspaceId, period]);
  const words = PERIODS.find(([p]) => p === period)?.[2] ?? '';
  return (
    <Page
      title="Overview"
      actions={
        <button type="button" class="secondary" onClick={stats.reload}>
          Refresh
        </button>
      }
    >
      <fieldset class="period">
        <legend>Period</legend>
        {PERIODS.map(([value, label]) => (
          <label key={value} class="inline">
            <input
              type="radio"
              name="period"
              value={value}
              checked={period === value}
              onChange={() => setPeriod(value)}
            />
            {label}
          </label>
        ))}
      </fieldset>
      <ErrorMessage error={stats.error} />
      {stats.loading && !stats.data && <p role="status">Loading the overview…</p>}
      {stats.data && <OverviewBody stats={stats.data} periodWords={words} />}
    </Page>
  );
}

function OverviewBody({ stats, periodWords }: { stats: GetWorkspaceStatsResponse; periodWords: string }) {
  const hourly = stats.bucketSeconds === 3600;
  const unit = hourly ? 'hour' : 'day';
  const categories = stats.buckets.map((b) => bucketLabel(b.start, hourly));
  const total = Number(stats.completed) + Number(stats.failed);
  const failedShare = total ? Math.round((Number(stats.failed) / total) * 1000) / 10 : 0;
  const deliveries = stats.deliveries;
  const queue = stats.queue;
  const chartName = `Generations per ${unit}, stacked by final status, ${periodWords}: ${n(stats.completed)} completed, ${n(stats.failed)} failed`;
  return (
    <>
      <ul class="cards" aria-label="Totals">
        <li class="card">
          <span class="card-label">Generations</span>
          <span class="card-value">{n(total)}</span>
          <span class="muted">{periodWords}</span>
        </li>
        <li class="card">
          <span class="card-label">Completed</span>
          <span class="card-value">{n(stats.completed)}</span>
        </li>
        <li class="card">
          <span class="card-label">Failed</span>
          <span class="card-value">{n(stats.failed)}</span>
          <span class="muted">{failedShare} % of final</span>
        </li>
        <li class="card">
          <span class="card-label">Queue now</span>
          <span class="card-value">{n(queue?.pending ?? 0n)} pending</span>
          <span class="muted">
            {n(queue?.processing ?? 0n)} rendering
            {queue && queue.oldestWaitMs > 0n
              ? `, oldest waiting ${formatDuration(Number(queue.oldestWaitMs))}`
              : ', nothing waiting'}
          </span>
        </li>
      </ul>

      <BatchesInProgress batches={stats.batchesInProgress} />

      <section aria-labelledby="per-bucket">
        <h2 id="per-bucket">Generations per {unit}</h2>
        {total === 0 ? (
          <Empty>No generation became final in {periodWords}.</Empty>
        ) : (
          <BarChart
            id="generations-chart"
            label={chartName}
            categories={categories}
            stacked
            series={[
              { name: 'Completed', values: stats.buckets.map((b) => Number(b.completed)), color: COMPLETED_COLOR },
              { name: 'Failed', values: stats.buckets.map((b) => Number(b.failed)), color: FAILED_COLOR },
            ]}
            table={
              <TableScroll>
                <table class="compact">
                  <caption>Generations per {unit}, by final status</caption>
                  <thead>
                    <tr>
                      <th scope="col">{hourly ? 'Hour' : 'Day'}</th>
                      <th scope="col">Completed</th>
                      <th scope="col">Failed</th>
                    </tr>
                  </thead>
                  <tbody>
                    {stats.buckets.map((b, i) => (
                      <tr key={i}>
                        <th scope="row">{categories[i]}</th>
                        <td>{n(b.completed)}</td>
                        <td>{n(b.failed)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            }
          />
        )}
      </section>

      <div class="columns">
        <section aria-labelledby="failure-causes">
          <h2 id="failure-causes">Failure causes</h2>
          {stats.failureCauses.length === 0 ? (
            <Empty>No failures in {periodWords}.</Empty>
          ) : (
            <TableScroll>
              <table class="compact">
                <caption class="visually-hidden">Failed generations by error code, most frequent first</caption>
                <thead>
                  <tr>
                    <th scope="col">Error code</th>
                    <th scope="col">Failed</th>
                    <th scope="col">Latest message</th>
                  </tr>
                </thead>
                <tbody>
                  {stats.failureCauses.map((c) => (
                    <tr key={c.code}>
                      <th scope="row">
                        <code>{c.code}</code>
                      </th>
                      <td>{n(c.count)}</td>
                      <td class="break">{c.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )}
        </section>

        <section aria-labelledby="webhook-outcomes">
          <h2 id="webhook-outcomes">Webhook deliveries</h2>
          <dl class="facts" aria-label={`Webhook delivery attempts in ${periodWords}`}>
            <dt>Succeeded</dt>
            <dd>{n(deliveries?.succeeded ?? 0n)}</dd>
            <dt>Retried</dt>
            <dd>{n(deliveries?.retried ?? 0n)}</dd>
            <dt>Dropped</dt>
            <dd>{n(deliveries?.dropped ?? 0n)}</dd>
          </dl>
          <p class="muted">
            Attempts in {periodWords}: a retried attempt failed and is tried again later; a dropped one was the last.{' '}
            <a href="/deliveries?status=3">Dropped deliveries</a>
          </p>
        </section>
      </div>

      <section aria-labelledby="latency">
        <h2 id="latency">Time to a final state, per template</h2>
        {stats.templateLatencies.length === 0 ? (
          <Empty>No generation became final in {periodWords}.</Empty>
        ) : (
          <BarChart
            id="latency-chart"
            label={`Create to final latency per template, ${periodWords}: median (p50) and 95th percentile (p95)`}
            categories={stats.templateLatencies.map((t) => t.templateName || t.templateId || 'Unknown template')}
            horizontal
            unit=" ms"
            series={[
              { name: 'p50', values: stats.templateLatencies.map((t) => Number(t.p50Ms)), color: P50_COLOR },
              { name: 'p95', values: stats.templateLatencies.map((t) => Number(t.p95Ms)), color: P95_COLOR },
            ]}
            table={
              <TableScroll>
                <table class="compact">
                  <caption>Create to final latency per template</caption>
                  <thead>
                    <tr>
                      <th scope="col">Template</th>
                      <th scope="col">Generations</th>
                      <th scope="col">p50</th>
                      <th scope="col">p95</th>
                    </tr>
                  </thead>
                  <tbody>
                    {stats.templateLatencies.map((t) => (
                      <tr key={t.templateId}>
                        <th scope="row">
                          {t.templateId ? (
                            <a href={`/templates/${t.templateId}`}>{t.templateName || t.templateId}</a>
                          ) : (
                            'Unknown template'
                          )}
                        </th>
                        <td>{n(t.count)}</td>
                        <td>{formatDuration(Number(t.p50Ms))}</td>
                        <td>{formatDuration(Number(t.p95Ms))}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            }
          />
        )}
      </section>
    </>
  );
}

/** Batches not yet complete, newest first: a progress bar each, linked to its generations. */
function BatchesInProgress({ batches }: { batches: BatchInProgress[] }) {
  return (
    <section aria-labelledby="batches-in-progress">
      <h2 id="batches-in-progress">Batches in progress</h2>
      {batches.length === 0 ? (
        <Empty>No batch is in progress.</Empty>
      ) : (
        <>
          <ul class="plain batch-list">
            {batches.map((b) => {
              const final = Number(b.completed + b.failed);
              const total = Number(b.total);
              const percent = total ? Math.floor((final / total) * 100) : 0;
              return (
                <li key={b.id} class="batch-row">
                  <a href={`/generations?batch=${encodeURIComponent(b.id)}`}>
                    <code>{b.id}</code>
                  </a>
                  <span class="muted">created {b.createdAt ? timestampDate(b.createdAt).toLocaleString() : ''}</span>
                  <div class="progress-line">
                    <progress max={total} value={final} aria-label={`Batch ${b.id}: ${final} of ${total} items final`}>
                      {percent} %
                    </progress>
                    <span>
                      {n(final)} of {n(total)} items final: {n(b.completed)} completed, {n(b.failed)} failed
                    </span>
                  </div>
                </li>
              );
            })}
          </ul>
          {batches.length >= BATCHES_SHOWN && <p class="muted">The {BATCHES_SHOWN} newest are shown.</p>}
        </>
      )}
    </section>
  );
}
