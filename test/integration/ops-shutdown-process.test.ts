// Graceful shutdown in a real process, with real signals: a child wired the way `docgen serve`
// wires it (ops server, stoppers, signal handlers). The coordinator's rules in process:
// test/unit/ops-shutdown.test.ts. The tests wait for the child's own lines, not for the clock:
// its drain ends when the test says so (a line on its stdin).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pollUntil } from '../harness/poll-until.ts';

const opsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/ops');

/** A child whose drain waits until a line `finish` arrives on its stdin. */
async function startChild(graceMs: number) {
  const dir = mkdtempSync(path.join(tmpdir(), 'docgen-shutdown-'));
  const script = path.join(dir, 'child.mjs');
  writeFileSync(
    script,
    `
    import { createInterface } from 'node:readline';
    import { createLogger } from ${JSON.stringify(path.join(opsDir, 'logger.ts'))};
    import { createMetrics } from ${JSON.stringify(path.join(opsDir, 'metrics.ts'))};
    import { createOpsServer } from ${JSON.stringify(path.join(opsDir, 'ops-server.ts'))};
    import { createShutdownCoordinator } from ${JSON.stringify(path.join(opsDir, 'shutdown.ts'))};
    const logger = createLogger({ level: 'info', role: 'render', stream: process.stderr });
    const ops = createOpsServer({ address: { host: '127.0.0.1', port: 0 }, metrics: createMetrics(), logger });
    const shutdown = createShutdownCoordinator({ graceMs: ${graceMs}, logger, abortGraceMs: 200 });
    const keepAlive = setInterval(() => {}, 1000);
    let finish;
    const finished = new Promise((resolve) => (finish = resolve));
    const input = createInterface({ input: process.stdin });
    input.on('line', (line) => { if (line === 'finish') finish(); });
    shutdown.register('readiness', () => { ops.setShuttingDown(); console.log('stop-accepting'); }, 'stop-accepting');
    shutdown.register('renders', (ctx) => new Promise((resolve) => {
      finished.then(() => { console.log('drained'); resolve(); });
      ctx.signal.addEventListener('abort', () => { console.log('handed-back'); resolve(); });
    }), 'drain');
    shutdown.register('ops-server', async () => {
      clearInterval(keepAlive);
      input.close();
      await ops.close();
      console.log('closed');
    }, 'close');
    shutdown.install();
    await ops.listen();
    console.log('port=' + ops.port);
    `,
  );
  const child = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = () => stdout.split('\n').filter((l) => l !== '');
  const waitForLine = (line: string) =>
    pollUntil(lines, (l) => l.includes(line), { timeoutMs: 20_000, intervalMs: 10, description: `the line ${line}` });
  const started = await pollUntil(lines, (l) => l.some((x) => x.startsWith('port=')), {
    timeoutMs: 20_000,
    intervalMs: 10,
    description: 'the child to listen',
  });
  const port = Number(started.find((x) => x.startsWith('port='))!.slice('port='.length));
  return {
    child,
    port,
    exited,
    waitForLine,
    /** The child's lines after its port. */
    said: () => lines().filter((l) => !l.startsWith('port=')),
    cleanup: () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('shutdown in a real process', () => {
  it('SIGTERM: readiness turns 503 at once, in-flight work drains, then the process exits 0', async () => {
    const c = await startChild(60_000);
    try {
      expect((await fetch(`http://127.0.0.1:${c.port}/readyz`)).status).toBe(200);
      c.child.kill('SIGTERM');
      await c.waitForLine('stop-accepting');
      // Draining: not ready, still alive.
      expect((await fetch(`http://127.0.0.1:${c.port}/readyz`)).status).toBe(503);
      expect((await fetch(`http://127.0.0.1:${c.port}/healthz`)).status).toBe(200);
      c.child.stdin.write('finish\n');
      expect(await c.exited).toBe(0);
      expect(c.said()).toEqual(['stop-accepting', 'drained', 'closed']);
    } finally {
      c.cleanup();
    }
  });

  it('past the grace period in-flight work is handed back and the process still exits', async () => {
    const c = await startChild(150);
    try {
      c.child.kill('SIGTERM');
      expect(await c.exited).toBe(1);
      expect(c.said()).toEqual(['stop-accepting', 'handed-back', 'closed']);
    } finally {
      c.cleanup();
    }
  });

  it('a second SIGTERM exits at once', async () => {
    const c = await startChild(60_000);
    try {
      c.child.kill('SIGTERM');
      await c.waitForLine('stop-accepting');
      c.child.kill('SIGTERM');
      // At once: with its drain never finishing, the process would otherwise wait a minute.
      expect(await c.exited).toBe(143);
      expect(c.said()).toEqual(['stop-accepting']);
    } finally {
      c.cleanup();
    }
  });
});
