// A small pool of worker processes rendering Liquid. liquidjs's limits are not a sandbox (a
// template can loop or allocate in ways they do not see), so each render gets a hard time-out
// (the process is killed and replaced) and a heap limit.
//
// Processes, not worker threads: a worker thread's heap limit (resourceLimits) is enforced by
// V8 inside our process, and a template that allocates fast enough (a string doubled in a
// loop) can outrun the worker's termination; V8 then aborts the whole process ("FATAL ERROR:
// Reached heap limit", seen once in this module's tests, the render process and every render
// in it gone). A child process that hits its heap limit takes only itself down. The children
// also run with an empty environment (no secrets), Node's permission model (they may read
// their own code and liquidjs, nothing else; no child processes, no workers, no addons) and no
// code generation from strings. Cost: ~40 MB per process and ~130 ms to start one.

import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JsonObject } from '../../domain/template.ts';
import { DEFAULT_LOCALE, DEFAULT_TIME_ZONE } from '../../domain/locale-settings.ts';
import type { TypedDeclaration } from '../../domain/variable-schema.ts';
import { RenderError } from '../render-error.ts';
import { liquidLimitsFor } from './liquid-engine.ts';
import type { LiquidLimits } from './liquid-engine.ts';
import type { LiquidRequest, LiquidResponse, LiquidResult, LiquidWorkerData } from './liquid-protocol.ts';

export interface LiquidRendererOptions {
  /** Worker processes (Liquid is ~1 ms of a ~50 ms render: one per core is plenty). */
  workers: number;
  /** CPU budget of one render; past it the process is killed (config render.liquidTimeoutMs). */
  timeoutMs: number;
  /** Heap limit of each worker process (config render.liquidMemoryMb). */
  memoryMb: number;
  /** How long a render may wait for a free worker when the caller gives no deadline. */
  maxQueueMs?: number;
  /**
   * liquidjs's own time check (default on): turns most runaway loops into a clean error just
   * before the hard time-out, without killing the process. The hard time-out applies either way.
   */
  softTimeLimit?: boolean;
}

export interface LiquidRenderRequest {
  body: string;
  css: string;
  partials: Record<string, string>;
  headerTemplate: string;
  footerTemplate: string;
  /** Default ''. */
  firstPageHeaderTemplate?: string;
  firstPageFooterTemplate?: string;
  /** Liquid source of the title; '' or absent means defaultTitle. */
  title?: string;
  defaultTitle?: string;
  language?: string;
  variables: JsonObject;
  /** Declarations whose schema the variables must match (default: none). */
  typed?: TypedDeclaration[];
  /** Formatting filters' locale and time zone (default en-US, UTC). */
  locale?: string;
  timeZone?: string;
}

export type LiquidRenderResult = LiquidResult;

export interface LiquidRenderCallOptions {
  /** Absolute deadline (Date.now() ms) of the whole render this Liquid step belongs to. */
  deadline?: number;
}

export interface LiquidRendererStats {
  workers: number;
  busy: number;
  queued: number;
  renders: number;
  failures: number;
  timeouts: number;
  memoryKills: number;
  respawns: number;
  /** Process ids of the worker processes. */
  pids: number[];
}

interface Task {
  request: Omit<LiquidRequest, 'id' | 'renderLimitMs'>;
  deadline: number;
  resolve: (result: LiquidRenderResult) => void;
  reject: (err: RenderError) => void;
  timer?: NodeJS.Timeout;
  /** True when the caller's deadline, not the Liquid budget, bounds this run. */
  boundByDeadline?: boolean;
}

interface Slot {
  child: ChildProcess;
  ready: boolean;
  task: Task | null;
  taskId: number;
  retired: boolean;
  /** Tail of the child's stderr: tells a heap-limit abort from other deaths. */
  stderr: string;
}

const START_TIMEOUT_MS = 30_000;
const WORKER_PATH = fileURLToPath(new URL('./liquid-worker.ts', import.meta.url));

function nearestPackageJson(dir: string): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'package.json'))) return join(d, 'package.json');
    if (dirname(d) === d) return undefined;
  }
}

