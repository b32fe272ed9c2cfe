// Keeps a workspace whose renders keep crashing browser pages from starving the others: after
// `crashes` crashes within `windowMs`, at most one render of that workspace runs at a time in
// this render process; its other jobs are handed back and come again after `delayMs`. The
// throttle lifts once the window holds fewer crashes. State is per process on purpose: each
// render process protects its own pages, and nothing has to be shared or cleaned up.

export interface CrashThrottleOptions {
  /** Crashes within the window that start the throttle. Default 3. */
  crashes?: number;
  /** Default 60 s. */
  windowMs?: number;
  /** Delay before a held-back job comes again. Default 5 s. */
  delayMs?: number;
  now?: () => number;
}

export class CrashThrottle {
  readonly delayMs: number;
  private readonly crashes: number;
  private readonly windowMs: number;
  private readonly now: () => number;
  private readonly recent = new Map<string, number[]>();
  private readonly running = new Map<string, number>();

  constructor(options: CrashThrottleOptions = {}) {
    this.crashes = options.crashes ?? 3;
    this.windowMs = options.windowMs ?? 60_000;
    this.delayMs = options.delayMs ?? 5_000;
    this.now = options.now ?? Date.now;
  }

  recordCrash(workspaceId: string): void {
    const times = this.window(workspaceId);
    times.push(this.now());
    this.recent.set(workspaceId, times);
  }

  /** Whether the workspace crashed often enough lately to be throttled. */
  isThrottled(workspaceId: string): boolean {
    return this.window(workspaceId).length >= this.crashes;
  }

  /** Reserves a render of this workspace; false when it must wait (call finish() after a true). */
  tryStart(workspaceId: string): boolean {
    const running = this.running.get(workspaceId) ?? 0;
    if (running > 0 && this.isThrottled(workspaceId)) return false;
    this.running.set(workspaceId, running + 1);
    return true;
  }

  finish(workspaceId: string): void {
    const left = (this.running.get(workspaceId) ?? 1) - 1;
    if (left <= 0) this.running.delete(workspaceId);
    else this.running.set(workspaceId, left);
  }

  private window(workspaceId: string): number[] {
    const since = this.now() - this.windowMs;
    const times = (this.recent.get(workspaceId) ?? []).filter((t) => t > since);
    if (times.length === 0) this.recent.delete(workspaceId);
    else this.recent.set(workspaceId, times);
    return times;
  }
}
