// The next run's two processes, forked by the waiter before the run is asked for (PREFORK in
// helper/sandbox/waiter.ts), with the real bwrap and waiter: they are there while the walls are
// idle, a run takes them, and a run that killed them (a run still running when the next is asked
// sees every process of the walls) costs the next run nothing: it is started anew.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { Run, type RunOutcome } from '../../helper/run/runner.js';
import { Walls } from '../../helper/sandbox/walls.js';
import { prctlNumber } from '../../helper/sandbox/waiter.js';
import { findBwrap, PERL, processWalls } from '../../src/os/bwrap.js';
import { childrenOf } from '../../src/os/proc.js';
import { waitUntil } from '../support/waiting.js';

const bwrap = findBwrap({});
const BASE = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
const home = mkdtempSync('/var/tmp/tmux-run-spare-test-');
afterAll(() => rmSync(home, { recursive: true, force: true }));

const usable = bwrap !== undefined && existsSync(PERL) && prctlNumber() !== undefined;

function run(w: Walls, script: string): Promise<RunOutcome> {
  const r = new Run({
    script,
    cwd: '/',
    env: {},
    umask: undefined,
    stdoutLimit: 65536,
    stderrLimit: 65536,
    launcher: {
      pgid: w.pgid,
      launch: (s, umask, events) =>
        w.run({ script: s, umask, cwd: '/', env: { PATH: '/usr/bin:/bin', X: 'x' } }, events),
    },
  });
  r.start();
  return r.done;
}

const stdoutOf = (o: RunOutcome): string => o.stdout.toString('utf8');
const isPerl = (pid: number): boolean => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').startsWith(`${PERL}\0`);
  } catch {
    return false;
  }
};

/** The kept reaper (the waiter's only child while nothing runs) and its child, once both are there. */
async function spare(w: Walls): Promise<{ reaper: number; child: number }> {
  return waitUntil(
    () => {
      const waiter = childrenOf(w.pgid!)[0];
      const reapers = waiter === undefined ? [] : childrenOf(waiter);
      const children = reapers.length === 1 ? childrenOf(reapers[0]!) : [];
      return children.length === 1 && isPerl(children[0]!) ? { reaper: reapers[0]!, child: children[0]! } : undefined;
    },
    10000,
    "the next run's reaper and child",
  );
}

describe.skipIf(!usable)("the next run's processes, forked before it is asked for", () => {
  it('are there while the walls are idle, and a run takes them', async () => {
    const w = new Walls(bwrap!, [...BASE, ...processWalls(false)], home, prctlNumber()!, 'spare');
    try {
      const kept = await spare(w);
      const o = await run(w, 'echo "$X $$"');
      expect(o.completion).toEqual({ state: 'exited', exit_status: 0, signal: null });
      expect(stdoutOf(o)).toMatch(/^x \d+\n$/);
      // The kept ones ran it (they are gone), and new ones wait for the run after.
      const next = await spare(w);
      expect([next.reaper, next.child]).not.toContain(kept.reaper);
      expect(existsSync(`/proc/${kept.child}`)).toBe(false);
    } finally {
      w.close();
    }
  });

  it('a next run whose kept child or kept reaper was killed is started anew', async () => {
    const w = new Walls(bwrap!, [...BASE, ...processWalls(false)], home, prctlNumber()!, 'spare-killed');
    try {
      const a = await spare(w);
      process.kill(a.child, 'SIGKILL');
      let o = await run(w, 'echo one');
      expect([o.reason, stdoutOf(o), o.completion?.exit_status]).toEqual(['completed', 'one\n', 0]);
      const b = await spare(w);
      process.kill(b.reaper, 'SIGKILL');
      // The child of a reaper that is gone ends: its pipe closed.
      await waitUntil(() => !existsSync(`/proc/${b.child}`) || undefined, 10000, 'the orphaned child to end');
      o = await run(w, 'echo two; exit 3');
      expect([o.reason, stdoutOf(o), o.completion?.exit_status]).toEqual(['completed', 'two\n', 3]);
    } finally {
      w.close();
    }
  });
});
