// Connect handler of docgen.admin.v1.WorkspaceStatsService (the portal's Overview).
import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import {
  GetWorkspaceStatsResponseSchema,
  StatsPeriod,
  type GetWorkspaceStatsRequest,
  type GetWorkspaceStatsResponse,
  type WorkspaceStatsService,
} from '../gen/docgen/admin/v1/stats_pb.js';
import type { StatsPeriod as DomainPeriod, WorkspaceStatsService as Stats } from '../stats/workspace-stats.ts';

const PERIODS: Record<StatsPeriod, DomainPeriod> = {
  [StatsPeriod.STATS_PERIOD_UNSPECIFIED]: '24h',
  [StatsPeriod.STATS_PERIOD_24H]: '24h',
  [StatsPeriod.STATS_PERIOD_7D]: '7d',
  [StatsPeriod.STATS_PERIOD_30D]: '30d',
};

export class WorkspaceStatsServiceHandler implements ServiceImpl<typeof WorkspaceStatsService> {
  private readonly stats: Stats;
  constructor(stats: Stats) {
    this.stats = stats;
  }

  async getWorkspaceStats(req: GetWorkspaceStatsRequest): Promise<GetWorkspaceStatsResponse> {
    const s = await this.stats.get(req.workspaceId, PERIODS[req.period] ?? '24h');
    return create(GetWorkspaceStatsResponseSchema, {
      periodStart: timestampFromDate(s.periodStart),
      periodEnd: timestampFromDate(s.periodEnd),
      bucketSeconds: s.bucketSeconds,
      buckets: s.buckets.map((b) => ({
        start: timestampFromDate(b.start),
        completed: BigInt(b.completed),
        failed: BigInt(b.failed),
      })),
      completed: BigInt(s.completed),
      failed: BigInt(s.failed),
      failureCauses: s.failureCauses.map((c) => ({ code: c.code, count: BigInt(c.count), message: c.message })),
      templateLatencies: s.templateLatencies.map((t) => ({
        templateId: t.templateId,
        templateName: t.templateName,
        count: BigInt(t.count),
        p50Ms: BigInt(t.p50Ms),
        p95Ms: BigInt(t.p95Ms),
      })),
      deliveries: {
        succeeded: BigInt(s.deliveries.succeeded),
        retried: BigInt(s.deliveries.retried),
        dropped: BigInt(s.deliveries.dropped),
      },
      queue: {
        pending: BigInt(s.queue.pending),
        processing: BigInt(s.queue.processing),
        oldestWaitMs: BigInt(s.queue.oldestWaitMs),
      },
      batchesInProgress: s.batchesInProgress.map((b) => ({
        id: b.id,
        total: BigInt(b.total),
        completed: BigInt(b.completed),
        failed: BigInt(b.failed),
        createdAt: timestampFromDate(b.createdAt),
      })),
    });
  }
}
