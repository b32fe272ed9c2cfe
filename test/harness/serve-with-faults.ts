// `docgen serve` with a fault injected through the composition root, for crash tests. Run as
// `node test/harness/serve-with-faults.ts <fault> serve --role …` (spawnDocgen's `fault`
// option does this). Production code knows nothing of these faults.
import { runServe, type ServeHooks } from '../../src/cli/serve-command.ts';

export const FAULTS = {
  /** SIGKILL right after a generation's database write, before its render job is published. */
  'exit-after-generation-insert': { afterGenerationInsert: () => process.kill(process.pid, 'SIGKILL') },
  /** SIGKILL right after a batch row's database write, before any of its items. */
  'exit-after-batch-insert': { afterBatchInsert: () => process.kill(process.pid, 'SIGKILL') },
} satisfies Record<string, ServeHooks>;

export type Fault = keyof typeof FAULTS;

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const [fault, command, ...argv] = process.argv.slice(2);
  if (!Object.hasOwn(FAULTS, fault ?? '') || command !== 'serve') {
    process.stderr.write(`usage: serve-with-faults.ts ${Object.keys(FAULTS).join('|')} serve --role ROLE\n`);
    process.exit(2);
  }
  const code = await runServe(argv, FAULTS[fault as Fault]);
  if (code !== -1) process.exitCode = code;
}
