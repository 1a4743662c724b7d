import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: files run in parallel, each in its own database on one embedded server.
    maxWorkers: 2,
    fileParallelism: true,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
