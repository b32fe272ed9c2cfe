// Finds live processes that belong to a test run, by reading /proc (Linux).
import { readdirSync, readFileSync } from 'node:fs';

/** Where global-setup.ts publishes the run directory to the test workers. */
export const RUN_DIR_ENV = 'DOCGEN_TEST_RUN_DIR';

/** Set by the harness in the environment of every process it spawns. */
export const SPAWNED_BY_ENV = 'DOCGEN_TEST_SPAWNED_BY';

export interface RunDirProcess {
  pid: number;
  commandLine: string;
  reason: 'command line' | 'environment';
}

function readProcFile(pid: number, name: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'latin1');
  } catch {
    return undefined; // gone, or not ours to read
  }
}

function ancestorsOfSelf(): Set<number> {
  const pids = new Set<number>([process.pid]);
  let pid = process.pid;
  for (let depth = 0; depth < 64 && pid > 1; depth++) {
    const stat = readProcFile(pid, 'stat');
    // "pid (comm) state ppid …"; comm may contain spaces and parentheses.
    const ppid = stat === undefined ? NaN : Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!Number.isInteger(ppid)) break;
    pid = ppid;
    pids.add(pid);
  }
  return pids;
}

export function findRunDirProcesses(runDir: string): RunDirProcess[] {
  const exclude = ancestorsOfSelf();
  const marker = `${SPAWNED_BY_ENV}=${runDir}\0`;
  const found: RunDirProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (exclude.has(pid)) continue;
    const cmdline = readProcFile(pid, 'cmdline');
    // Zombies and kernel threads have an empty command line: nothing left to kill.
    if (cmdline === undefined || cmdline === '') continue;
    const commandLine = cmdline.replace(/\0+$/, '').replace(/\0/g, ' ');
    if (cmdline.includes(runDir)) {
      found.push({ pid, commandLine, reason: 'command line' });
      continue;
    }
    const environ = readProcFile(pid, 'environ');
    if (environ !== undefined && `${environ}\0`.includes(marker))
      found.push({ pid, commandLine, reason: 'environment' });
  }
  return found;
}
