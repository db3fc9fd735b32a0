// The run journal: a 0600 file per enrollment in the registry (`<enrollment>.runs`) where the
// helper notes, synchronously, each run it is about to start and then its process group. A
// helper killed with SIGKILL cannot stop its runs; whoever next finds it dead reads this file
// and stops them (src/broker/orphans.ts), even one spawned a moment before the helper died.
import { closeSync, constants, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { removeQuietly } from './record.js';

export { journalPath } from './layout.js';

/** One line of the journal. */
export type JournalEntry =
  /** A run the helper holds for tmux_run_start (queued; it may never start). */
  | { k: 'held'; run_id: string; digest: string; at: number }
  /** The helper is about to spawn `/bin/sh -c SCRIPT`; its children start at or after `after_ticks`. */
  | { k: 'intent'; run_id: string; digest: string; at: number; after_ticks: number }
  /** spawn() returned: the run's process group, and its leader's start time (/proc/PID/stat field 22). */
  | { k: 'pgid'; run_id: string; pgid: number; start: string }
  /** The run is over and its group stopped; nothing left to clean up. */
  | { k: 'end'; run_id: string };

/** What the journal says about one run that has not ended. */
export interface OpenRun {
  run_id: string;
  digest: string;
  /** The run was held (started with tmux_run_start). */
  held: boolean;
  intent?: { at: number; after_ticks: number };
  pgid?: { pgid: number; start: string };
}

/** The clock /proc/PID/stat's start times count in (USER_HZ ticks since boot), now. */
export function uptimeTicks(): number {
  try {
    return Math.floor(Number(readFileSync('/proc/uptime', 'latin1').split(' ')[0]) * 100);
  } catch {
    return 0;
  }
}

/** The helper's writer: every note is appended synchronously before the helper goes on. */
export class RunJournal {
  private readonly open = new Set<string>();
  /** Removed with the enrollment: later notes (runs reporting while the helper ends) write nothing. */
  private removed = false;
  constructor(readonly path: string) {}

  /** Appends one entry; throws when it could not be written whole. */
  note(e: JournalEntry): void {
    if (this.removed) return;
    const fd = openSync(
      this.path,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      const line = Buffer.from(JSON.stringify(e) + '\n');
      if (writeSync(fd, line) !== line.length) throw new Error('short write');
      if (e.k === 'end') {
        this.open.delete(e.run_id);
        // Nothing left to clean up: start afresh rather than grow for the life of the pane.
        if (this.open.size === 0) ftruncateSync(fd, 0);
      } else this.open.add(e.run_id);
    } finally {
      closeSync(fd);
    }
  }

  /** Notes an entry, reporting a failure instead of throwing (for notes after the fact). */
  tryNote(e: JournalEntry, log: (m: string) => void): void {
    try {
      this.note(e);
    } catch (err) {
      log(`cannot write the run journal ${this.path}: ${(err as Error).message}`);
    }
  }

  remove(): void {
    this.removed = true;
    removeQuietly(this.path);
  }
}

/** The runs a journal's text leaves open (a torn last line is ignored). */
export function openRuns(text: string): OpenRun[] {
  const runs = new Map<string, OpenRun>();
  for (const line of text.split('\n')) {
    let e: JournalEntry;
    try {
      e = JSON.parse(line) as JournalEntry;
    } catch {
      continue;
    }
    if (typeof e !== 'object' || e === null || typeof e.run_id !== 'string' || !/^[a-f0-9]{32}$/.test(e.run_id))
      continue;
    if (e.k === 'end') {
      runs.delete(e.run_id);
      continue;
    }
    const r = runs.get(e.run_id) ?? { run_id: e.run_id, digest: '', held: false };
    if (e.k === 'held' && /^[a-f0-9]{64}$/.test(e.digest)) Object.assign(r, { digest: e.digest, held: true });
    else if (e.k === 'intent' && /^[a-f0-9]{64}$/.test(e.digest) && Number.isInteger(e.after_ticks))
      Object.assign(r, { digest: e.digest, intent: { at: e.at, after_ticks: e.after_ticks } });
    else if (e.k === 'pgid' && Number.isInteger(e.pgid) && e.pgid > 1 && typeof e.start === 'string')
      r.pgid = { pgid: e.pgid, start: e.start };
    else continue;
    runs.set(e.run_id, r);
  }
  return [...runs.values()].filter((r) => r.digest !== '');
}
