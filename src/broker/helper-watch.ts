// How a call knows its helper is still there while it waits on it: a stopped or hung helper keeps
// its socket accepting connections, so a request sent to it would wait forever. Every request a
// call sends carries a take-by time (HELPER_TAKE_MS ahead; the helper refuses one it reads later);
// a request with no frame back by then (and HELPER_TAKE_GRACE_MS more) was never taken, and never
// will be. Once taken, a helper that owes a frame (a pending reply at wait_ms) or has been quiet
// for HELPER_TAKE_MS is checked: stopped (/proc) at once, else a ping on a link of its own that
// must be answered within HELPER_TAKE_MS. docs/tools.md ("A helper that does not answer").
import type { EnrollmentRecord } from '../core/enrollment/record.js';
import { HELPER_TAKE_GRACE_MS, HELPER_TAKE_MS } from '../core/protocol/limits.js';
import { monotonicMs } from '../core/protocol/trace.js';
import { procStat } from '../core/os/proc.js';
import { ping } from './helper-client.js';
import { helperPresent, noteAnswered, noteSilent, silenceWhy, stoppedWhy } from './unresponsive.js';

/** The take-by time of a request sent now (CLOCK_MONOTONIC ms, as the helper reads it). */
export const takeBy = (): number => monotonicMs() + HELPER_TAKE_MS;

/** How long a caller waits for a request sent now to be taken, at most (its take-by time and the grace). */
export const TAKE_WAIT_MS = HELPER_TAKE_MS + HELPER_TAKE_GRACE_MS;

/** Why a call stops waiting: its request was never taken, or the helper went silent after taking it. */
export interface Silence {
  phase: 'untaken' | 'silent';
  /** Why, for the caller's message: the helper stopped, or alive but silent. */
  why: string;
}

/** Watches one exchange with the helper of `rec` (at `socket`) whose request carries `take_by`. */
export class HelperWatch {
  private taken = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  /** When the helper owes its next frame (a pending reply), CLOCK_MONOTONIC ms. */
  private due: number | undefined;

  constructor(
    private readonly rec: EnrollmentRecord,
    private readonly socket: string,
    takeByMs: number,
    private readonly onSilent: (s: Silence) => void,
  ) {
    this.arm(Math.max(0, takeByMs - monotonicMs()) + HELPER_TAKE_GRACE_MS);
  }

  /** A frame came from the helper: it took the request, and lives. */
  frame(): void {
    if (this.stopped) return;
    if (!this.taken) noteAnswered(this.rec);
    this.taken = true;
    this.arm(this.quietMs());
  }

  /** The helper owes a frame within `ms` (a start's or a wait's pending reply at wait_ms). */
  expect(ms: number): void {
    this.due = monotonicMs() + ms;
    if (this.taken) this.arm(this.quietMs());
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** How long the helper may be quiet now before it is checked. */
  private quietMs(): number {
    const owed = this.due === undefined ? Infinity : Math.max(0, this.due - monotonicMs()) + HELPER_TAKE_GRACE_MS;
    return Math.min(HELPER_TAKE_MS, owed);
  }

  private arm(ms: number): void {
    clearTimeout(this.timer);
    // A reply already read by the kernel is taken first (setImmediate runs after the poll phase).
    this.timer = setTimeout(() => setImmediate(() => void this.check()), ms);
  }

  private async check(): Promise<void> {
    if (this.stopped) return;
    // Dead (or not this shell's; a far end's session over): the link breaks, and the call's own loss
    // path says so. A far end's helper is not on this host: only a ping tells (its pid names nothing here).
    if (!helperPresent(this.rec)) return this.arm(HELPER_TAKE_MS);
    const st = this.rec.remote ? undefined : procStat(this.rec.helper_pid);
    if (!this.taken) return this.silent('untaken');
    if (!stoppedWhy(this.rec.helper_pid, st) && (await ping(this.socket, HELPER_TAKE_MS)) !== undefined) {
      if (this.stopped) return;
      this.due = undefined;
      return this.arm(HELPER_TAKE_MS);
    }
    if (!this.stopped) this.silent('silent');
  }

  private silent(phase: Silence['phase']): void {
    this.stopped = true;
    noteSilent(this.rec, this.socket);
    this.onSilent({ phase, why: silenceWhy(this.rec) });
  }
}
