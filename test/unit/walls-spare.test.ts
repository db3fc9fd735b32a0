// The next run's two processes, forked by the waiter before the run is asked for (PREFORK in
// helper/walls/waiter.ts), with the real bwrap and waiter: they are there while the walls are
// idle, a run takes them, and a run that killed them (a run still running when the next is asked
// sees every process of the walls) costs the next run nothing: it is started anew.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunOutcome } from '../../helper/run/run-spec.js';
import { Walls } from '../../helper/walls/walls.js';
import { processWalls } from '../../src/core/os/bwrap.js';
import { waitUntil } from '../../lab/waiting.js';
import { keptPair, runIn, testBwrap, TEST_MOUNTS, TEST_WAITERS, wallsUsable } from '../../lab/walls.js';

const bwrap = testBwrap;
const BASE = TEST_MOUNTS;
const home = mkdtempSync('/var/tmp/tmux-run-spare-test-');
afterAll(() => rmSync(home, { recursive: true, force: true }));

const usable = wallsUsable;

const run = (w: Walls, script: string): Promise<RunOutcome> => runIn(w, script, { PATH: '/usr/bin:/bin', X: 'x' });
const stdoutOf = (o: RunOutcome): string => o.stdout.toString('utf8');
const spare = (w: Walls): Promise<{ reaper: number; child: number }> =>
  waitUntil(() => keptPair(w), 10000, "the next run's reaper and child");

describe.skipIf(!usable).each(TEST_WAITERS)(
  "the next run's processes, forked before it is asked for, the $kind waiter",
  (waiter) => {
    it('are there while the walls are idle, and a run takes them', async () => {
      const w = new Walls(bwrap!, [...BASE, ...processWalls(false)], home, waiter, 'spare');
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
      const w = new Walls(bwrap!, [...BASE, ...processWalls(false)], home, waiter, 'spare-killed');
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
  },
);
