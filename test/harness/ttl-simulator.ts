// MongoDB's TTL monitor, for the stand-in (which keeps TTL indexes but never expires anything):
// every sweep reads each collection's indexes with listIndexes, and for every index with
// `expireAfterSeconds` deletes the documents whose indexed date lies more than that far in the
// past, as mongod's monitor does every 60 s. Only the driver's public API is used, so it works
// on any server (on a real MongoDB it merely races the real monitor).
//
// The clock is injectable: a test may run it against the same fast-forwarded clock as the code
// under test, so hours of TTL behaviour take seconds, with real deletes on the real server.
import type { Db } from 'mongodb';

export interface TtlSimulatorOptions {
  db: Db;
  /** The time the monitor believes it is (epoch ms). Default Date.now. */
  now?: () => number;
}

export interface TtlDeletion {
  collection: string;
  index: string;
  deleted: number;
}

export class TtlSimulator {
  private readonly db: Db;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  /** Documents deleted so far, by collection. */
  readonly deletedByCollection = new Map<string, number>();
  sweeps = 0;

  constructor(options: TtlSimulatorOptions) {
    this.db = options.db;
    this.now = options.now ?? Date.now;
  }

  /** One pass of the monitor: every TTL index of every collection. */
  async sweepOnce(): Promise<TtlDeletion[]> {
    const deletions: TtlDeletion[] = [];
    const now = this.now();
    for (const { name: collection } of await this.db.listCollections({}, { nameOnly: true }).toArray()) {
      const indexes = await this.db.collection(collection).listIndexes().toArray();
      for (const index of indexes) {
        const seconds = index.expireAfterSeconds as number | undefined;
        const fields = Object.keys(index.key as Record<string, unknown>);
        // MongoDB only honours TTL on single-field indexes.
        if (typeof seconds !== 'number' || fields.length !== 1) continue;
        const cutoff = new Date(now - seconds * 1000);
        const { deletedCount } = await this.db.collection(collection).deleteMany({ [fields[0]!]: { $lt: cutoff } });
        if (deletedCount > 0) {
          deletions.push({ collection, index: String(index.name), deleted: deletedCount });
          this.deletedByCollection.set(collection, (this.deletedByCollection.get(collection) ?? 0) + deletedCount);
        }
      }
    }
    this.sweeps++;
    return deletions;
  }

  /** Sweeps every `intervalMs` of real time until stop(). */
  start(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.sweepOnce()
        .catch(() => undefined)
        .finally(() => (this.running = undefined));
    }, intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
