// The shutdown coordinator in process, on a stand-in for `process`; the same wiring in a real
// process, with real signals: test/integration/ops-shutdown-process.test.ts.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/ops/logger.ts';
import { createShutdownCoordinator } from '../../src/ops/shutdown.ts';
import type { ShutdownProcess, StopContext } from '../../src/ops/shutdown.ts';

class FakeProcess extends EventEmitter implements ShutdownProcess {
  exits: number[] = [];
  exit(code: number): void {
    this.exits.push(code);
  }
  signal(name: 'SIGTERM' | 'SIGINT'): void {
    this.emit(name, name);
  }
}

function setup(graceMs: number, abortGraceMs = 50) {
  const proc = new FakeProcess();
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', stream: { write: (l: string) => lines.push(l) } });
  const coordinator = createShutdownCoordinator({ graceMs, abortGraceMs, process: proc, logger });
  return { proc, coordinator, lines };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('shutdown coordinator', () => {
  it('on SIGTERM runs stoppers phase by phase, in registration order within a phase, then exits 0', async () => {
    const { proc, coordinator } = setup(1000);
    const order: string[] = [];
    const step =
      (name: string, ms = 0) =>
      async () => {
        order.push(`${name}:start`);
        await sleep(ms);
        order.push(`${name}:end`);
      };
    coordinator.register('close-mongo', step('close-mongo'), 'close');
    coordinator.register('drain-renders', step('drain-renders', 20), 'drain');
    coordinator.register('readiness-503', step('readiness-503'), 'stop-accepting');
    coordinator.register('close-nats', step('close-nats'));
    coordinator.register('stop-consumer', step('stop-consumer', 5), 'stop-accepting');
    coordinator.install();
    expect(coordinator.state).toBe('running');
    proc.signal('SIGTERM');
    expect(coordinator.state).toBe('stopping');
    await expect(coordinator.shutdown('again')).resolves.toBe(0);
    expect(order).toEqual([
      'readiness-503:start',
      'readiness-503:end',
      'stop-consumer:start',
      'stop-consumer:end',
      'drain-renders:start',
      'drain-renders:end',
      'close-mongo:start',
      'close-mongo:end',
      'close-nats:start',
      'close-nats:end',
    ]);
    expect(proc.exits).toEqual([0]);
    expect(coordinator.state).toBe('stopped');
    expect(() => coordinator.register('late', () => {})).toThrow(/shutdown has begun/);
  });

  it('gives stoppers the deadline and reason', async () => {
    const proc = new FakeProcess();
    const now = 1_000_000;
    const coordinator = createShutdownCoordinator({ graceMs: 5000, abortGraceMs: 50, process: proc, now: () => now });
    let seen: StopContext | undefined;
    coordinator.register(
      'x',
      (ctx) => {
        seen = ctx;
      },
      'drain',
    );
    await coordinator.shutdown('SIGINT');
    expect(seen!.reason).toBe('SIGINT');
    expect(seen!.deadline).toBe(now + 5000);
    expect(seen!.remainingMs()).toBe(5000);
    expect(seen!.signal.aborted).toBe(false);
    expect(proc.exits).toEqual([0]);
  });

  it('a failing stopper does not stop the others; the exit code is 1', async () => {
    const { proc, coordinator, lines } = setup(1000);
    const ran: string[] = [];
    coordinator.register(
      'bad',
      () => {
        throw new Error('close failed with svc_live_abcdefghijklmnopqrstuvwxyz0123');
      },
      'drain',
    );
    coordinator.register('good', () => {
      ran.push('good');
    });
    await expect(coordinator.shutdown('test')).resolves.toBe(1);
    expect(ran).toEqual(['good']);
    expect(proc.exits).toEqual([1]);
    expect(lines.join('')).toContain('stopper failed');
    expect(lines.join('')).not.toContain('abcdefghijklmnop');
  });

  it('at the deadline aborts the signal so in-flight work is handed back, then still closes', async () => {
    const { proc, coordinator } = setup(60, 500);
    const events: string[] = [];
    coordinator.register(
      'drain',
      (ctx) =>
        new Promise<void>((resolve) => {
          // Timers may fire a millisecond early against Date.now(): "at the deadline" within 5 ms.
          ctx.signal.addEventListener('abort', () => {
            events.push(ctx.remainingMs() <= 5 ? 'nak at the deadline' : `nak ${ctx.remainingMs()} ms early`);
            resolve();
          });
        }),
      'drain',
    );
    coordinator.register('close', (ctx) => {
      events.push(`close aborted=${ctx.signal.aborted}`);
    });
    const started = Date.now();
    const code = await coordinator.shutdown('SIGTERM');
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(events).toEqual(['nak at the deadline', 'close aborted=true']);
    // Finished, but only after the grace period: not a clean shutdown.
    expect(code).toBe(1);
    expect(proc.exits).toEqual([1]);
  });

  it('exits 1 when a stopper hangs past the grace period and the abort grace', async () => {
    const { proc, coordinator } = setup(40, 40);
    let closed = false;
    coordinator.register('hang', () => new Promise(() => {}), 'drain');
    coordinator.register('close', () => {
      closed = true;
    });
    const started = Date.now();
    await expect(coordinator.shutdown('SIGTERM')).resolves.toBe(1);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(75);
    expect(took).toBeLessThan(3000);
    expect(closed).toBe(false);
    expect(proc.exits).toEqual([1]);
  });

  it('a second signal forces exit at once with 128+signal', async () => {
    const { proc, coordinator } = setup(10_000, 10_000);
    let stopperStarted!: () => void;
    const started = new Promise<void>((resolve) => (stopperStarted = resolve));
    let finishStopper!: () => void;
    coordinator.register(
      'slow',
      () =>
        new Promise<void>((resolve) => {
          finishStopper = resolve;
          stopperStarted();
        }),
      'drain',
    );
    coordinator.install();
    proc.signal('SIGTERM');
    await started; // the drain is under way
    proc.signal('SIGINT');
    expect(proc.exits).toEqual([130]);
    finishStopper();
    await coordinator.shutdown('again'); // the first shutdown, run to its end
    // The stoppers finishing later does not exit a second time.
    expect(proc.exits).toEqual([130]);
  });

  it('uninstall removes the handlers', () => {
    const { proc, coordinator } = setup(1000);
    coordinator.install();
    expect(proc.listenerCount('SIGTERM')).toBe(1);
    expect(proc.listenerCount('SIGINT')).toBe(1);
    coordinator.uninstall();
    expect(proc.listenerCount('SIGTERM')).toBe(0);
    expect(proc.listenerCount('SIGINT')).toBe(0);
  });
});
