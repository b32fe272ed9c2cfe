// A `nats-server -js` child process on 127.0.0.1, for `docgen dev` and the tests.
//
// The child must not outlive us. Two guards, because Node cannot ask Linux to signal a child
// when its parent dies (no prctl(PR_SET_PDEATHSIG)):
//  - on process 'exit' (normal end, process.exit, uncaught exception) live children get SIGKILL;
//  - a tiny shell watchdog polls once a second whether this process is still alive and sends
//    the server SIGTERM when it is not, which covers SIGKILL of this process.
// Limits: a server can outlive a SIGKILLed parent by up to about a second, and if the watchdog
// itself is SIGKILLed along with us (e.g. the whole process group), only the group signal
// reaches the server. A parent that dies of an unhandled signal (default SIGTERM/SIGINT action)
// skips 'exit' handlers, so callers install signal handlers that call stop() (docgen dev does).
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants, mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join } from 'node:path';
import { freePort } from './free-port.ts';

export interface EmbeddedNatsOptions {
  /** JetStream store directory (created if missing); keep it to keep the streams across restarts. */
  storeDir: string;
  /** TCP port; 0 or absent picks a free one (kept across restart()). */
  port?: number;
  /** nats-server executable; default: `nats-server` on PATH or in /usr/sbin, /usr/local/bin. */
  binary?: string;
  /** Time allowed for the server to report it is ready. Default 15 s. */
  startTimeoutMs?: number;
  /** Receives each line the server logs. */
  onLog?: (line: string) => void;
  /** Start the watchdog that stops the server if this process is killed. Default true. */
  watchParent?: boolean;
}

export interface EmbeddedNats {
  /** nats://127.0.0.1:PORT */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly storeDir: string;
  /** pid of the running server; undefined while stopped. */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** SIGTERM, then SIGKILL if it has not exited after timeoutMs (default 5000); resolves once it exited. */
  stop(timeoutMs?: number): Promise<void>;
  /** Sends a signal (default SIGKILL) and resolves once the server exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Stops the server (if running) and starts it again on the same port with the same store. */
  restart(): Promise<void>;
  /** The last lines the server logged (for error messages). */
  recentLog(): string[];
}

const HOST = '127.0.0.1';
const LOG_LINES_KEPT = 200;
const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of liveChildren) child.kill('SIGKILL');
  });
}

