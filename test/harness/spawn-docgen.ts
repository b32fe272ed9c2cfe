// Runs the real `docgen` program as a child process (Node 24 from node_modules), the way a
// Deployment runs it, and captures its output line by line (docgen logs JSON lines).
//
// The child's environment carries DOCGEN_TEST_SPAWNED_BY=<run dir> and a TMPDIR under the run
// directory; Chromium and anything else it starts inherit both, so global-setup.ts finds
// whatever a test forgot to stop.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { runDir, uniqueRunDir } from './dependencies.ts';
import { SPAWNED_BY_ENV } from './run-dir-processes.ts';
import type { Fault } from './serve-with-faults.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NODE_24 = join(REPO_ROOT, 'node_modules', '.bin', 'node');
const DOCGEN_BIN = join(REPO_ROOT, 'bin', 'docgen.js');
const SERVE_WITH_FAULTS = join(REPO_ROOT, 'test', 'harness', 'serve-with-faults.ts');

export interface OutputLine {
  stream: 'stdout' | 'stderr';
  text: string;
  /** The line parsed as JSON when it is a JSON object (docgen's log lines). */
  json: Record<string, unknown> | undefined;
  at: number;
}

export interface SpawnDocgenOptions {
  /** `serve --role <role>`; ignored when args is given. */
  role?: 'api' | 'render' | 'webhooks' | 'all';
  /** Arguments after bin/docgen.js, e.g. ['dev'] or ['admin', 'workspace', 'create', …]. */
  args?: string[];
  /** Added to the environment (on top of this process's, with DOCGEN_* from it removed). */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Echo the child's output to this process's stderr (debugging). */
  echo?: boolean;
  /** Run `serve` with this fault injected (test/harness/serve-with-faults.ts). */
  fault?: Fault;
}

export interface DocgenProcess {
  readonly pid: number;
  readonly child: ChildProcess;
  /** Every line so far, both streams, in arrival order. */
  readonly lines: OutputLine[];
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly running: boolean;
  /** Resolves with the first line (already seen or coming) that matches. */
  waitForLine(match: (line: OutputLine) => boolean, timeoutMs?: number): Promise<OutputLine>;
  /** Sends a signal (default SIGTERM) to the docgen process only. */
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after timeoutMs (default 10 s); resolves with the exit. */
  stop(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** All output as text, for assertion messages. */
  output(): string;
}

export function spawnDocgen(options: SpawnDocgenOptions): DocgenProcess {
  const args = options.args ?? ['serve', '--role', options.role ?? 'all'];
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('DOCGEN_')));
  const env: Record<string, string | undefined> = {
    ...inherited,
    TMPDIR: uniqueRunDir('docgen-tmp'),
    // Explicit, as an operator would set it: the tests run as root here, where Chromium has no sandbox.
    DOCGEN_CHROMIUM_NO_SANDBOX: 'true',
    ...options.env,
    [SPAWNED_BY_ENV]: runDir(),
  };
  // --diagnostic-dir only puts the run directory on the command line too (and keeps any
  // diagnostic report of a crashing child with the run's data).
  const entry = options.fault === undefined ? [DOCGEN_BIN] : [SERVE_WITH_FAULTS, options.fault];
  const child = spawn(NODE_24, [`--diagnostic-dir=${runDir('diagnostics')}`, ...entry, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`could not spawn ${NODE_24} ${entry.join(' ')}`);

  const lines: OutputLine[] = [];
  const capture = (stream: 'stdout' | 'stderr') => {
    let partial = '';
    child[stream]!.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      for (const text of parts) record(stream, text);
    });
    child[stream]!.on('end', () => {
      if (partial !== '') record(stream, partial);
      partial = '';
    });
  };
  const record = (stream: 'stdout' | 'stderr', text: string) => {
    let json: Record<string, unknown> | undefined;
    if (text.startsWith('{')) {
      try {
        const parsed: unknown = JSON.parse(text);
        if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
          json = parsed as Record<string, unknown>;
      } catch {
        // plain text line
      }
    }
    lines.push({ stream, text, json, at: Date.now() });
    if (options.echo) process.stderr.write(`[docgen ${child.pid} ${stream}] ${text}\n`);
  };
  capture('stdout');
  capture('stderr');

  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve(exitInfo);
    });
  });
  const output = () => lines.map((l) => `${l.stream === 'stderr' ? '! ' : '  '}${l.text}`).join('\n');

  return {
    pid: child.pid,
    child,
    lines,
    exited,
    get running() {
      return exitInfo === undefined;
    },
    async waitForLine(match, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const line = lines.find(match);
        if (line !== undefined) return line;
        if (exitInfo !== undefined) {
          throw new Error(
            `docgen ${args.join(' ')} exited (code ${exitInfo.code}, signal ${exitInfo.signal}) without the awaited line; output:\n${output().slice(-4_000)}`,
          );
        }
        if (Date.now() >= deadline) {
          throw new Error(
            `docgen ${args.join(' ')} did not print the awaited line within ${timeoutMs} ms; output:\n${output().slice(-4_000)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    kill: (signal = 'SIGTERM') => {
      if (exitInfo === undefined) child.kill(signal);
    },
    async stop(timeoutMs = 10_000) {
      if (exitInfo !== undefined) return exitInfo;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
    output,
  };
}
