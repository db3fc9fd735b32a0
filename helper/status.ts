// The helper's side of the pane's status (src/core/enrollment/pane-status.ts): published when it
// changes, at most once per turn of the event loop, so a listing reads it instead of asking.
import { writeStatus, type PaneStatus } from '../src/core/enrollment/pane-status.js';
import type { EnrollmentRecord } from '../src/core/enrollment/record.js';
import { procStat } from '../src/core/os/proc.js';

export type RunState = Pick<PaneStatus, 'run' | 'queued' | 'admitted'>;

export class StatusPublisher {
  private last = '';
  private next: RunState = { run: null, queued: 0 };
  private scheduled = false;
  private closed = false;
  private readonly start: string;
  private promptRefused: string | undefined;
  private sleepsAfter: string | undefined;

  constructor(
    private readonly dir: string,
    private readonly record: EnrollmentRecord,
    private readonly log: (m: string) => void,
  ) {
    this.start = procStat(process.pid)?.startTicks ?? '0';
  }

  /** The pane's run state now; written in the next turn when it differs from what was written. */
  set(s: RunState): void {
    this.next = s;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** The screen check found it cannot serve the shell's prompt: listings say why. */
  refusePrompt(reason: string): void {
    this.promptRefused = reason;
    this.set(this.next);
  }

  /** The idle time the helper took (`10m`, or `never`), said from the next write on: listings say when the pane may go dormant. */
  idleTime(sleepsAfter: string): void {
    this.sleepsAfter = sleepsAfter;
  }

  /**
   * The helper goes dormant (helper/dormancy.ts): the status says so, with the shell's program
   * image, written at once; nothing is written after it. False when it could not be written.
   */
  sleep(shellImage: string): boolean {
    if (this.closed) return false;
    this.closed = true;
    try {
      writeStatus(this.dir, this.record.enrollment_generation, {
        ...this.current(),
        run: null,
        queued: 0,
        dormant: true,
        shell_image: shellImage,
      });
      return true;
    } catch (e) {
      this.log(`cannot publish the pane's dormant status: ${(e as Error).message}`);
      this.closed = false;
      return false;
    }
  }

  /** The dormancy did not happen after all (a call came in its last moment): the status says awake again. */
  awake(): void {
    this.closed = false;
    this.last = '';
    this.flush();
  }

  /** No more writes: the enrollment is ending and its files go (the status with them). */
  close(): void {
    this.closed = true;
  }

  /** Writes the current state at once when it changed (the first time: always). */
  flush(): void {
    if (this.closed) return;
    const status = this.current();
    const text = JSON.stringify(status);
    if (text === this.last) return;
    try {
      writeStatus(this.dir, this.record.enrollment_generation, status);
      this.last = text;
    } catch (e) {
      // A listing then asks the helper instead (a full disk must not stop a run).
      this.log(`cannot publish the pane's status: ${(e as Error).message}`);
    }
  }

  private current(): PaneStatus {
    return {
      version: 1,
      generation: this.record.generation,
      helper_pid: process.pid,
      helper_start: this.start,
      run: this.next.run,
      queued: this.next.queued,
      ...(this.next.admitted ? { admitted: this.next.admitted } : {}),
      ...(this.promptRefused ? { prompt_refused: this.promptRefused } : {}),
      ...(this.sleepsAfter ? { sleeps_after: this.sleepsAfter } : {}),
    };
  }
}