/** Finds nats-server: PATH first, then where Debian and manual installs put it. */
export function findNatsServer(): string {
  const dirs = [
    ...(process.env.PATH ?? '').split(delimiter),
    '/usr/sbin',
    '/usr/local/sbin',
    '/usr/local/bin',
    '/usr/bin',
  ];
  for (const dir of dirs) {
    if (dir === '') continue;
    const candidate = join(dir, 'nats-server');
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(
    'nats-server was not found on PATH or in /usr/sbin. Install it (Debian: `apt-get install nats-server`, or run the setup script).',
  );
}

// Polls the parent and the server; when the parent is gone, asks the server to stop, then forces it.
const WATCHDOG_SCRIPT =
  'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done; ' +
  'kill -TERM "$2" 2>/dev/null || exit 0; ' +
  'i=0; while kill -0 "$2" 2>/dev/null && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i+1)); done; ' +
  'kill -KILL "$2" 2>/dev/null; exit 0';

function startWatchdog(serverPid: number): ChildProcess {
  const watchdog = spawn(
    '/bin/sh',
    ['-c', WATCHDOG_SCRIPT, 'docgen-nats-watchdog', String(process.pid), String(serverPid)],
    {
      stdio: 'ignore',
      detached: true, // its own process group: a Ctrl-C meant for us must not take the watchdog first
    },
  );
  watchdog.unref();
  watchdog.on('error', () => {});
  return watchdog;
}

function exitOf(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startEmbeddedNats(options: EmbeddedNatsOptions): Promise<EmbeddedNats> {
  installExitHook();
  const binary = options.binary ?? findNatsServer();
  const startTimeoutMs = options.startTimeoutMs ?? 15_000;
  const storeDir = options.storeDir;
  mkdirSync(storeDir, { recursive: true });
  const log: string[] = [];
  let port = options.port !== undefined && options.port !== 0 ? options.port : await freePort(HOST);
  let child: ChildProcess | undefined;
  let watchdog: ChildProcess | undefined;

  const remember = (line: string) => {
    log.push(line);
    if (log.length > LOG_LINES_KEPT) log.shift();
    options.onLog?.(line);
  };

  const launch = async (): Promise<void> => {
    const proc = spawn(binary, ['-js', '-sd', storeDir, '-a', HOST, '-p', String(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    liveChildren.add(proc);
    let ready = false;
    let onReady: () => void = () => {};
    const readyLine = new Promise<void>((resolve) => {
      onReady = resolve;
    });
    let partial = '';
    const onData = (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        remember(line);
        if (!ready && line.includes('Server is ready')) {
          ready = true;
          onReady();
        }
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', () => {
      liveChildren.delete(proc);
      // Also when it dies on its own: `running` must tell the truth.
      if (child === proc) child = undefined;
    });
    // 'close' comes after 'exit' once stdout and stderr are drained: the log that says why
    // the server stopped is complete by then.
    const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      proc.once('close', (code, signal) => resolve({ code, signal }));
    });
    const spawnError = new Promise<Error>((resolve) => proc.once('error', resolve));

    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      readyLine.then(() => 'ready' as const),
      closed.then((e) => `exited (code ${e.code}, signal ${e.signal})`),
      spawnError.then((e) => `could not be started: ${e.message}`),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`did not become ready within ${startTimeoutMs} ms`), startTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (outcome === 'ready' && (await canConnect(port))) {
      if (options.watchParent !== false && proc.pid !== undefined) watchdog = startWatchdog(proc.pid);
      return;
    }
    liveChildren.delete(proc);
    // Without a pid it never ran (binary missing), and there is no exit to wait for.
    if (proc.pid !== undefined) {
      proc.kill('SIGKILL');
      await exitOf(proc);
    }
    child = undefined;
    throw new Error(
      `nats-server on ${HOST}:${port} (store ${storeDir}) ${outcome === 'ready' ? 'does not accept connections' : outcome}. ` +
        `Last log lines:\n${log.slice(-15).join('\n')}`,
    );
  };

  const stopWatchdog = () => {
    if (watchdog !== undefined && watchdog.exitCode === null && watchdog.signalCode === null) watchdog.kill('SIGKILL');
    watchdog = undefined;
  };

  const stop = async (timeoutMs = 5000): Promise<void> => {
    const proc = child;
    if (proc === undefined) return;
    const exited = exitOf(proc);
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    await exited;
    clearTimeout(timer);
    stopWatchdog();
    if (child === proc) child = undefined;
  };

  const kill = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    const proc = child;
    if (proc === undefined) return;
    const exited = exitOf(proc);
    proc.kill(signal);
    await exited;
    stopWatchdog();
    if (child === proc) child = undefined;
  };

  // A port picked for us can be taken between picking and binding: retry with another.
  for (let attempt = 1; ; attempt++) {
    try {
      await launch();
      break;
    } catch (err) {
      const portTaken = log.some((line) => line.includes('address already in use'));
      if (!portTaken || options.port || attempt >= 3) throw err;
      port = await freePort(HOST);
    }
  }

  return {
    get url() {
      return `nats://${HOST}:${port}`;
    },
    host: HOST,
    get port() {
      return port;
    },
    storeDir,
    get pid() {
      return child?.pid;
    },
    get running() {
      return child !== undefined;
    },
    stop,
    kill,
    async restart() {
      await stop();
      await launch();
    },
    recentLog: () => [...log],
  };
}
