// The orphan sweep an enrolled shell starts when its precmd hook finds the helper gone
// (shell/tmux-run.zsh, _tmux_run_lost): the broker's own code (orphans.ts, through
// removeEnrollmentFiles) for that one enrollment, so that the runs the dead helper held are stopped
// within one prompt and audited `helper_lost` (by: shell), then the enrollment's files go.
//
//   node dist/src/broker/shell-sweep-main.js DIR ENROLLMENT     (started detached by the snippet)
//
// It acts only on a record of the shell that started it (its parent) whose helper is dead.
import { checkRegistryDir, recordPath } from '../core/enrollment/layout.js';
import { readRecord, type EnrollmentRecord } from '../core/enrollment/record.js';
import { helperAlive, reapDeadHelper, type Reaped } from './orphans.js';
import { removeEnrollmentFiles } from './registry.js';

/** What one sweep did: `swept` (with the runs it stopped), or why it did nothing. */
export type SweepResult =
  { kind: 'swept'; reaped: Reaped[] } | { kind: 'nothing'; why: 'no_record' | 'not_this_shell' | 'helper_alive' };

/** Sweeps up after the dead helper of enrollment `enrollment` in `dir`, for the shell `shellPid`. */
export function sweepEnrollment(dir: string, enrollment: string, shellPid: number): SweepResult {
  checkRegistryDir(dir);
  let rec: EnrollmentRecord;
  try {
    rec = readRecord(recordPath(dir, enrollment));
  } catch {
    return { kind: 'nothing', why: 'no_record' }; // swept already (the broker or the CLI was first)
  }
  if (rec.enrollment_generation !== enrollment || rec.shell_pid !== shellPid)
    return { kind: 'nothing', why: 'not_this_shell' };
  if (helperAlive(rec)) return { kind: 'nothing', why: 'helper_alive' };
  const reaped = reapDeadHelper(dir, rec, 'shell');
  removeEnrollmentFiles(dir, rec, new Set(), 'shell');
  return { kind: 'swept', reaped };
}
