// The timer loop of a background sweep: runs `run` every `intervalMs` (measured from the end
// of the previous pass, so passes never overlap), reports a failed pass and carries on, and
// on stop() cancels the next pass and waits for the current one to end.
export interface PeriodicTaskOptions {
  intervalMs: number;
  /** Spread each wait by ± this fraction (e.g. 0.2), so replicas started together do not sweep in step. */
  jitter?: number;
  run: () => Promise<unknown>;
  onError?: (err: unknown) => void;
}

export class PeriodicTask {
  private readonly options: PeriodicTaskOptions;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private state: 'idle' | 'started' | 'stopped' = 'idle';

  constructor(options: PeriodicTaskOptions) {
    this.options = options;
  }

  get stopped(): boolean {
    return this.state === 'stopped';
  }

  /** Schedules the first pass after one interval. Once stopped, a task does not start again. */
  start(): void {
    if (this.state !== 'idle') return;
    this.state = 'started';
    this.schedule();
  }

  async stop(): Promise<void> {
    this.state = 'stopped';
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(): void {
    const jitter = this.options.jitter ?? 0;
    const waitMs = Math.round(this.options.intervalMs * (1 - jitter + Math.random() * 2 * jitter));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = Promise.resolve()
        .then(() => this.options.run())
        .then(
          () => {},
          (err: unknown) => {
            try {
              this.options.onError?.(err);
            } catch {
              // a reporter must not stop the loop
            }
          },
        )
        .finally(() => {
          this.running = undefined;
          if (this.state === 'started') this.schedule();
        });
    }, waitMs);
  }
}
