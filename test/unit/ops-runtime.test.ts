import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { startOps } from '../../src/ops/ops-runtime.ts';

class FakeProcess extends EventEmitter {
  exits: number[] = [];
  exit(code: number): void {
    this.exits.push(code);
  }
}

describe('startOps', () => {
  it('wires logger, metrics, ops listener and shutdown: readiness first, ops listener last', async () => {
    const proc = new FakeProcess();
    const lines: string[] = [];
    const ops = await startOps(
      { roles: ['render'], logLevel: 'info', opsAddress: { host: '127.0.0.1', port: 0 }, shutdownGraceMs: 2000 },
      { process: proc, logStream: { write: (l: string) => lines.push(l) }, version: '0.1.0' },
    );
    const base = `http://127.0.0.1:${ops.address.port}`;
    let readyDuringDrain = 0;
    let metricsDuringClose = 0;
    ops.shutdown.register('drain-renders', async () => {
      readyDuringDrain = (await fetch(`${base}/readyz`)).status;
    }, 'drain');
    ops.shutdown.register('close-nats', async () => {
      metricsDuringClose = (await fetch(`${base}/metrics`)).status;
    }, 'close');
    ops.metrics.generationsCreated.inc();

    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toContain('docgen_build_info{version="0.1.0"');
    expect(text).toContain('docgen_generations_created_total 1');

    proc.emit('SIGTERM', 'SIGTERM');
    await ops.shutdown.shutdown('SIGTERM');
    expect(readyDuringDrain).toBe(503);
    expect(metricsDuringClose).toBe(200);
    expect(proc.exits).toEqual([0]);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
    const records = lines.map((l) => JSON.parse(l) as { role: string; msg: string });
    expect(records.every((r) => r.role === 'render')).toBe(true);
    expect(records.map((r) => r.msg)).toContain('shutdown complete');
  });

  it('an uncaught exception shuts down with exit code 0 when the stoppers finish', async () => {
    const proc = new FakeProcess();
    const ops = await startOps(
      { roles: ['api'], logLevel: 'error', opsAddress: { host: '127.0.0.1', port: 0 }, shutdownGraceMs: 2000 },
      { process: proc, logStream: { write: () => true } },
    );
    proc.emit('uncaughtException', new Error('boom'));
    expect(ops.shutdown.state).toBe('stopping');
    await ops.shutdown.shutdown('again');
    expect(proc.exits).toEqual([0]);
  });
});