/** The folder of an installed package, resolved as `from` (a file) would resolve it. */
function packageDir(name: string, from: string = import.meta.url): string {
  const entry = createRequire(from).resolve(name);
  const marker = `${sep}node_modules${sep}${name}${sep}`;
  const at = entry.lastIndexOf(marker);
  if (at < 0) throw new Error(`cannot find the folder of package ${name} (resolved to ${entry})`);
  return entry.slice(0, at + marker.length - 1);
}

/** What the worker's code loads: liquidjs, the code and chart libraries (and theirs). */
function libraryDirs(): string[] {
  const qrcode = packageDir('qrcode');
  const qrcodeOwn = join(qrcode, 'package.json');
  return [
    packageDir('liquidjs'),
    packageDir('bwip-js'),
    packageDir('echarts'),
    qrcode,
    packageDir('dijkstrajs', qrcodeOwn),
    packageDir('pngjs', qrcodeOwn),
  ];
}

/** The modules of src/domain/ the worker imports at run time (they import nothing themselves). */
const DOMAIN_MODULES = ['locale-settings.ts', 'variable-schema.ts', 'liquid-vocabulary.ts'].map((name) =>
  fileURLToPath(new URL(`../../domain/${name}`, import.meta.url)),
);

/** Node flags of a worker process: heap limit, no code generation, read access to its code only. */
export function workerExecArgv(memoryMb: number): string[] {
  // Node reads the nearest package.json to learn that .ts files here are ES modules.
  const pkg = nearestPackageJson(dirname(WORKER_PATH));
  const readable = [
    `${dirname(WORKER_PATH)}/`,
    ...libraryDirs().map((dir) => `${dir}/`),
    ...DOMAIN_MODULES,
    ...(pkg ? [pkg] : []),
  ];
  return [
    `--max-old-space-size=${memoryMb}`,
    `--max-semi-space-size=${Math.max(1, Math.min(16, Math.floor(memoryMb / 8)))}`,
    '--disallow-code-generation-from-strings',
    '--permission',
    ...readable.map((path) => `--allow-fs-read=${path}`),
  ];
}

/** The environment of a worker process: nothing (secrets live in the environment), except the
 * test harness's marker that lets it find processes a test leaked. */
function workerEnv(): Record<string, string> {
  const marker = process.env.DOCGEN_TEST_SPAWNED_BY;
  return marker === undefined ? {} : { DOCGEN_TEST_SPAWNED_BY: marker };
}

const HEAP_LIMIT_DEATH = /heap out of memory|reached heap limit|allocation failed/i;

export class LiquidRenderer {
  private readonly options: Required<LiquidRendererOptions>;
  private readonly limits: LiquidLimits;
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private nextId = 1;
  private stopped = false;
  private startFailures = 0;
  private readonly counters = { renders: 0, failures: 0, timeouts: 0, memoryKills: 0, respawns: 0 };
  private readyWaiters: Array<() => void> = [];

  constructor(options: LiquidRendererOptions) {
    this.options = { maxQueueMs: 30_000, softTimeLimit: true, ...options };
    if (!(this.options.workers >= 1)) throw new Error('LiquidRenderer: workers must be >= 1');
    this.limits = liquidLimitsFor(this.options.timeoutMs, this.options.memoryMb);
  }

  /** Spawns the workers and waits until each has loaded liquidjs. */
  async start(): Promise<void> {
    this.stopped = false;
    while (this.slots.length < this.options.workers) this.slots.push(this.spawn());
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (this.slots.some((s) => !s.ready)) {
      if (Date.now() > deadline) throw new Error('Liquid worker processes did not start');
      await new Promise<void>((resolve) => {
        this.readyWaiters.push(resolve);
        setTimeout(resolve, 100).unref();
      });
    }
  }

