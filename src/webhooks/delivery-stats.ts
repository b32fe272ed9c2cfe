// Counts a recorded delivery attempt in the workspace statistics exactly once
// (docs/architecture.md#workspace-statistics): the attempt's row carries `statsDue` from the
// moment it is recorded; the counter row applies the attempt's key once; then the flag is
// cleared and the key settled. The worker does this right after each attempt, the delivery
// sweeper for what a crash left flagged.
import type { DeliveryDoc } from '../store/documents.ts';
import type { DeliveriesRepository } from '../store/deliveries-repository.ts';
import type { StatsRepository } from '../store/stats-repository.ts';

export interface DeliveryStatsDeps {
  stats: Pick<StatsRepository, 'countDeliveryAttempt' | 'settleDeliveryAttempt'>;
  deliveries: Pick<DeliveriesRepository, 'markAttemptCounted'>;
}

export async function countDeliveryAttempt(
  deps: DeliveryStatsDeps,
  doc: Pick<DeliveryDoc, '_id' | 'workspaceId' | 'statsDue' | 'test'>,
): Promise<void> {
  const due = doc.statsDue;
  if (!due) return;
  // Test events are the owner's checks, not the workspace's traffic.
  if (!doc.test) await deps.stats.countDeliveryAttempt(doc.workspaceId, doc._id, due.attempt, due.at, due.outcome);
  await deps.deliveries.markAttemptCounted(doc._id, due.attempt);
  if (!doc.test) await deps.stats.settleDeliveryAttempt(doc.workspaceId, doc._id, due.attempt, due.at);
}
