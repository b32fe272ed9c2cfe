import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Tests that compare throughput with a baseline taken in the same run: alone on the machine,
// after all the others. On 2 cores a neighbouring file's Chromium takes what they measure (the
// fair-share scenario's fleet ratio was 0.78–0.99 beside other files in CI, 0.94–1.03 alone).
const MEASURED = ['test/e2e/fair-share.test.ts'];

// Integration tests start real dependencies (nats-server, the MongoDB stand-in, an S3
// server, Chromium); on a 2-core machine a few files at a time is the sweet spot.
export default defineConfig({
  // The portal's import names (portal/vite.config.ts), for tests of the portal's own modules.
  resolve: { alias: { '@gen': here('src/gen'), '@domain': here('src/domain') } },
  test: {
    globalSetup: ['test/harness/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        // Fast and in process (eslint.config.js keeps processes and external tools out): a
        // worker runs file after file without reloading modules, which were most of the time.
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false },
      },
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'] } },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], exclude: [...configDefaults.exclude, ...MEASURED] },
      },
      { extends: true, test: { name: 'measured', include: MEASURED, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
