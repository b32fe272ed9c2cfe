// Runs once per `vitest run`, around all test files.
//
// setup: creates the run directory every test puts its temporary data under (nats stores,
// database snapshots, S3 objects, Chromium profiles, spawned docgen processes' TMPDIR) and
// publishes it to the test workers as DOCGEN_TEST_RUN_DIR; their TMPDIR points into it too.
// teardown: every process the tests started is findable through that directory: its command
// line mentions it (nats-server -sd, chromium --user-data-dir) or it was spawned by the
// harness with DOCGEN_TEST_SPAWNED_BY=<run dir> in its environment (docgen and whatever it
// starts inherits it). Any such process still alive means a test leaked it: kill them all
// and fail the run.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { findRunDirProcesses, RUN_DIR_ENV, SPAWNED_BY_ENV } from './run-dir-processes.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    docgenTestRunDir: string;
  }
}

export default function setup(project: TestProject): () => Promise<void> {
  const runDir = mkdtempSync(join(tmpdir(), 'docgen-test-'));
  process.env[RUN_DIR_ENV] = runDir;
  // Workers inherit this: temporary files of tests and libraries (Chromium profiles that
  // puppeteer creates itself, say) land in the run directory too, and so can be found.
  const workerTmp = join(runDir, 'tmp');
  mkdirSync(workerTmp);
  const originalTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = workerTmp;
  project.provide('docgenTestRunDir', runDir);

  return async function teardown(): Promise<void> {
    if (originalTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = originalTmpdir;
    // Processes told to stop just before teardown may still be on their way out.
    let leaked = findRunDirProcesses(runDir);
    for (let waited = 0; leaked.length > 0 && waited < 3_000; waited += 250) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      leaked = findRunDirProcesses(runDir);
    }
    if (leaked.length > 0) {
      for (const p of leaked) {
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      const list = leaked.map((p) => `  pid ${p.pid} (${p.reason}): ${p.commandLine.slice(0, 300)}`).join('\n');
      // Keep the run directory: it holds the leaked processes' data and logs.
      throw new Error(
        `Tests left ${leaked.length} process(es) running (killed now). A test started them and did not stop them ` +
          `(${SPAWNED_BY_ENV} or command line points at ${runDir}):\n${list}`,
      );
    }
    if (process.env.DOCGEN_TEST_KEEP_RUN_DIR !== '1') rmSync(runDir, { recursive: true, force: true });
  };
}
