// Process groups: stop one (SIGTERM, then SIGKILL after a grace), even when this process exits first.
import { groupAlive } from './proc.js';

/** How long a stopped group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 1000;

/** Groups sent SIGTERM whose SIGKILL follow-up is still due. */
const pendingKills = new Map<number, NodeJS.Timeout>();

const killGroup = (pgid: number): void => {
  pendingKills.delete(pgid);
  if (!groupAlive(pgid)) return;
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    /* gone meanwhile */
  }
};

/**
 * Sends SIGTERM to a process group, then SIGKILL after a grace if anything is left. The timer
 * does not keep the process alive, so the SIGKILL is sent at once if this process exits first.
 * With `termPid`, the SIGTERM goes to that process only (a sandbox's waiter, which passes it on to
 * the script's own group), or to the group when that process is gone; the SIGKILL to the group.
 */
export function terminateGroup(pgid: number, graceMs: number = KILL_GRACE_MS, termPid?: number): void {
  try {
    process.kill(termPid ?? -pgid, 'SIGTERM');
  } catch {
    if (termPid === undefined) return; // the group is empty
    try {
      process.kill(-pgid, 'SIGTERM');
    } catch {
      return;
    }
  }
  if (pendingKills.has(pgid)) return;
  if (pendingKills.size === 0 && !process.listeners('exit').includes(killPendingGroups))
    process.on('exit', killPendingGroups);
  const t = setTimeout(() => killGroup(pgid), graceMs);
  t.unref();
  pendingKills.set(pgid, t);
}

/** Sends the due SIGKILL to every group still in its grace (on exit: nobody else would). */
export function killPendingGroups(): void {
  for (const [pgid, t] of [...pendingKills]) {
    clearTimeout(t);
    killGroup(pgid);
  }
}
