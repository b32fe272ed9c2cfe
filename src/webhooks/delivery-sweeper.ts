// Safety net for delivery jobs that never reached JetStream. Once published, a job is not
// lost: the stream is on disk and an unacked job is redelivered after ack_wait, whichever
// process dies. What can be lost is the publish itself: an admin redeliver whose publish
// failed, or a stream that was purged or recreated. (A crash between inserting a delivery
// and publishing its first job is covered without the sweeper: the event is acked only
// after the publish, so the dispatcher sees it again and publishes then. And events the
// dispatcher never saw cannot be lost either: its EVENTS consumer is durable, so events
// published while no webhooks process ran wait in the stream, up to its 7-day max age.)
//
// A PENDING delivery whose next attempt is overdue by more than `graceMs` is presumed to
// have no job and gets a fresh one. The grace is generous because an overdue delivery may
// simply be queued behind a busy endpoint; if its job does exist, the worker collapses the
// two (see delivery-worker.ts). Each re-queue first moves nextAttemptAt to now, conditionally,
// so several webhooks processes sweeping together re-queue a delivery once per grace period.
import { formatId } from '../domain/ids.ts';
import { PeriodicTask } from '../ops/periodic-task.ts';
import type { DeliveriesRepository } from '../store/deliveries-repository.ts';
import { countDeliveryAttempt, type DeliveryStatsDeps } from './delivery-stats.ts';
import { sweptDeliveryJobMsgId, type DeliveryJob } from '../queue/messages.ts';

export interface DeliverySweeperOptions {
  deliveries: Pick<DeliveriesRepository, 'findOverdue' | 'markRequeued'> &
    Partial<Pick<DeliveriesRepository, 'findUncounted' | 'markAttemptCounted'>>;
  /** The workspace statistics: attempts a crash left uncounted are counted here (delivery-stats.ts). */
  stats?: DeliveryStatsDeps['stats'] | undefined;
  publishJob: (job: DeliveryJob, msgId: string) => Promise<void>;
  /** Time between sweeps. */
  intervalMs: number;
  /** How overdue a PENDING delivery must be to count as lost. */
  graceMs: number;
  /** Deliveries looked at per sweep. Default 500. */
  batchSize?: number;
  now?: () => number;
  onRequeued?: (deliveryId: string) => void;
  onError?: (err: unknown) => void;
}

export class DeliverySweeper {
  private readonly options: DeliverySweeperOptions;
  private readonly loop: PeriodicTask;

  constructor(options: DeliverySweeperOptions) {
    this.options = options;
    this.loop = new PeriodicTask({
      intervalMs: options.intervalMs,
      run: () => this.sweepOnce(),
      onError: options.onError,
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Attempts recorded at least a grace period ago whose statistics a crash cut off. */
  private async countLeftovers(now: number): Promise<void> {
    const { stats, deliveries } = this.options;
    if (!stats || !deliveries.findUncounted || !deliveries.markAttemptCounted) return;
    const markAttemptCounted = deliveries.markAttemptCounted.bind(deliveries);
    const before = new Date(now - this.options.graceMs);
    const uncounted = await deliveries.findUncounted(before, this.options.batchSize ?? 500);
    for (const doc of uncounted) await countDeliveryAttempt({ stats, deliveries: { markAttemptCounted } }, doc);
  }

  /** One pass; returns how many deliveries were re-queued. */
  async sweepOnce(): Promise<number> {
    const now = (this.options.now ?? Date.now)();
    await this.countLeftovers(now);
    const overdue = await this.options.deliveries.findOverdue(
      new Date(now - this.options.graceMs),
      this.options.batchSize ?? 500,
    );
    let requeued = 0;
    for (const doc of overdue) {
      if (this.loop.stopped) break;
      if (!doc.nextAttemptAt) continue;
      const claimed = await this.options.deliveries.markRequeued(
        doc._id,
        { round: doc.round, roundAttempts: doc.roundAttempts, nextAttemptAt: doc.nextAttemptAt },
        new Date(now),
      );
      if (!claimed) continue;
      const deliveryId = formatId('delivery', doc._id);
      // A fresh msgId: the lost job's id may still be in the broker's duplicate window.
      await this.options.publishJob(
        { deliveryId, endpointId: formatId('webhookEndpoint', doc.endpointId) },
        sweptDeliveryJobMsgId(deliveryId, doc.round, doc.roundAttempts, now),
      );
      requeued++;
      this.options.onRequeued?.(deliveryId);
    }
    return requeued;
  }
}
