// Finishes what a crash interrupted (docs/interface.md#lifecycle: nothing stays PENDING or PROCESSING forever,
// exactly one final event per generation):
// - PENDING rows whose render job was never published (the API died between insert and
//   publish) or was lost, and PROCESSING rows whose worker's lease expired: publish the job;
// - final rows whose event never left: publish it;
// - queue rows out of line with the workspace's queue counters: finish them;
// - statistics hour rows past their use (every EXPIRE_HOURS_EVERY_MS): delete them.
// Every replica may sweep; JetStream's msgID de-duplication and the conditional claim make
// a duplicate publish harmless.
import type { FinalEventSource, GenerationsRepository } from '../store/generations-repository.ts';
import type { StatsRepository } from '../store/stats-repository.ts';
import { formatId } from '../domain/ids.ts';
import { PeriodicTask } from '../ops/periodic-task.ts';
import { renderJobMsgId, renderJobRepublishMsgId, renderRouteOf, type RenderRoute } from '../queue/messages.ts';

/** Statistics hour rows are deleted this often (they expire by the hour; no hurry). */
export const EXPIRE_HOURS_EVERY_MS = 10 * 60_000;

export interface SweeperDeps {
  generations: GenerationsRepository;
  /** Its expired hour rows are deleted (src/store/stats-repository.ts). */
  stats?: Pick<StatsRepository, 'deleteExpiredHours'>;
  /** msgId de-duplicates within JetStream's window; the route is the generation's workspace lane. */
  publishJob(generationId: string, msgId: string, route: RenderRoute): Promise<void>;
  publishEvent(doc: FinalEventSource): Promise<void>;
  intervalMs: number;
  /** How long a fresh PENDING row may wait for the API's own publish. */
  publishGraceMs: number;
  /** Republish a PENDING job after this long (it was lost from the stream). */
  republishAfterMs: number;
  onError?: (err: unknown) => void;
}

export class OutboxSweeper {
  private readonly deps: SweeperDeps;
  private readonly loop: PeriodicTask;
  private hoursExpiredAt = 0;

  constructor(deps: SweeperDeps) {
    this.deps = deps;
    this.loop = new PeriodicTask({ intervalMs: deps.intervalMs, run: () => this.sweepOnce(), onError: deps.onError });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  async sweepOnce(now = new Date()): Promise<void> {
    const { generations } = this.deps;
    const stranded = await generations.findStranded(now, this.deps.publishGraceMs, this.deps.republishAfterMs, 200);
    for (const doc of stranded) {
      const id = formatId('generation', doc._id);
      // The API's own publish used the bare id: if it did reach JetStream, this one is dropped.
      const msgId =
        doc.status === 'PENDING' && doc.jobPublishedAt === null
          ? renderJobMsgId(id)
          : renderJobRepublishMsgId(id, doc.attempts, now);
      await this.deps.publishJob(id, msgId, renderRouteOf(doc));
      await generations.markJobPublished(doc._id, now);
    }
    const unpublished = await generations.findUnpublishedEvents(
      new Date(now.getTime() - this.deps.publishGraceMs),
      200,
    );
    for (const doc of unpublished) await this.deps.publishEvent(doc);
    // The queue bookkeeping a crash left out of line (a create that died before inserting its
    // generation, a claim or final transition whose count did not follow).
    await generations.repairQueue(now, this.deps.publishGraceMs);
    if (this.deps.stats && now.getTime() - this.hoursExpiredAt >= EXPIRE_HOURS_EVERY_MS) {
      this.hoursExpiredAt = now.getTime();
      await this.deps.stats.deleteExpiredHours(now);
    }
  }
}
