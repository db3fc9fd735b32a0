// When a signal-woken shell (helper/shell/signal/signal.ts) is woken to draw a notice. A run's notice
// waits NOTICE_WAIT_MS: the same run's next notice (its end, for a short run) within that time
// takes its place, so a short run costs the shell one drawing (fish repaints its whole prompt for
// each: powerline's renderer takes about 320 ms). Another run's notice, or one about no run,
// never takes a waiting one's place: that one is drawn first. A request sent meanwhile carries the
// notice (the shell draws it first), which ends the wait.

/** How long a run's notice waits before the shell is woken for it. */
export const NOTICE_WAIT_MS = 50;

const RUN_OF = /^tmux-run: run (\S+)/;

export class NoticeWait {
  private run: string | undefined;
  private timer: NodeJS.Timeout | undefined;

  /** `wake`: rewrites the messages with the notice kept last and wakes the shell. */
  constructor(private readonly wake: () => void) {}

  /** Takes a notice: `keep` makes it the one to draw; the shell is woken now, or after the wait. */
  add(text: string, keep: () => void): void {
    const run = RUN_OF.exec(text)?.[1];
    if (this.run !== undefined && run !== this.run) this.now();
    keep();
    if (run === undefined) return this.wake();
    if (this.run === run) return;
    this.run = run;
    this.timer = setTimeout(() => this.now(), NOTICE_WAIT_MS);
    this.timer.unref();
  }

  /** Wakes the shell for the notice that waits (none: nothing). */
  now(): void {
    if (this.run === undefined) return;
    this.stop();
    this.wake();
  }

  /** Ends the wait without waking (a request carries the notice, or the channel closed). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.run = undefined;
  }
}
