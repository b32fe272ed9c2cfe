// The runtime's small parts: the shared sweep loop, waiting for a dependency, the queue
// message rules, stale Chromium profile removal, and tracing's off and misconfigured states.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ObjectId } from 'mongodb';
import { DependencyWaiter } from '../../src/app/wait-for-dependency.ts';
import { failedPrecondition } from '../../src/domain/errors.ts';
import { formatId } from '../../src/domain/ids.ts';
import { silentLogger, type Logger } from '../../src/ops/logger.ts';
import { PeriodicTask } from '../../src/ops/periodic-task.ts';
import { startTracing, traceHeaders, withSpan, contextFromHeaders, TracingConfigError } from '../../src/ops/tracing.ts';
import {
  finalEventSubject,
  firstDeliveryJobMsgId,
  parseRenderJob,
  redeliverJobMsgId,
  renderJobMsgId,
  renderJobRepublishMsgId,
  sweptDeliveryJobMsgId,
} from '../../src/queue/messages.ts';
import {
  PROFILE_DIR_PREFIX,
  createProfileDir,
  processStartToken,
  profileDirOwner,
  removeStaleProfileDirs,
} from '../../src/render/chromium/profile-dirs.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PeriodicTask', () => {
  it('runs a pass per interval without overlap, reports a failed pass and carries on; stop waits for the running pass', async () => {
    let running = 0;
    let maxRunning = 0;
    let passes = 0;
    const errors: unknown[] = [];
    const task = new PeriodicTask({
      intervalMs: 20,
      run: async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        passes++;
        await sleep(30);
        running--;
        if (passes === 2) throw new Error('second pass fails');
      },
      onError: (err) => errors.push(err),
    });
    task.start();
    task.start(); // a second start is a no-op
    for (let waited = 0; passes < 4 && waited < 10_000; waited += 10) await sleep(10);
    await task.stop();
    const after = passes;
    expect(running).toBe(0);
    expect(maxRunning).toBe(1);
    expect(passes).toBeGreaterThanOrEqual(4);
    expect(errors).toHaveLength(1);
    await sleep(100);
    expect(passes).toBe(after);
    expect(task.stopped).toBe(true);
  });
});

function recordingLogger(): Logger & {
  records: Array<{ level: string; msg: string; fields?: Record<string, unknown> }>;
} {
  const records: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> = [];
  const logger = Object.create(silentLogger) as Logger & { records: typeof records };
  logger.records = records;
  logger.info = (msg: string, fields?: Record<string, unknown>) => void records.push({ level: 'info', msg, fields });
  logger.warn = (msg: string, fields?: Record<string, unknown>) => void records.push({ level: 'warn', msg, fields });
  return logger;
}

describe('DependencyWaiter', () => {
  it('retries with backoff until it connects, logging what it waits for once per reason, and describes the wait', async () => {
    let attempts = 0;
    const waiter = new DependencyWaiter('NATS', 'nats://127.0.0.1:1', async () => {
      attempts++;
      if (attempts < 4) throw new Error(attempts < 3 ? 'connection refused' : 'timed out');
      return 'connected';
    });
    expect(waiter.describe()).toBe('waiting for NATS at nats://127.0.0.1:1');
    const logger = recordingLogger();
    const started = Date.now();
    const value = await waiter.connect({ logger, initialDelayMs: 10, maxDelayMs: 40 });
    expect(value).toBe('connected');
    expect(attempts).toBe(4);
    expect(Date.now() - started).toBeGreaterThanOrEqual(10 + 20 + 40 - 5);
    expect(logger.records.filter((r) => r.msg === 'waiting for NATS').map((r) => r.fields?.error)).toEqual([
      'Error: connection refused',
      'Error: timed out',
    ]);
    expect(logger.records.at(-1)).toMatchObject({ level: 'info', msg: 'connected to NATS', fields: { attempts: 4 } });
    expect(waiter.describe()).toBe('connected to NATS');
  });

  it('keeps the last error for /readyz, stops on abort, and gives up at once on a misconfiguration', async () => {
    const waiter = new DependencyWaiter('MongoDB', 'mongodb://db:27017', async () => {
      throw new Error('getaddrinfo ENOTFOUND db');
    });
    const controller = new AbortController();
    const waiting = waiter.connect({ logger: silentLogger, signal: controller.signal, initialDelayMs: 10 });
    await vi.waitFor(() => expect(waiter.lastError).toBeDefined(), { timeout: 10_000 }); // the first attempt failed
    expect(waiter.describe()).toBe('waiting for MongoDB at mongodb://db:27017: Error: getaddrinfo ENOTFOUND db');
    controller.abort(new Error('shutting down'));
    await expect(waiting).rejects.toThrow('shutting down');

    const misconfigured = new DependencyWaiter('NATS', 'nats://x', async () => {
      throw failedPrecondition('stream exists with another retention');
    });
    await expect(misconfigured.connect({ logger: silentLogger, isPermanent: () => true })).rejects.toThrow(
      'another retention',
    );
  });
});

