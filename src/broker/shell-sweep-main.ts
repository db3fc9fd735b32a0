// Entry point of the shell's orphan sweep (shell-sweep.ts), started detached by the snippet:
//   node dist/src/broker/shell-sweep-main.js DIR ENROLLMENT
// Its output goes nowhere (the pane has said the helper is gone); the audit trail says what it did.
// Exit status: 0 done (or nothing to do), 1 failed, 2 bad usage.
import { KILL_GRACE_MS } from '../core/os/process-group.js';
import { sweepEnrollment } from './shell-sweep.js';

const [dir, enrollment] = process.argv.slice(2);
if (!dir || !enrollment || !/^[0-9a-f]{32}$/.test(enrollment)) {
  process.stderr.write('usage: shell-sweep-main.js DIR ENROLLMENT (started by shell/tmux-run.zsh)\n');
  process.exit(2);
}
try {
  const r = sweepEnrollment(dir, enrollment, process.ppid);
  // A stopped group gets its grace before the SIGKILL (process-group.ts sends it on exit at the latest).
  if (r.kind === 'swept' && r.reaped.some((x) => x.action === 'stopped'))
    setTimeout(() => process.exit(0), KILL_GRACE_MS + 50);
} catch (e) {
  process.stderr.write(`tmux-run sweep: ${(e as Error).message}\n`);
  process.exit(1);
}
