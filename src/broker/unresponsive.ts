// Which panes' helpers do not answer, as a listing says it (state `unresponsive`, with why): a
// helper whose process is stopped (/proc says so, for anyone who looks), or one this broker found
// silent (it took no request, or answered no ping, within HELPER_TAKE_MS: hung, or starved). A
// helper noted silent is pinged again every HELPER_TAKE_MS in the background until it answers (the
// note is then dropped) or is gone, so a listing never waits on a helper. docs/tools.md.
import type { EnrollmentRecord } from '../core/enrollment/record.js';
import { HELPER_TAKE_MS } from '../core/protocol/limits.js';
import { procStat, type ProcStat } from '../core/os/proc.js';
import { askOver, connectHelper } from './helper-client.js';
import { remoteProblem } from '../core/enrollment/remote-listing.js';

/** Helpers found silent, by enrollment: the helper process and since when. */
const noted = new Map<string, { pid: number; since: number; probing: boolean }>();

/**
 * The helper process of `rec` as /proc has it now (undefined when it is not that shell's child, or
 * dead; always for a far end's helper, whose pid names nothing on this host).
 */
const helperOf = (rec: EnrollmentRecord): ProcStat | undefined => {
  if (rec.remote) return undefined;
  const st = procStat(rec.helper_pid);
  return st && st.ppid === rec.shell_pid && !'ZX'.includes(st.state) ? st : undefined;
};

/** Whether the helper of `rec` is still there to wait on: its process here, or for a far end's, its ssh session. */
export const helperPresent = (rec: EnrollmentRecord): boolean =>
  rec.remote ? remoteProblem(rec) === undefined : helperOf(rec) !== undefined;

/** Why a helper (its /proc stat as read) answers nothing when its process is stopped; undefined otherwise. */
export const stoppedWhy = (pid: number, st: ProcStat | undefined, who = 'its helper'): string | undefined =>
  st && 'Tt'.includes(st.state)
    ? `${who} (pid ${pid}) is stopped (SIGSTOP, a debugger or job control): it answers nothing until it is continued (kill -CONT ${pid})`
    : undefined;

/** Why the helper of `rec` does not answer, as a caller told of "the helper of pane P" reads it: stopped, or alive but silent. */
export function silenceWhy(
  rec: EnrollmentRecord,
  st: ProcStat | undefined = helperOf(rec),
  who = 'its process',
): string {
  if (rec.remote)
    return `the far end's helper (pid ${rec.helper_pid} on ${rec.remote.hostname}) did not answer within ${HELPER_TAKE_MS / 1000} s through the ssh session (a stalled link, or a hung or busy far end)`;
  return (
    stoppedWhy(rec.helper_pid, st, who) ??
    `${who} (pid ${rec.helper_pid}) is alive but did not answer within ${HELPER_TAKE_MS / 1000} s (hung, or starved of CPU)`
  );
}

/**
 * Why the helper of `rec` is listed unresponsive: stopped (`st`, its stat as the listing read it),
 * or noted silent by this broker; undefined when neither.
 */
export function unresponsiveWhy(rec: EnrollmentRecord, st: ProcStat | undefined): string | undefined {
  const stopped = stoppedWhy(rec.helper_pid, st);
  if (stopped) return stopped;
  const n = noted.get(rec.enrollment_generation);
  if (!n || n.pid !== rec.helper_pid) return undefined;
  return `its helper (pid ${rec.helper_pid}) has not answered since ${new Date(n.since).toISOString()} (it took no request within ${HELPER_TAKE_MS / 1000} s: hung, or starved of CPU)`;
}

/** The helper of `rec` answered: it is not noted silent any more. */
export function noteAnswered(rec: EnrollmentRecord): void {
  const n = noted.get(rec.enrollment_generation);
  if (n?.pid === rec.helper_pid) noted.delete(rec.enrollment_generation);
}

/** The helper of `rec`, at `socket`, did not answer in time: noted, and pinged until it does (or is gone). */
export function noteSilent(rec: EnrollmentRecord, socket: string): void {
  if (!helperPresent(rec)) return;
  const key = rec.enrollment_generation;
  const n = noted.get(key);
  if (n?.pid === rec.helper_pid) return;
  const entry = { pid: rec.helper_pid, since: Date.now(), probing: true };
  noted.set(key, entry);
  const probe = (): void => {
    const timer = setTimeout(() => {
      if (noted.get(key) !== entry) return;
      if (!helperPresent(rec)) return void noted.delete(key);
      void answers(socket).then((ok) => {
        if (noted.get(key) !== entry) return;
        if (ok) noted.delete(key);
        else probe();
      });
    }, HELPER_TAKE_MS);
    timer.unref();
  };
  probe();
}

/** Whether the helper at `socket` answers a ping within HELPER_TAKE_MS (the probe's link keeps no process alive). */
async function answers(socket: string): Promise<boolean> {
  let t;
  try {
    t = await connectHelper(socket, HELPER_TAKE_MS);
  } catch {
    return false;
  }
  t.hold?.(false);
  const pong = await askOver(t, { type: 'ping' }, (r) => (r.type === 'pong' ? r : undefined), HELPER_TAKE_MS);
  return pong !== undefined;
}