describe('queue messages', () => {
  const generationId = formatId('generation', new ObjectId());
  it('reads a render job off the wire and names what is wrong', () => {
    expect(parseRenderJob({ generationId })).toEqual({ generationId });
    expect(parseRenderJob({ generationId, extra: 1 })).toEqual({ generationId });
    expect(parseRenderJob(null)).toMatch(/not a JSON object/);
    expect(parseRenderJob({ generationId: 'gen_1' })).toMatch(/generationId/);
  });

  it('subjects and message ids follow one rule each', () => {
    expect(finalEventSubject('DOCGEN', 'generation.completed')).toBe('docgen.events.generation.completed');
    expect(renderJobMsgId(generationId)).toBe(generationId);
    expect(renderJobRepublishMsgId(generationId, 2, new Date(5))).toBe(`${generationId}:2:5`);
    expect(firstDeliveryJobMsgId('dlv_1')).toBe('dlv_1:1');
    expect(redeliverJobMsgId('dlv_1', 3)).toBe('dlv_1:redeliver:3');
    expect(redeliverJobMsgId('dlv_1', 3)).not.toBe(redeliverJobMsgId('dlv_1', 4));
    expect(sweptDeliveryJobMsgId('dlv_1', 1, 2, 9)).toBe('dlv_1:sweep:1:2:9');
  });
});

/** A pid no process has now: the highest free one (pids are handed out from low to high). */
function pidOfNoProcess(): number {
  const max = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
  for (let pid = max - 1; pid > 1; pid--) if (!existsSync(`/proc/${pid}`)) return pid;
  throw new Error('no free pid');
}

describe('Chromium profile directories', () => {
  const dir = mkdtempSync(join(tmpdir(), 'docgen-profiles-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names a profile after its owner and removes only those of dead owners', async () => {
    const own = await createProfileDir(dir);
    const ownName = own.slice(dir.length + 1);
    expect(profileDirOwner(ownName)).toEqual({ pid: process.pid, token: processStartToken(process.pid) });

    // A process that is gone (no such pid): its profile is stale.
    const dead = `${PROFILE_DIR_PREFIX}${pidOfNoProcess()}-1-abc123`;
    // A live pid whose start time differs from the one recorded: the pid was reused.
    const reused = `${PROFILE_DIR_PREFIX}${process.ppid}-1-def456`;
    // A live process's profile (the parent's, with its real start time).
    const live = `${PROFILE_DIR_PREFIX}${process.ppid}-${processStartToken(process.ppid)}-ghi789`;
    // Names of another form are never touched.
    const legacy = `${PROFILE_DIR_PREFIX}Xy12Ab`;
    const other = 'something-else';
    for (const name of [dead, reused, live, legacy, other]) mkdirSync(join(dir, name, 'Default'), { recursive: true });

    const removed = await removeStaleProfileDirs(dir);
    expect(removed.sort()).toEqual([dead, reused].sort());
    expect(readdirSync(dir).sort()).toEqual([ownName, live, legacy, other].sort());
    expect(await removeStaleProfileDirs(join(dir, 'missing'))).toEqual([]);
  });
});

describe('tracing', () => {
  it('is off without an OTLP endpoint: nothing loaded, helpers call straight through', async () => {
    const tracing = await startTracing({ serviceName: 'docgen-test', env: {}, logger: silentLogger });
    expect(tracing.enabled).toBe(false);
    await tracing.shutdown();
    expect(await withSpan('x', {}, async (span) => span)).toBeUndefined();
    expect(traceHeaders()).toBeUndefined();
    expect(
      contextFromHeaders({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }),
    ).toBeDefined();
    const disabled = await startTracing({
      serviceName: 'docgen-test',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', OTEL_SDK_DISABLED: 'true' },
      logger: silentLogger,
    });
    expect(disabled.enabled).toBe(false);
    const none = await startTracing({
      serviceName: 'docgen-test',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', OTEL_TRACES_EXPORTER: 'none' },
      logger: silentLogger,
    });
    expect(none.enabled).toBe(false);
  });

  it('refuses settings it cannot honour, naming the variable', async () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' };
    await expect(
      startTracing({
        serviceName: 't',
        env: { ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
        logger: silentLogger,
      }),
    ).rejects.toThrow(TracingConfigError);
    await expect(
      startTracing({
        serviceName: 't',
        env: { ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
        logger: silentLogger,
      }),
    ).rejects.toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL=grpc/);
    await expect(
      startTracing({ serviceName: 't', env: { ...endpoint, OTEL_TRACES_SAMPLER: 'sometimes' }, logger: silentLogger }),
    ).rejects.toThrow(/OTEL_TRACES_SAMPLER=sometimes/);
    await expect(
      startTracing({
        serviceName: 't',
        env: { ...endpoint, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' },
        logger: silentLogger,
      }),
    ).rejects.toThrow(/OTEL_TRACES_SAMPLER_ARG=2/);
  });
});
