// The runs a helper holds for tmux_run_start: queued and running ones always, finished ones (their
// final reply, within the run's own output limits) for HELD_FOR_MS after they finished, at most
// HELD_MAX_FINISHED at once: the one that finished first is dropped first; a running one (a
// background run included) is never dropped. Worst case memory: each run keeps at most its limits
// per stream whatever its overflow (stream-store.ts), so HELD_MAX_FINISHED x 512 KiB = 16 MiB of
// finished results, plus the current run and MAX_BACKGROUND_RUNS background runs, 9 x 512 KiB =
// 4.5 MiB, while they run: 20.5 MiB per pane.
import type { RunState } from '../../src/core/protocol/messages.js';

/** Finished results kept at most, per pane (one helper per pane). */
export const HELD_MAX_FINISHED = 32;
/** How long a finished result is kept at least (unless 32 newer ones push it out). */
export const HELD_FOR_MS = 10 * 60_000;

/** What the table needs to know of a run. */
export interface Holdable {
  binding: { run_id: string };
  state: RunState;
  finishedAt?: number;
}

export class HeldRuns<J extends Holdable> {
  /** Every held run by id, in the order they were accepted. */
  private readonly runs = new Map<string, J>();
  /** Finished ones, in the order they finished. */
  private readonly done: J[] = [];

  add(job: J): void {
    this.runs.set(job.binding.run_id, job);
  }

  /** The held run with this id, if it is still held. */
  get(runId: string, now = Date.now()): J | undefined {
    this.expire(now);
    return this.runs.get(runId);
  }

  /** Records that a held run finished; drops the oldest finished ones over the cap. */
  finished(job: J, now = Date.now()): void {
    if (this.runs.get(job.binding.run_id) !== job) return;
    this.done.push(job);
    while (this.done.length > HELD_MAX_FINISHED) this.drop(this.done[0]!);
    this.expire(now);
  }

  /** Every held run, oldest first. */
  list(now = Date.now()): J[] {
    this.expire(now);
    return [...this.runs.values()];
  }

  /** When a finished run may be dropped (ms since the epoch), or null while it is not finished. */
  static heldUntil(job: Holdable): number | null {
    return job.finishedAt === undefined ? null : job.finishedAt + HELD_FOR_MS;
  }

  private expire(now: number): void {
    while (this.done.length > 0 && this.done[0]!.finishedAt! + HELD_FOR_MS <= now) this.drop(this.done[0]!);
  }

  private drop(job: J): void {
    this.done.splice(this.done.indexOf(job), 1);
    this.runs.delete(job.binding.run_id);
  }
}
