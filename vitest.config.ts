import { defineConfig } from 'vitest/config';

// Two kinds of tests. `unit` (test/unit) starts no tmux and no shell: its files run in parallel
// and finish in seconds. `integration` (every other folder) starts real tmux servers and shells:
// files run in parallel too, but only as many at once as a small (2-core) CI machine can carry
// without starving the shells, and a global setup sweeps up whatever a test run leaves.
export default defineConfig({
  test: {
    // Guards against a hung test, never a claim about speed (that is npm run bench's): generous,
    // since a loaded 2-core machine runs these tests many times slower than a quiet one.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    dangerouslyIgnoreUnhandledErrors: false,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // forks, not threads: the helper service under test spawns its runs with process groups.
          pool: 'forks',
          fileParallelism: true,
          // Unit tests first (seconds), then the integration tests: vitest runs groups in order.
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: ['test/unit/**'],
          globalSetup: ['lab/global-setup.ts'],
          pool: 'forks',
          maxWorkers: 2,
          fileParallelism: true,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
