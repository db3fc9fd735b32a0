// A dormant enrollment (helper/dormancy.ts): its status says `dormant`, its helper is gone, its
// shell keeps its side of the channel. What a listing, a broker and the CLI share about it: is it
// dormant, is its shell still the one, and how the shell is asked (U: start the helper again; X:
// the enrollment was revoked), through the channel it already answers: zsh reads a line from its
// request FIFO in its line editor's handler (shell/tmux-run.zsh), bash and fish read BASE.wake in
// their WINCH handler. Nothing is typed into the pane.
import { closeSync, constants, fstatSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { CHANNEL } from './layout.js';
import type { EnrollmentRecord } from './record.js';
import type { PaneStatus } from './pane-status.js';
import type { ProcStat } from '../os/proc.js';

/** The status names a dormant enrollment (its helper may still be exiting). */
export const isDormant = (s: PaneStatus | undefined): s is PaneStatus & { dormant: true; shell_image: string } =>
  s?.dormant === true && typeof s.shell_image === 'string';

/** The dormant status's helper process is gone: a listed pid that is not that process any more counts as gone (pure). */
export const dormantHelperGone = (s: PaneStatus, helper: ProcStat | undefined): boolean =>
  helper === undefined || 'ZX'.includes(helper.state) || helper.startTicks !== s.helper_start;

/**
 * What became of a dormant enrollment's shell (pure): `same` (the very process and program that
 * enrolled), `replaced` (the same process ran `exec`: a new shell, which the enrollment is not
 * woken into), `gone`.
 */
export function dormantShell(
  rec: Pick<EnrollmentRecord, 'shell_start'>,
  s: PaneStatus,
  shell: ProcStat | undefined,
): 'same' | 'replaced' | 'gone' {
  if (!shell || 'ZX'.includes(shell.state) || shell.startTicks !== rec.shell_start) return 'gone';
  return shell.image === s.shell_image ? 'same' : 'replaced';
}

/**
 * Asks a dormant enrollment's shell: `U` (start the helper again) or `X` (the enrollment was
 * revoked). zsh: one line into its request FIFO, opened without blocking (no reader: the shell
 * does not hold its channel any more, so false). bash, fish: BASE.wake (0600), then SIGWINCH.
 * Only a channel inside the registry `dir`. False when the shell cannot be asked.
 */
export function askShell(dir: string, rec: EnrollmentRecord, what: 'U' | 'X'): boolean {
  if (dirname(rec.channel) !== dir) return false;
  if ((rec.shell ?? 'zsh') === 'zsh') return writeFifoLine(rec.channel + CHANNEL.request, what);
  // Written in place (two bytes: a reader sees all or nothing, and an empty file is no request).
  try {
    const fd = openSync(
      rec.channel + CHANNEL.wake,
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      writeSync(fd, `${what}\n`);
    } finally {
      closeSync(fd);
    }
    process.kill(rec.shell_pid, 'SIGWINCH');
    return true;
  } catch {
    return false;
  }
}

function writeFifoLine(path: string, line: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return false; // ENXIO: nobody reads it; ENOENT: gone
  }
  try {
    if (!fstatSync(fd).isFIFO()) return false;
    writeSync(fd, `${line}\n`);
    return true;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}
