import { defineConfig } from 'vitest/config';

// Integration tests start real tmux servers and shells: run files in parallel, but only as
// many at once as a small (2-core) CI machine can carry without starving the shells.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    teardownTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    dangerouslyIgnoreUnhandledErrors: false,
  },
});
