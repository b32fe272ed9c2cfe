// Chromium profile (--user-data-dir) directories, named after the process that owns them so
// that a process starting later can tell a dead owner's leftovers from a live one's:
//   docgen-chromium-<owner pid>-<owner start token>-<random>
// The start token is the owner's start time as the kernel records it (/proc/<pid>/stat), so
// a pid reused by an unrelated process does not keep a dead owner's directory alive, and a
// live owner's directory is never removed. A SIGKILLed render process cannot clean up after
// itself; the next one to start on the same temp directory does (removeStaleProfileDirs).
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const PROFILE_DIR_PREFIX = 'docgen-chromium-';

/** The kernel's start time of a process (clock ticks since boot), or undefined when it does not exist. */
export function processStartToken(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces): state is field 3, starttime field 22.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

let ownToken: string | undefined;
function ownStartToken(): string {
  // Where /proc is missing the token is a constant: liveness then rests on the pid alone.
  ownToken ??= processStartToken(process.pid) ?? '0';
  return ownToken;
}

/** Creates a profile directory owned by this process under tmpDir. */
export function createProfileDir(tmpDir: string): Promise<string> {
  return mkdtemp(join(tmpDir, `${PROFILE_DIR_PREFIX}${process.pid}-${ownStartToken()}-`));
}

/** The owner a profile directory's name records, or undefined for a name of another form. */
export function profileDirOwner(name: string): { pid: number; token: string } | undefined {
  const match = new RegExp(`^${PROFILE_DIR_PREFIX}(\\d+)-(\\d+)-[^-]+$`).exec(name);
  if (!match) return undefined;
  return { pid: Number(match[1]), token: match[2]! };
}

function ownerIsAlive(owner: { pid: number; token: string }): boolean {
  if (!isAlive(owner.pid)) return false;
  const token = processStartToken(owner.pid);
  // Unknown (no /proc): assume the pid is still its owner. Known and different: pid reused.
  return token === undefined || owner.token === '0' || token === owner.token;
}

/**
 * Removes the profile directories under tmpDir whose owner process is gone. Directories of
 * live processes (this one included) and entries of any other name are left alone. Returns
 * the names removed.
 */
export async function removeStaleProfileDirs(tmpDir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(tmpDir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const owner = profileDirOwner(name);
    if (!owner || ownerIsAlive(owner)) continue;
    try {
      await rm(join(tmpDir, name), { recursive: true, force: true, maxRetries: 3 });
      removed.push(name);
    } catch {
      // another process removed it first, or it is not ours to remove: leave it
    }
  }
  return removed;
}
