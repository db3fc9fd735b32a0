// Vitest global setup: one private directory per test run holds every test server's files,
// so whatever a crashed or careless test leaves behind is found and stopped at the end.
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from './run-root.js';

// Runs once in the main vitest process before any worker starts; workers inherit the variable.
export default function setup(): () => Promise<void> {
  const root = makeRunRoot();
  process.env[RUN_ROOT_VAR] = root;
  return async () => {
    const found = await sweepRunRoot(root);
    if (found.length > 0) {
      process.stderr.write(`tmux test harness: cleaned up after tests that did not:\n  ${found.join('\n  ')}\n`);
    }
  };
}