  render(request: LiquidRenderRequest, options: LiquidRenderCallOptions = {}): Promise<LiquidRenderResult> {
    if (this.stopped) return Promise.reject(new RenderError('BROWSER_UNAVAILABLE', 'Renderer is shutting down'));
    if (this.slots.length === 0) this.start().catch(() => {});
    const deadline = options.deadline ?? Date.now() + this.options.maxQueueMs + this.options.timeoutMs;
    return new Promise<LiquidRenderResult>((resolve, reject) => {
      const task: Task = {
        request: {
          body: request.body,
          css: request.css,
          partials: request.partials,
          headerTemplate: request.headerTemplate,
          footerTemplate: request.footerTemplate,
          firstPageHeaderTemplate: request.firstPageHeaderTemplate ?? '',
          firstPageFooterTemplate: request.firstPageFooterTemplate ?? '',
          title: request.title ?? '',
          defaultTitle: request.defaultTitle ?? '',
          language: request.language ?? '',
          variables: request.variables,
          typed: request.typed ?? [],
          locale: request.locale ?? DEFAULT_LOCALE,
          timeZone: request.timeZone ?? DEFAULT_TIME_ZONE,
        },
        deadline,
        resolve,
        reject,
      };
      // While queued, only the caller's deadline applies (a wait is not the template's fault).
      task.timer = setTimeout(
        () => {
          const index = this.queue.indexOf(task);
          if (index >= 0) this.queue.splice(index, 1);
          this.fail(task, new RenderError('RENDER_TIMEOUT', 'Render timed out waiting for a Liquid worker'));
        },
        Math.max(0, deadline - Date.now()),
      );
      this.queue.push(task);
      this.dispatch();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const task of this.queue.splice(0)) {
      this.fail(task, new RenderError('BROWSER_UNAVAILABLE', 'Renderer is shutting down'));
    }
    const slots = this.slots.splice(0);
    await Promise.all(
      slots.map(async (slot) => {
        slot.retired = true;
        if (slot.task) this.fail(slot.task, new RenderError('BROWSER_UNAVAILABLE', 'Renderer is shutting down'));
        slot.task = null;
        await kill(slot.child);
      }),
    );
  }

  stats(): LiquidRendererStats {
    return {
      workers: this.slots.length,
      busy: this.slots.filter((s) => s.task !== null).length,
      queued: this.queue.length,
      ...this.counters,
      pids: this.slots.map((s) => s.child.pid).filter((pid): pid is number => pid !== undefined),
    };
  }

  private spawn(): Slot {
    const data: LiquidWorkerData = { limits: this.limits };
    const child = fork(WORKER_PATH, [JSON.stringify(data)], {
      execPath: process.execPath,
      execArgv: workerExecArgv(this.options.memoryMb),
      env: workerEnv(),
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const slot: Slot = { child, ready: false, task: null, taskId: 0, retired: false, stderr: '' };
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      slot.stderr = (slot.stderr + chunk).slice(-4096);
    });
    // Idle workers must not keep the process alive; a busy one is ref'd while it works.
    unrefChild(child);
    child.on('message', (message: LiquidResponse) => this.onMessage(slot, message));
    child.on('error', (err) => this.onChildError(slot, err));
    // 'close', not 'exit': only then has all of stderr been read (the heap-limit message).
    child.on('close', (code, signal) => this.onExit(slot, code, signal));
    return slot;
  }

  private onMessage(slot: Slot, message: LiquidResponse): void {
    if (slot.retired) return;
    if (message.type === 'ready') {
      slot.ready = true;
      this.startFailures = 0;
      for (const wake of this.readyWaiters.splice(0)) wake();
      this.dispatch();
      return;
    }
    const task = slot.task;
    if (!task || message.id !== slot.taskId) return;
    this.release(slot);
    if (message.type === 'result') {
      this.counters.renders += 1;
      clearTimeout(task.timer);
      task.resolve(message.result);
    } else if (message.reason === 'time') {
      this.fail(task, this.timeoutError(task));
    } else if (message.reason === 'variables') {
      this.fail(task, new RenderError('INVALID_VARIABLE', message.message));
    } else {
      this.fail(task, new RenderError('LIQUID_ERROR', message.message, { diagnostic: message.diagnostic }));
    }
    this.dispatch();
  }

  /** The process could not be spawned or signalled. */
  private onChildError(slot: Slot, err: Error): void {
    if (slot.retired) return;
    const task = slot.task;
    if (!slot.ready) this.startFailures += 1;
    this.retire(slot);
    if (task) this.fail(task, new RenderError('INTERNAL', 'Liquid worker failed', { cause: err }));
  }

  private onExit(slot: Slot, code: number | null, signal: NodeJS.Signals | null): void {
    if (slot.retired) return;
    const task = slot.task;
    if (!slot.ready) this.startFailures += 1;
    this.retire(slot);
    if (!task) return;
    if (HEAP_LIMIT_DEATH.test(slot.stderr)) {
      this.counters.memoryKills += 1;
      this.fail(
        task,
        new RenderError('LIQUID_MEMORY', `Liquid rendering exceeded its memory limit of ${this.options.memoryMb} MB`),
      );
    } else {
      const how = signal ?? `code ${code}`;
      this.fail(task, new RenderError('INTERNAL', `Liquid worker exited (${how})`));
    }
  }

  /** Takes a worker out of service for good and puts a fresh one in its place. */
  private retire(slot: Slot): void {
    slot.retired = true;
    slot.task = null;
    void kill(slot.child);
    const index = this.slots.indexOf(slot);
    if (index < 0 || this.stopped) return;
    this.counters.respawns += 1;
    if (this.startFailures > 3) {
      // A worker that cannot even start will not start on the next try either: back off.
      this.slots.splice(index, 1);
      setTimeout(
        () => {
          if (!this.stopped && this.slots.length < this.options.workers) this.slots.push(this.spawn());
        },
        Math.min(30_000, 250 * 2 ** this.startFailures),
      ).unref();
      return;
    }
    this.slots[index] = this.spawn();
  }

  private release(slot: Slot): void {
    slot.task = null;
    unrefChild(slot.child);
  }

  private timeoutError(task: Task): RenderError {
    this.counters.timeouts += 1;
    if (task.boundByDeadline) return new RenderError('RENDER_TIMEOUT', 'Render timed out during Liquid rendering');
    return new RenderError(
      'LIQUID_TIMEOUT',
      `Liquid rendering exceeded its time limit of ${this.options.timeoutMs} ms (an endless or very large loop?)`,
    );
  }

  private fail(task: Task, err: RenderError): void {
    clearTimeout(task.timer);
    if (err.code !== 'LIQUID_TIMEOUT' && err.code !== 'RENDER_TIMEOUT') this.counters.failures += 1;
    task.reject(err);
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = this.slots.find((s) => s.ready && !s.task && !s.retired);
      if (!slot) return;
      const task = this.queue.shift()!;
      clearTimeout(task.timer);
      const remaining = task.deadline - Date.now();
      if (remaining <= 0) {
        this.fail(task, new RenderError('RENDER_TIMEOUT', 'Render timed out waiting for a Liquid worker'));
        continue;
      }
      const budget = Math.min(this.options.timeoutMs, remaining);
      task.boundByDeadline = remaining < this.options.timeoutMs;
      const id = this.nextId++;
      slot.task = task;
      slot.taskId = id;
      refChild(slot.child);
      task.timer = setTimeout(() => {
        if (slot.task !== task) return;
        // SIGKILL stops anything, a tight loop included; the slot is replaced.
        this.retire(slot);
        this.fail(task, this.timeoutError(task));
        this.dispatch();
      }, budget);
      const renderLimitMs = this.options.softTimeLimit ? Math.max(10, Math.floor(budget * 0.9)) : Infinity;
      const request: LiquidRequest = { ...task.request, id, renderLimitMs };
      try {
        slot.child.send(request, (err) => {
          if (err && slot.task === task) {
            this.release(slot);
            this.fail(
              task,
              new RenderError('INTERNAL', 'Could not pass the render to a Liquid worker', { cause: err }),
            );
          }
        });
      } catch (err) {
        // Variables that cannot be cloned (not JSON) are the caller's bug, not a template's.
        this.release(slot);
        this.fail(
          task,
          new RenderError('INTERNAL', 'Variables could not be passed to the Liquid worker', { cause: err }),
        );
      }
    }
  }
}

function refChild(child: ChildProcess): void {
  child.ref();
  (child.channel as { ref?: () => void } | null | undefined)?.ref?.();
}

function unrefChild(child: ChildProcess): void {
  child.unref();
  (child.channel as { unref?: () => void } | null | undefined)?.unref?.();
}

/** SIGKILL (a looping render ignores anything gentler) and wait until it is gone and reaped. */
async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.ref(); // keep the event loop alive until the exit is seen (and the child reaped)
  if (!child.kill('SIGKILL')) return; // already gone
  await exited;
}
