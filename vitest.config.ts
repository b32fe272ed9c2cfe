import { defineConfig } from 'vitest/config';

// Integration tests start real dependencies (nats-server, the MongoDB stand-in, an S3
// server, Chromium); on a 2-core machine a few files at a time is the sweet spot.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/harness/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    reporters: ['default'],
  },
});
