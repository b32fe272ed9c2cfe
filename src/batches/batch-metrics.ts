// Batches as gauges, read from MongoDB at scrape time by the render role: one aggregation over
// the unfinished batches (the `status_created` index; finished ones are never read), shared by
// both gauges of a scrape. Bounded cardinality: two status series and one total.
import type { CollectedGaugeName, GaugeCollector } from '../ops/metrics.ts';
import type { BatchesRepository, BatchProgressTotals } from '../store/batches-repository.ts';

export function batchProgressGauges(
  batches: Pick<BatchesRepository, 'progressTotals'>,
): Array<readonly [CollectedGaugeName, GaugeCollector]> {
  let current: Promise<BatchProgressTotals> | undefined;
  const totals = () => (current ??= batches.progressTotals().finally(() => setTimeout(() => (current = undefined), 0)));
  return [
    [
      'docgen_batches_in_progress',
      async () => {
        const t = await totals();
        return [
          { labels: { status: 'pending' }, value: t.pending },
          { labels: { status: 'processing' }, value: t.processing },
        ];
      },
    ],
    ['docgen_batch_items_pending', async () => (await totals()).itemsPending],
  ];
}
