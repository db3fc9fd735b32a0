// Runs in a Walls of helper/sandbox/walls.ts without tmux or a shell (the unit tests that drive
// the real bwrap and waiter), and the processes kept walls hold between runs.
import { existsSync, readFileSync } from 'node:fs';
import { Run, type RunOutcome } from '../../helper/run/runner.js';
import type { Walls } from '../../helper/sandbox/walls.js';
import { prctlNumber } from '../../helper/sandbox/waiter.js';
import { findBwrap, PERL } from '../../src/os/bwrap.js';
import { childrenOf } from '../../src/os/proc.js';

/** The bwrap these tests use, and whether walls can be made here at all. */
export const testBwrap = findBwrap({});
export const wallsUsable = testBwrap !== undefined && existsSync(PERL) && prctlNumber() !== undefined;
/** The mounts of the tests' walls, before processWalls(). */
export const TEST_MOUNTS = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];

/** A started Run of `script` in `w` (cwd /, the given environment inside), as the helper starts one. */
export function wallsRun(w: Walls, script: string, env: Record<string, string> = { PATH: '/usr/bin:/bin' }): Run {
  const r = new Run({
    script,
    cwd: '/',
    env: {},
    umask: undefined,
    stdoutLimit: 65536,
    stderrLimit: 65536,
    launcher: { pgid: w.pgid, launch: (s, umask, events) => w.run({ script: s, umask, cwd: '/', env }, events) },
  });
  r.start();
  return r;
}

/** The outcome of `script` run in `w`. */
export const runIn = (w: Walls, script: string, env?: Record<string, string>): Promise<RunOutcome> =>
  wallsRun(w, script, env).done;

const isPerl = (pid: number): boolean => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').startsWith(`${PERL}\0`);
  } catch {
    return false;
  }
};

/**
 * The waiter of idle walls and the next run's processes it keeps (PREFORK): its only child, the
 * kept reaper, and that one's only child, not yet /bin/sh. Undefined until the walls hold exactly
 * those (a run's own reaper still ending makes two children).
 */
export function keptPair(w: Walls): { waiter: number; reaper: number; child: number } | undefined {
  const one = (pid: number | undefined): number | undefined => {
    const kids = pid === undefined ? [] : childrenOf(pid);
    return kids.length === 1 ? kids[0] : undefined;
  };
  const waiter = one(w.pgid);
  const reaper = one(waiter);
  const child = one(reaper);
  return waiter !== undefined && reaper !== undefined && child !== undefined && isPerl(child)
    ? { waiter, reaper, child }
    : undefined;
}
