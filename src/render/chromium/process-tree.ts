// Chromium is a tree of processes (browser, zygotes, renderers, GPU, network/storage utilities).
// Memory limits and clean-up have to look at the whole tree, which /proc gives us on Linux.

import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** 'Z' for a zombie. */
  state: string;
}

function readStat(pid: number): ProcessInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid, state: rest[0]!, ppid: Number(rest[1]), pgid: Number(rest[2]) };
  } catch {
    return undefined; // gone meanwhile, or no /proc
  }
}

export function listProcesses(): ProcessInfo[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: ProcessInfo[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const info = readStat(Number(name));
    if (info) out.push(info);
  }
  return out;
}

/**
 * The root and every process below it. For a process-group leader (Chromium is spawned
 * detached), also anything still in its group (helpers re-parented to init after the browser
 * died), and nothing at all when the pid no longer leads its group (reused by someone else).
 * Pass rootIsGroupLeader: false for other roots (e.g. this Node process in benchmarks).
 */
export function processTree(
  rootPid: number,
  processes: ProcessInfo[] = listProcesses(),
  options: { rootIsGroupLeader?: boolean } = {},
): number[] {
  const requireLeader = options.rootIsGroupLeader ?? true;
  const children = new Map<number, number[]>();
  for (const p of processes) {
    const list = children.get(p.ppid);
    if (list) list.push(p.pid);
    else children.set(p.ppid, [p.pid]);
  }
  const found = new Set<number>();
  const stack = [rootPid];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (found.has(pid)) continue;
    // A root that is gone, or whose pid now belongs to a process outside its group, has no tree.
    if (pid === rootPid && !processes.some((p) => p.pid === rootPid && (!requireLeader || p.pgid === rootPid)))
      continue;
    found.add(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  // Orphans re-parented to init stay in the browser's process group (it was spawned detached).
  if (requireLeader) for (const p of processes) if (p.pgid === rootPid) found.add(p.pid);
  return [...found];
}

/** Resident memory of one process in bytes: VmRSS from /proc/<pid>/status (0 if gone). */
export function rssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Proportional memory of one process in bytes: Pss from /proc/<pid>/smaps_rollup, which splits
 * pages shared between Chromium's processes instead of counting them once per process.
 * Falls back to RSS where smaps_rollup is not available.
 */
export function pssBytes(pid: number): number {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const match = /^Pss:\s+(\d+)\s+kB/m.exec(rollup);
    if (match) return Number(match[1]) * 1024;
  } catch {
    // fall through
  }
  return rssBytes(pid);
}

/**
 * RSS of the tree, and its PSS only when the RSS sum is above `pssAboveBytes` (PSS is never
 * more than RSS, so below it the PSS cannot be either). Reading smaps_rollup walks each
 * process's page tables: for a browser with 4 pages that was about 30 ms of CPU per
 * measurement, where /proc/<pid>/status costs next to nothing. `pssBytes` is null when skipped.
 */
export function treeRss(
  rootPid: number,
  pssAboveBytes: number,
  processes: ProcessInfo[] = listProcesses(),
): { rssBytes: number; pssBytes: number | null } {
  const pids = processTree(rootPid, processes);
  let rss = 0;
  for (const pid of pids) rss += rssBytes(pid);
  if (rss <= pssAboveBytes) return { rssBytes: rss, pssBytes: null };
  let pss = 0;
  for (const pid of pids) pss += pssBytes(pid);
  return { rssBytes: rss, pssBytes: pss };
}

/** SIGKILLs the process group and any stragglers of the tree; never throws. */
export function killTree(rootPid: number): void {
  const pids = processTree(rootPid);
  try {
    process.kill(-rootPid, 'SIGKILL');
  } catch {
    // group already gone
  }
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Waits until no live process (zombies aside: init reaps those) is left in the group. */
export async function waitForGroupExit(pgid: number, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (!listProcesses().some((p) => p.pgid === pgid && p.state !== 'Z')) return true;
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
