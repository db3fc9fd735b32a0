// Runs in a Walls of helper/walls/walls.ts without tmux or a shell (the unit tests that drive
// the real bwrap and waiter), and the processes kept walls hold between runs.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { InputFeed } from '../helper/run/input-feed.js';
import { Run } from '../helper/run/runner.js';
import type { RunOutcome } from '../helper/run/run-spec.js';
import { terminalEnv, type RunTerminal } from '../helper/run/terminal.js';
import type { Walls } from '../helper/walls/walls.js';
import { INNER_WAITER, prctlNumber, type WaiterProgram } from '../helper/walls/waiter.js';
import { NATIVE_WAITER } from '../src/core/os/native-spawn.js';
import { findBwrap, PERL } from '../src/core/os/bwrap.js';
import { childrenOf } from '../src/core/os/proc.js';

/** The bwrap these tests use, and whether walls can be made here at all. */
export const testBwrap = findBwrap({});
export const wallsUsable = testBwrap !== undefined && existsSync(PERL) && prctlNumber() !== undefined;
/** Both waiters the walls can run, each tested the same: the C one (built by `npm run build`) and the perl fallback. */
export const TEST_WAITERS: readonly WaiterProgram[] = [
  { kind: 'native', path: NATIVE_WAITER },
  { kind: 'perl', prctl: prctlNumber() ?? 0, why: 'tested' },
];
/** The mounts of the tests' walls, before processWalls(). */
export const TEST_MOUNTS = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];

/** A started Run of `script` in `w` (cwd /, the given environment inside), as the helper starts one; with input when given. */
export function wallsRun(
  w: Walls,
  script: string,
  env: Record<string, string> = { PATH: '/usr/bin:/bin' },
  io: { input?: InputFeed; terminal?: RunTerminal } = {},
): Run {
  const r = new Run({
    script,
    cwd: '/',
    env: {},
    umask: undefined,
    stdoutLimit: 65536,
    stderrLimit: 65536,
    ...(io.input ? { input: io.input, overflow: 'tail' as const } : {}),
    ...(io.terminal ? { terminal: io.terminal } : {}),
    launcher: {
      pgid: w.pgid,
      launch: (s, umask, events, stdin) =>
        w.run(
          {
            script: s,
            umask,
            cwd: '/',
            env: stdin?.kind === 'terminal' ? terminalEnv(env) : env,
            ...(stdin ? { input: stdin } : {}),
          },
          events,
        ),
    },
  });
  r.start();
  return r;
}

/** The outcome of `script` run in `w`. */
export const runIn = (w: Walls, script: string, env?: Record<string, string>): Promise<RunOutcome> =>
  wallsRun(w, script, env).done;

/** A process that is still the waiter's image (a kept child not yet /bin/sh), of either waiter. */
const isWaiterImage = (pid: number): boolean => {
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0')[0];
    return argv0 === PERL || argv0 === INNER_WAITER;
  } catch {
    return false;
  }
};

/** Processes in walls made under `home` (their mounts name its directory): bwrap's, the waiter, runs. */
export function processesWalledUnder(home: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid)
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/mountinfo`, 'latin1').includes(` ${home}/`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

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
  return waiter !== undefined && reaper !== undefined && child !== undefined && isWaiterImage(child)
    ? { waiter, reaper, child }
    : undefined;
}
