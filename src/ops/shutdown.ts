// Graceful shutdown. On SIGTERM (Kubernetes) or SIGINT (Ctrl-C) the registered stoppers run
// phase by phase: stop accepting work (readiness 503, listeners closed, consumers stop
// pulling), drain (finish in-flight renders and deliveries, or nak them so another pod
// takes them), close dependencies, then exit. All of it within DOCGEN_SHUTDOWN_GRACE_MS;
// the chart sets terminationGracePeriodSeconds above that, so docgen exits before SIGKILL.
// A second signal exits at once.

import type { Logger } from './logger.ts';
import { silentLogger } from './logger.ts';

/**
 * stop-accepting: readiness 503, listeners and consumers stop taking work.
 * drain: in-flight work finishes, or is handed back when the signal aborts.
 * close: dependencies (browser pool, NATS, MongoDB) close.
 * final: the ops listener closes last, so /metrics and probes answer until the end.
 */
export type ShutdownPhase = 'stop-accepting' | 'drain' | 'close' | 'final';
export const SHUTDOWN_PHASES: readonly ShutdownPhase[] = ['stop-accepting', 'drain', 'close', 'final'];

export interface StopContext {
  /** Aborts when the grace period is over: hand back whatever is still in flight, now. */
  readonly signal: AbortSignal;
  /** Epoch ms at which the grace period ends. */
  readonly deadline: number;
  /** Milliseconds left of the grace period (never negative). */
  remainingMs(): number;
  /** Why we are stopping: `SIGTERM`, `SIGINT`, or what shutdown() was given. */
  readonly reason: string;
}

export type Stopper = (ctx: StopContext) => unknown;

/** The part of `process` the coordinator uses; tests pass a fake. */
export interface ShutdownProcess {
  on(event: 'SIGTERM' | 'SIGINT', listener: (signal: NodeJS.Signals) => void): unknown;
  off(event: 'SIGTERM' | 'SIGINT', listener: (signal: NodeJS.Signals) => void): unknown;
  exit(code: number): void;
}

export interface ShutdownOptions {
  /**
   * config.shutdownGraceMs; a function when it is known only later (docgen dev loads its config
   * after starting its dependencies).
   */
  graceMs: number | (() => number);
  logger?: Logger;
  /** Default: the real process. */
  process?: ShutdownProcess;
  /**
   * After the grace period aborts the stoppers' signal, how long they get to hand work back
   * before the process exits anyway. Default 1000 ms (the chart's margin covers it).
   */
  abortGraceMs?: number;
  /** Injected for tests. */
  now?: () => number;
}

export interface ShutdownCoordinator {
  /**
   * Adds a stopper. Phases run in order (stop-accepting, drain, close, final); within a phase,
   * stoppers run one after another in the order they were registered. Default phase: close.
   */
  register(name: string, stop: Stopper, phase?: ShutdownPhase): void;
  /** Installs the SIGTERM/SIGINT handlers. */
  install(): void;
  uninstall(): void;
  /**
   * Runs the stoppers (once; later calls return the same promise) and then exits the
   * process with the returned code: 0 when every stopper finished in time, 1 otherwise.
   */
  shutdown(reason: string): Promise<number>;
  readonly state: 'running' | 'stopping' | 'stopped';
}

interface Registration {
  name: string;
  stop: Stopper;
  phase: ShutdownPhase;
}

const SIGNAL_EXIT_CODES: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

export function createShutdownCoordinator(options: ShutdownOptions): ShutdownCoordinator {
  const proc: ShutdownProcess = options.process ?? (process as unknown as ShutdownProcess);
  const logger = (options.logger ?? silentLogger).child({ component: 'shutdown' });
  const now = options.now ?? Date.now;
  const abortGraceMs = options.abortGraceMs ?? 1000;
  const graceMs = () => (typeof options.graceMs === 'function' ? options.graceMs() : options.graceMs);
  const registrations: Registration[] = [];
  let state: ShutdownCoordinator['state'] = 'running';
  let running: Promise<number> | undefined;
  let exited = false;

  function exit(code: number): void {
    if (exited) return;
    exited = true;
    proc.exit(code);
  }

  const onSignal = (signal: NodeJS.Signals): void => {
    if (state !== 'running') {
      logger.warn('second signal: exiting now without finishing shutdown', { signal });
      exit(SIGNAL_EXIT_CODES[signal] ?? 1);
      return;
    }
    logger.info('signal received: shutting down', { signal, graceMs: graceMs() });
    void coordinator.shutdown(signal);
  };

  async function runStoppers(ctx: StopContext): Promise<boolean> {
    let allOk = true;
    for (const phase of SHUTDOWN_PHASES) {
      for (const reg of registrations.filter((r) => r.phase === phase)) {
        if (ctx.signal.aborted) {
          // Past the deadline the remaining stoppers still run (closing connections is
          // quick and lets in-flight messages be nak'ed), but each only for abortGraceMs.
          logger.warn('stopper runs after the grace period ended', { stopper: reg.name, phase });
        }
        const started = now();
        try {
          await reg.stop(ctx);
          logger.debug('stopper done', { stopper: reg.name, phase, ms: now() - started });
        } catch (err) {
          allOk = false;
          logger.error('stopper failed', { stopper: reg.name, phase, err });
        }
      }
    }
    return allOk;
  }

  const coordinator: ShutdownCoordinator = {
    register(name, stop, phase = 'close') {
      if (state !== 'running') throw new Error(`cannot register stopper ${name}: shutdown has begun`);
      registrations.push({ name, stop, phase });
    },
    install() {
      proc.on('SIGTERM', onSignal);
      proc.on('SIGINT', onSignal);
    },
    uninstall() {
      proc.off('SIGTERM', onSignal);
      proc.off('SIGINT', onSignal);
    },
    shutdown(reason) {
      if (running) return running;
      state = 'stopping';
      const started = now();
      const grace = graceMs();
      const deadline = started + grace;
      const controller = new AbortController();
      const ctx: StopContext = {
        signal: controller.signal,
        deadline,
        remainingMs: () => Math.max(0, deadline - now()),
        reason,
      };
      running = new Promise<number>((resolve) => {
        let settled = false;
        const finish = (code: number): void => {
          if (settled) return;
          settled = true;
          clearTimeout(graceTimer);
          clearTimeout(hardTimer);
          state = 'stopped';
          resolve(code);
          exit(code);
        };
        let hardTimer: NodeJS.Timeout | undefined;
        const graceTimer = setTimeout(() => {
          logger.warn('grace period over: handing back in-flight work', { graceMs: grace });
          controller.abort(new Error('shutdown grace period over'));
          hardTimer = setTimeout(() => {
            logger.error('stoppers did not finish after the grace period: exiting', { graceMs: grace });
            finish(1);
          }, abortGraceMs);
        }, grace);
        runStoppers(ctx).then(
          (ok) => {
            const ms = now() - started;
            const inTime = !controller.signal.aborted;
            logger.info('shutdown complete', { reason, ms, clean: ok && inTime });
            finish(ok && inTime ? 0 : 1);
          },
          () => finish(1),
        );
      });
      return running;
    },
    get state() {
      return state;
    },
  };
  return coordinator;
}
