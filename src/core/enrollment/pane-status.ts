// The pane's status as its helper publishes it in the registry (`ENROLLMENT.status`, 0600, written
// whole and renamed into place): which process the helper is (pid and start time), whether a run
// is executing or awaiting the person's approval, and how many wait. A listing answers from it
// (src/broker/registry.ts) instead of asking every helper, so listing 20 panes costs what listing
// one does; what only the shell knows (busy, cwd, modes) is read from /proc and the channel.
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { writeWhole, type EnrollmentRecord } from './record.js';
import { statusPath, statusTmpPath } from './layout.js';

export interface PaneStatus {
  version: 1;
  /** The listed generation of the enrollment it describes. */
  generation: string;
  helper_pid: number;
  /** The helper's start time (/proc/PID/stat field 22): a reused pid is another process. */
  helper_start: string;
  /** The pane's current run: executing, or waiting for the person's answer; null when none. */
  run: 'running' | 'awaiting_approval' | null;
  /** Runs waiting in the pane's queue. */
  queued: number;
  /** Runs this helper admitted since it started (absent: none); a broker releases the calls that waited for a wake in order by it. */
  admitted?: number;
  /** Why the screen check cannot serve the shell's prompt, once the helper found it (helper/shell/screen/prompt-probe.ts). */
  prompt_refused?: string;
  /** The helper's idle time as it took TMUX_RUN_IDLE (`10m`), or `never` (`off`): listings show it as `sleeps_after`. */
  sleeps_after?: string;
  /**
   * The helper let itself go, idle (helper/dormancy.ts): the pane stays enrolled, and the next call
   * that needs it has the shell start it again (src/broker/wake.ts). Written last, before it exits.
   */
  dormant?: true;
  /** With `dormant`: the shell's program image then (src/core/os/proc.ts): another one means the shell ran `exec`. */
  shell_image?: string;
}

/** Writes the status 0600 under a temporary name, then renames it into place. */
export function writeStatus(dir: string, enrollment: string, status: PaneStatus): void {
  writeWhole(
    statusTmpPath(dir, enrollment),
    statusPath(dir, enrollment),
    JSON.stringify(status) + '\n',
    constants.O_TRUNC,
  );
}

/** Checks the parsed file's shape (pure); undefined when it is not a status of this version. */
export function parseStatus(data: unknown): PaneStatus | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const s = data as Record<string, unknown>;
  const ok =
    s.version === 1 &&
    typeof s.generation === 'string' &&
    Number.isSafeInteger(s.helper_pid) &&
    (s.helper_pid as number) > 0 &&
    typeof s.helper_start === 'string' &&
    /^[0-9]+$/.test(s.helper_start) &&
    (s.run === null || s.run === 'running' || s.run === 'awaiting_approval') &&
    Number.isSafeInteger(s.queued) &&
    (s.queued as number) >= 0 &&
    (s.prompt_refused === undefined || (typeof s.prompt_refused === 'string' && s.prompt_refused.length <= 2000)) &&
    (s.sleeps_after === undefined || (typeof s.sleeps_after === 'string' && s.sleeps_after.length <= 16)) &&
    (s.admitted === undefined || (Number.isSafeInteger(s.admitted) && (s.admitted as number) >= 0)) &&
    (s.dormant === undefined || (s.dormant === true && typeof s.shell_image === 'string')) &&
    (s.shell_image === undefined || (typeof s.shell_image === 'string' && s.shell_image.length <= 64));
  return ok ? (s as unknown as PaneStatus) : undefined;
}

/**
 * The status of `rec`'s enrollment, when its file is a regular file of this user that no one else
 * can read or write (like a record) and describes that very enrollment and helper; else undefined.
 */
export function readStatus(dir: string, rec: EnrollmentRecord): PaneStatus | undefined {
  let fd: number;
  try {
    fd = openSync(
      statusPath(dir, rec.enrollment_generation),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    const uid = process.getuid?.();
    if (!st.isFile() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) return undefined;
    const status = parseStatus(JSON.parse(readFileSync(fd, 'utf8')));
    return status?.generation === rec.generation && status.helper_pid === rec.helper_pid ? status : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
