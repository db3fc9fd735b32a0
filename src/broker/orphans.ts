// Cleaning up after a helper that died without stopping its runs (SIGKILL): its run journal
// (src/core/enrollment/run-journal.ts) names each run it had started or was about to start; this stops
// every such process group that is still ours, audits `helper_lost`, and removes the journal.
import { remoteProblem } from '../core/enrollment/remote-listing.js';
import { closeSync, constants, fstatSync, openSync, readFileSync, renameSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { AuditLog, auditPath } from '../core/audit/audit-log.js';
import { journalPath, openRuns, type OpenRun } from '../core/enrollment/run-journal.js';
import { removeQuietly, type EnrollmentRecord } from '../core/enrollment/record.js';
import { freshId } from '../core/enrollment/generation.js';
import { groupAlive, procArgv, procStat, sessionLeadersSince } from '../core/os/proc.js';
import { terminateGroup } from '../core/os/process-group.js';

/** Who found the helper dead and swept up after it (the audit entry's `by`). */
export type Sweeper = 'broker' | 'cli' | 'shell';

/** What was done about one run of a dead helper. */
export interface Reaped {
  run_id: string;
  script_digest: string;
  held: boolean;
  /** stopped: its group was signalled; gone: nothing of it was left; not_started: it never ran. */
  action: 'stopped' | 'gone' | 'not_started';
  pgid?: number;
  detail: string;
}

/** The helper of `rec` is running (a zombie, dead but not yet reaped, does not count). */
export function helperAlive(rec: EnrollmentRecord): boolean {
  if (rec.remote) return remoteProblem(rec) === undefined; // a far end's: its ssh session here lives
  const st = procStat(rec.helper_pid);
  return st !== undefined && st.state !== 'Z' && st.ppid === rec.shell_pid;
}

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * The run's `/bin/sh -c SCRIPT`, spawned after the intent was noted but before the helper could
 * note its pid: a session leader of ours, started since, whose script has the digest. (A script
 * that replaced its shell with `exec` no longer shows its text and is not found this way.)
 */
function findSpawned(r: OpenRun): number | undefined {
  if (!r.intent) return undefined;
  for (const st of sessionLeadersSince(r.intent.after_ticks)) {
    const argv = procArgv(st.pid);
    if (argv?.length === 3 && argv[0] === '/bin/sh' && argv[1] === '-c' && sha256(argv[2]!) === r.digest) return st.pid;
  }
  return undefined;
}

function stopRun(r: OpenRun): Omit<Reaped, 'run_id' | 'script_digest' | 'held'> {
  if (r.pgid) {
    const { pgid, start } = r.pgid;
    const leader = procStat(pgid);
    // A pid names our group only while the group exists (the kernel does not reuse a pid that is a
    // live group's id) or while its leader has the start time the helper noted.
    if (leader && leader.startTicks !== start)
      return { action: 'gone', detail: `its process group ${pgid} is gone (the pid now names another process)` };
    if ((leader && leader.state !== 'Z') || groupAlive(pgid)) {
      terminateGroup(pgid);
      return { action: 'stopped', pgid, detail: `stopped its process group ${pgid} (SIGTERM, then SIGKILL)` };
    }
    return { action: 'gone', pgid, detail: `its process group ${pgid} had already ended` };
  }
  if (r.intent) {
    const pid = findSpawned(r);
    if (pid !== undefined) {
      terminateGroup(pid);
      return {
        action: 'stopped',
        pgid: pid,
        detail: `found its /bin/sh (pid ${pid}), spawned just before the helper died, and stopped its process group`,
      };
    }
    return { action: 'gone', detail: 'it was about to start; no process of it was found' };
  }
  return { action: 'not_started', detail: 'it was queued and never started' };
}

/**
 * When the helper of `rec` is dead, stops what its journal says may still run, audits each run as
 * `helper_lost`, and removes the journal. Several callers may find the same dead helper: the one
 * that renames the journal away first does the work. Returns what was done (empty when the helper
 * lives, or when there was nothing to do).
 */
export function reapDeadHelper(
  dir: string,
  rec: EnrollmentRecord,
  by: Sweeper,
  audit: AuditLog = new AuditLog(auditPath()),
): Reaped[] {
  if (helperAlive(rec)) return [];
  const path = journalPath(dir, rec.enrollment_generation);
  const claimed = `${path}.reaping-${freshId().slice(0, 12)}`;
  try {
    renameSync(path, claimed);
  } catch {
    return [];
  }
  let text = '';
  try {
    const fd = openSync(claimed, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const st = fstatSync(fd);
      if (st.isFile() && st.uid === process.getuid?.() && (st.mode & 0o077) === 0 && st.size < 4 * 1024 * 1024)
        text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    /* unreadable: nothing to act on */
  }
  const out: Reaped[] = [];
  for (const r of openRuns(text)) {
    const done = stopRun(r);
    const reaped: Reaped = { run_id: r.run_id, script_digest: r.digest, held: r.held, ...done };
    out.push(reaped);
    audit.tryAppend({
      event: 'end',
      run_id: r.run_id,
      pane_id: rec.pane_id,
      script_digest: r.digest,
      outcome: 'helper_lost',
      by,
      ran: done.action === 'not_started' ? false : done.action === 'stopped' ? true : 'unknown',
      ...(done.pgid !== undefined ? { pgid: done.pgid } : {}),
      detail: `the helper (pid ${rec.helper_pid}) died without reporting the run; tmux-run ${done.detail}`,
    });
  }
  removeQuietly(claimed);
  return out;
}
