// The helper's table of held runs and the run journal's reading, without processes.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HELD_FOR_MS, HELD_MAX_FINISHED, HeldRuns, type Holdable } from '../../helper/queue/held-runs.js';
import { RunJournal, openRuns } from '../../src/core/enrollment/run-journal.js';

const job = (n: number): Holdable => ({ binding: { run_id: n.toString(16).padStart(32, '0') }, state: 'queued' });
const finish = (t: HeldRuns<Holdable>, j: Holdable, at: number): void => {
  j.state = 'finished';
  j.finishedAt = at;
  t.finished(j, at);
};

describe('held runs', () => {
  it('keeps at most 32 finished runs, dropping the one that finished first, never a queued or running one', () => {
    const t = new HeldRuns<Holdable>();
    const waiting = job(1000);
    t.add(waiting);
    const jobs = Array.from({ length: HELD_MAX_FINISHED + 1 }, (_, i) => job(i));
    jobs.forEach((j) => t.add(j));
    // They finish in reverse order: the last added finishes first and is the first dropped.
    [...jobs].reverse().forEach((j, i) => finish(t, j, 1000 + i));
    expect(t.get(jobs.at(-1)!.binding.run_id, 1000)).toBeUndefined();
    expect(t.get(jobs[0]!.binding.run_id, 1000)).toBe(jobs[0]);
    expect(t.get(waiting.binding.run_id, 1000)).toBe(waiting);
    expect(t.list(1000).filter((j) => j.state === 'finished')).toHaveLength(HELD_MAX_FINISHED);
  });

  it('drops a finished run once its held_until has passed', () => {
    const t = new HeldRuns<Holdable>();
    const j = job(1);
    t.add(j);
    finish(t, j, 5000);
    expect(HeldRuns.heldUntil(j)).toBe(5000 + HELD_FOR_MS);
    expect(t.get(j.binding.run_id, 5000 + HELD_FOR_MS - 1)).toBe(j);
    expect(t.get(j.binding.run_id, 5000 + HELD_FOR_MS)).toBeUndefined();
  });
});

describe('the run journal', () => {
  it('is written 0600, leaves open only runs without an end, ignores torn lines, and empties when all ended', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tmux-run-journal-'));
    try {
      const path = join(dir, 'x.runs');
      const j = new RunJournal(path);
      const a = 'a'.repeat(32);
      const b = 'b'.repeat(32);
      j.note({ k: 'held', run_id: a, digest: '1'.repeat(64), at: 1 });
      j.note({ k: 'intent', run_id: a, digest: '1'.repeat(64), at: 2, after_ticks: 10 });
      j.note({ k: 'pgid', run_id: a, pgid: 4242, start: '99' });
      j.note({ k: 'intent', run_id: b, digest: '2'.repeat(64), at: 3, after_ticks: 11 });
      expect(statSync(path).mode & 0o777).toBe(0o600);
      const text = readFileSync(path, 'utf8') + '{"k":"pgid","run_id":"' + b; // a torn last line
      expect(openRuns(text)).toEqual([
        {
          run_id: a,
          digest: '1'.repeat(64),
          held: true,
          intent: { at: 2, after_ticks: 10 },
          pgid: { pgid: 4242, start: '99' },
        },
        { run_id: b, digest: '2'.repeat(64), held: false, intent: { at: 3, after_ticks: 11 } },
      ]);
      j.note({ k: 'end', run_id: a });
      expect(openRuns(readFileSync(path, 'utf8')).map((r) => r.run_id)).toEqual([b]);
      j.note({ k: 'end', run_id: b });
      expect(readFileSync(path, 'utf8')).toBe('');
      j.remove();
      j.note({ k: 'intent', run_id: a, digest: '1'.repeat(64), at: 4, after_ticks: 12 });
      expect(() => statSync(path)).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
