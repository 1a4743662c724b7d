import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Files run in parallel, each in its own database on one embedded server. Three on two cores: a file
    // waits much of its time on PostgreSQL and on the binary it started, and a third file uses those waits
    // (docs/testing.md: 0.85 of the wall of two, 1.03 of the CPU). `--maxWorkers=2` on the command line for two.
    maxWorkers: 3,
    fileParallelism: true,
    reporters: ['default', './test/support/summary-reporter.ts'],
    // Each file runs in a fresh worker that imports its modules again (about 0.5 s a file, 250 files): with
    // the transformed modules kept on disk a worker reads them there instead of asking the main process for
    // each one. Keyed by each file's content, so an edit is never served stale (docs/testing.md).
    experimental: { fsModuleCache: true },
  },
});
