// `npm run bench -- --json` as a user runs it, shortened: one JSON object on stdout with every
// row, and a baseline that cannot even start keeps its row with the error while the run goes on
// to measure docgen end to end.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { chromiumPath, uniqueRunDir } from '../harness/dependencies.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Runs the bench; rejects with its stderr when it exits other than 0. */
function runBench(env: Record<string, string>): Promise<{ stdout: string }> {
  return promisify(execFile)(
    process.execPath,
    [join(REPO_ROOT, 'bench', 'render-bench.ts'), '--json', '--concurrency=1'],
    {
      env: { ...process.env, ...env },
      maxBuffer: 16 * 1024 * 1024,
    },
  );
}

describe('npm run bench -- --json', () => {
  it('prints one JSON object with every row; a baseline that fails keeps its row with the error and the run goes on', async () => {
    const missing = join(uniqueRunDir('bench-run'), 'no-such-chromium');
    const { stdout } = await runBench({
      BENCH_VARIANTS: 'a,d',
      BENCH_BASELINE_CHROMIUM: missing,
      BENCH_GROWTH: '0',
      BENCH_ROUNDS: '1',
      BENCH_RENDERS: '3',
      DOCGEN_CHROMIUM_PATH: chromiumPath(),
    });
    const result = JSON.parse(stdout) as {
      benchmark: string;
      rows: {
        variant: string;
        concurrency: number;
        completed: number;
        errors: number;
        errorMessage: string | null;
        pdfPerSecond: number;
        p50Ms: number | null;
        stagesMs?: Record<string, number>;
      }[];
    };
    expect(result.benchmark).toBe('render');
    const baseline = result.rows.find((r) => r.variant.startsWith('(a)'));
    expect(baseline).toMatchObject({ concurrency: 1, completed: 0, errors: 1, pdfPerSecond: 0, p50Ms: null });
    expect(baseline!.errorMessage).toContain(missing);
    const docgen = result.rows.find((r) => r.variant === 'docgen end to end');
    expect(docgen).toMatchObject({ concurrency: 1, errors: 0, errorMessage: null });
    expect(docgen!.completed).toBeGreaterThan(0);
    expect(docgen!.p50Ms).toBeGreaterThan(0);
    expect(docgen!.stagesMs?.print).toBeGreaterThan(0);
  }, 180_000);
});
