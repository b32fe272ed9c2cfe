import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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
    const { proc, coordinator } = setup(5000);
    let seen: StopContext | undefined;
    coordinator.register(
      'x',
      (ctx) => {
        seen = ctx;
      },
      'drain',
    );
    const before = Date.now();
    await coordinator.shutdown('SIGINT');
    expect(seen!.reason).toBe('SIGINT');
    expect(seen!.deadline).toBeGreaterThanOrEqual(before + 5000);
    expect(seen!.remainingMs()).toBeGreaterThan(4000);
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
    coordinator.register('slow', () => sleep(50), 'drain');
    coordinator.install();
    proc.signal('SIGTERM');
    await sleep(5);
    proc.signal('SIGINT');
    expect(proc.exits).toEqual([130]);
    await sleep(80);
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

describe('shutdown in a real process', () => {
  const opsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/ops');

  // A child process wired the way `docgen serve` wires it: ops server, stoppers, signals.
  async function startChild(drainMs: number, graceMs: number) {
    const dir = mkdtempSync(path.join(tmpdir(), 'docgen-shutdown-'));
    const script = path.join(dir, 'child.mjs');
    writeFileSync(
      script,
      `
      import { createLogger } from ${JSON.stringify(path.join(opsDir, 'logger.ts'))};
      import { createMetrics } from ${JSON.stringify(path.join(opsDir, 'metrics.ts'))};
      import { createOpsServer } from ${JSON.stringify(path.join(opsDir, 'ops-server.ts'))};
      import { createShutdownCoordinator } from ${JSON.stringify(path.join(opsDir, 'shutdown.ts'))};
      const logger = createLogger({ level: 'info', role: 'render', stream: process.stderr });
      const ops = createOpsServer({ address: { host: '127.0.0.1', port: 0 }, metrics: createMetrics(), logger });
      const shutdown = createShutdownCoordinator({ graceMs: ${graceMs}, logger, abortGraceMs: 200 });
      const keepAlive = setInterval(() => {}, 1000);
      shutdown.register('readiness', () => { ops.setShuttingDown(); console.log('stop-accepting'); }, 'stop-accepting');
      shutdown.register('renders', (ctx) => new Promise((resolve) => {
        const done = setTimeout(() => { console.log('drained'); resolve(); }, ${drainMs});
        ctx.signal.addEventListener('abort', () => { clearTimeout(done); console.log('handed-back'); resolve(); });
      }), 'drain');
      shutdown.register('ops-server', async () => { clearInterval(keepAlive); await ops.close(); console.log('closed'); }, 'close');
      shutdown.install();
      await ops.listen();
      console.log('port=' + ops.port);
      `,
    );
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const started = Date.now();
    while (!/port=(\d+)/.test(stdout)) {
      if (Date.now() - started > 10_000) throw new Error('child did not start');
      await sleep(20);
    }
    const port = Number(/port=(\d+)/.exec(stdout)![1]);
    return { child, port, exited, out: () => stdout, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
  }

  it('SIGTERM: readiness turns 503 at once, in-flight work drains, then the process exits 0', async () => {
    const c = await startChild(400, 5000);
    try {
      expect((await fetch(`http://127.0.0.1:${c.port}/readyz`)).status).toBe(200);
      c.child.kill('SIGTERM');
      await sleep(100);
      // Draining: not ready, still alive.
      expect((await fetch(`http://127.0.0.1:${c.port}/readyz`)).status).toBe(503);
      expect((await fetch(`http://127.0.0.1:${c.port}/healthz`)).status).toBe(200);
      expect(await c.exited).toBe(0);
      expect(
        c
          .out()
          .split('\n')
          .filter((l) => l && !l.startsWith('port=')),
      ).toEqual(['stop-accepting', 'drained', 'closed']);
    } finally {
      c.cleanup();
    }
  });

  it('past the grace period in-flight work is handed back and the process still exits', async () => {
    const c = await startChild(10_000, 150);
    try {
      c.child.kill('SIGTERM');
      expect(await c.exited).toBe(1);
      expect(
        c
          .out()
          .split('\n')
          .filter((l) => l && !l.startsWith('port=')),
      ).toEqual(['stop-accepting', 'handed-back', 'closed']);
    } finally {
      c.cleanup();
    }
  });

  it('a second SIGTERM exits at once', async () => {
    const c = await startChild(10_000, 10_000);
    try {
      c.child.kill('SIGTERM');
      await sleep(100);
      const sent = Date.now();
      c.child.kill('SIGTERM');
      expect(await c.exited).toBe(143);
      expect(Date.now() - sent).toBeLessThan(2000);
    } finally {
      c.cleanup();
    }
  });
});
