// A helper started again for a dormant enrollment (helper/dormancy.ts): the shell starts it from
// its own side (shell/tmux-run.zsh _tmux_run_wake, and the bash and fish ones) with
// TMUX_RUN_WAKE=ENROLLMENT in its environment (never argv). It takes the enrollment's record as it
// is, generations and secret unchanged, after checking that it is this very shell's, pane's and
// channel's, and dormant; then it serves as the first helper did, under its own pid.
import { readRecord, type EnrollmentRecord } from '../src/core/enrollment/record.js';
import { recordPath } from '../src/core/enrollment/layout.js';
import { readStatus } from '../src/core/enrollment/pane-status.js';
import { procStat } from '../src/core/os/proc.js';
import { BUILD_ID } from '../src/core/protocol/build.js';
import type { Args, Ending, Place } from './start.js';

/** The enrollment a woken helper serves (and forgets the variable, which is the helper's only). */
export function wakeEnrollment(): string | undefined {
  const id = process.env.TMUX_RUN_WAKE;
  delete process.env.TMUX_RUN_WAKE;
  return id !== undefined && /^[a-f0-9]{32}$/.test(id) ? id : undefined;
}

/** The dormant enrollment's record, now naming this helper, and its secret; `fail` says why not. */
export function wakeRecord(
  args: Args,
  place: Place,
  enrollment: string,
  fail: Ending['fail'],
): { record: EnrollmentRecord; secret: Buffer } {
  let rec: EnrollmentRecord;
  try {
    rec = readRecord(recordPath(place.dir, enrollment));
  } catch {
    return fail('the enrollment is gone (revoked, or its files were removed)');
  }
  const mismatch =
    rec.enrollment_generation !== enrollment ||
    rec.channel !== args.base ||
    rec.pane_id !== place.paneId ||
    rec.shell_pid !== args.shellPid ||
    rec.shell_start !== place.shellStat.startTicks ||
    rec.tmux_server_pid !== place.serverPid ||
    rec.tmux_socket !== place.tmuxSocket ||
    rec.shell_tty !== place.shellTty;
  if (mismatch) fail("the enrollment's record does not describe this shell, pane and channel");
  if (rec.build !== BUILD_ID) fail(`the enrollment was made by another build of tmux-run (${rec.build ?? 'older'})`);
  const status = readStatus(place.dir, rec);
  const previous = procStat(rec.helper_pid);
  const stillThere = previous !== undefined && previous.state !== 'Z' && previous.startTicks === status?.helper_start;
  if (status?.dormant !== true || stillThere) fail('the enrollment is not dormant (another helper serves it)');
  return { record: { ...rec, helper_pid: process.pid }, secret: Buffer.from(rec.secret, 'hex') };
}
