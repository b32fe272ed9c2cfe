// GetWorkspaceStats (the portal's Overview): a period's numbers added up from the hourly
// counter rows (src/store/stats-repository.ts; docs/architecture.md#workspace-statistics) and
// the workspace's queue now (counters and one index entry) and its batches in progress (their
// own counters). Never reads generations, so it answers as fast for a workspace with millions
// of generations as for one with ten.
import type { ObjectId } from 'mongodb';
import { formatId } from '../domain/ids.ts';
import { requireWorkspace } from '../domain/input.ts';
import { addCounts, percentileMs, type LatencyCounts } from '../domain/latency-histogram.ts';
import type { BatchesRepository } from '../store/batches-repository.ts';
import type { GenerationsRepository } from '../store/generations-repository.ts';
import { DAY_MS, HOUR_MS, hourOf, type StatsRepository } from '../store/stats-repository.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';

export type StatsPeriod = '24h' | '7d' | '30d';

const FAILURE_CAUSES_SHOWN = 10;
/** Batches in progress shown, newest first. */
export const BATCHES_IN_PROGRESS_SHOWN = 10;

export interface WorkspaceStats {
  periodStart: Date;
  periodEnd: Date;
  bucketSeconds: number;
  buckets: Array<{ start: Date; completed: number; failed: number }>;
  completed: number;
  failed: number;
  failureCauses: Array<{ code: string; count: number; message: string }>;
  templateLatencies: Array<{
    templateId: string;
    templateName: string;
    count: number;
    p50Ms: number;
    p95Ms: number;
  }>;
  deliveries: { succeeded: number; retried: number; dropped: number };
  queue: { pending: number; processing: number; oldestWaitMs: number };
  batchesInProgress: Array<{ id: string; total: number; completed: number; failed: number; createdAt: Date }>;
}

/** The period's bounds and bucket size: whole hours (24 h) or whole UTC days (7 d, 30 d), now included. */
export function periodBounds(period: StatsPeriod, now: Date): { start: Date; end: Date; bucketMs: number } {
  if (period === '24h') {
    const end = new Date(hourOf(now).getTime() + HOUR_MS);
    return { start: new Date(end.getTime() - 24 * HOUR_MS), end, bucketMs: HOUR_MS };
  }
  const days = period === '7d' ? 7 : 30;
  const end = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS + DAY_MS);
  return { start: new Date(end.getTime() - days * DAY_MS), end, bucketMs: DAY_MS };
}

export interface WorkspaceStatsDeps {
  workspaces: Pick<WorkspacesRepository, 'get'>;
  stats: Pick<StatsRepository, 'range'>;
  generations: Pick<GenerationsRepository, 'queueState'>;
  batches: Pick<BatchesRepository, 'listInProgress'>;
  now?: () => Date;
}

export class WorkspaceStatsService {
  private readonly deps: WorkspaceStatsDeps;
  constructor(deps: WorkspaceStatsDeps) {
    this.deps = deps;
  }

  async get(workspaceId: string, period: StatsPeriod): Promise<WorkspaceStats> {
    const workspace = await requireWorkspace<{ _id: ObjectId }>(this.deps.workspaces, workspaceId);
    const now = this.deps.now?.() ?? new Date();
    const { start, end, bucketMs } = periodBounds(period, now);
    const [rows, queue, batches] = await Promise.all([
      this.deps.stats.range(workspace._id, start, end, period === '24h' ? 'hour' : 'day'),
      this.deps.generations.queueState(workspace._id),
      this.deps.batches.listInProgress(workspace._id, BATCHES_IN_PROGRESS_SHOWN),
    ]);

    const buckets = Array.from({ length: Math.round((end.getTime() - start.getTime()) / bucketMs) }, (_, i) => ({
      start: new Date(start.getTime() + i * bucketMs),
      completed: 0,
      failed: 0,
    }));
    const causes = new Map<string, { count: number; message: string; latestHour: number }>();
    const templates = new Map<string, { templateName: string; count: number; latency: LatencyCounts; hour: number }>();
    const deliveries = { succeeded: 0, retried: 0, dropped: 0 };
    let completed = 0;
    let failed = 0;
    for (const row of rows) {
      const hour = row.hour.getTime();
      if (row.kind === 'delivery') {
        deliveries.succeeded += row.succeeded ?? 0;
        deliveries.retried += row.retried ?? 0;
        deliveries.dropped += row.dropped ?? 0;
        continue;
      }
      const count = row.count ?? 0;
      const bucket = buckets[Math.floor((hour - start.getTime()) / bucketMs)];
      if (row.status === 'COMPLETED') {
        completed += count;
        if (bucket) bucket.completed += count;
      } else if (row.status === 'FAILED') {
        failed += count;
        if (bucket) bucket.failed += count;
        for (const [code, n] of Object.entries(row.causes ?? {})) {
          const cause = causes.get(code) ?? { count: 0, message: '', latestHour: -1 };
          cause.count += n;
          if (hour > cause.latestHour) {
            cause.latestHour = hour;
            cause.message = row.causeMessages?.[code] ?? cause.message;
          }
          causes.set(code, cause);
        }
      }
      const key = row.templateId ? formatId('template', row.templateId) : '';
      const template = templates.get(key) ?? { templateName: '', count: 0, latency: {}, hour: -1 };
      template.count += count;
      addCounts(template.latency, row.latency);
      if (hour >= template.hour) {
        template.hour = hour;
        template.templateName = row.templateName ?? template.templateName;
      }
      templates.set(key, template);
    }

    return {
      periodStart: start,
      periodEnd: end,
      bucketSeconds: bucketMs / 1000,
      buckets,
      completed,
      failed,
      failureCauses: [...causes.entries()]
        .map(([code, c]) => ({ code, count: c.count, message: c.message }))
        .sort((a, b) => b.count - a.count || a.code.localeCompare(b.code))
        .slice(0, FAILURE_CAUSES_SHOWN),
      templateLatencies: [...templates.entries()]
        .map(([templateId, t]) => ({
          templateId,
          templateName: t.templateName,
          count: t.count,
          p50Ms: percentileMs(t.latency, 50) ?? 0,
          p95Ms: percentileMs(t.latency, 95) ?? 0,
        }))
        .sort((a, b) => b.count - a.count || a.templateName.localeCompare(b.templateName)),
      deliveries,
      queue: {
        pending: queue.pending,
        processing: queue.processing,
        oldestWaitMs: queue.oldest ? Math.max(0, now.getTime() - queue.oldest.getTime()) : 0,
      },
      batchesInProgress: batches.map((b) => ({
        id: formatId('batch', b._id),
        total: b.total,
        completed: b.completed,
        failed: b.failed,
        createdAt: b.createdAt,
      })),
    };
  }
}
