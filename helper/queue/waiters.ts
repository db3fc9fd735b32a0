// Who waits for each job, on which link: the frames that are not final (started, progress), the
// pending snapshot after a wait's wait_ms, the final reply, and what a closing link lets go of.
import type { Transport } from '../../src/core/protocol/transport.js';
import type { Reply } from '../../src/core/protocol/messages.js';
import { pendingOf, progressOf, type Job, type Waiter } from './job.js';

/** Progress frames are sent this often while a run waits or runs. */
export const PROGRESS_MS = 1000;

export class Waiters {
  /** The waiters of each link, so that a closing link lets go of them. */
  private readonly links = new WeakMap<Transport, Array<{ job: Job; w: Waiter }>>();

  /** A link opened. */
  open(t: Transport): void {
    this.links.set(t, []);
  }

  /** A link closed: its waiters stop waiting; `ownerGone` is called for each job whose owner it was, in turn. */
  close(t: Transport, ownerGone: (job: Job) => void): void {
    for (const { job, w } of this.links.get(t) ?? []) {
      if (!job.waiters.delete(w)) continue;
      clearTimeout(w.timer);
      w.onEnd?.('gone');
      if (w.owner) ownerGone(job);
    }
    this.links.delete(t);
  }

  /** Adds a waiter to a job; a finished job answers at once. With `waitMs`, a job still going then gets a pending snapshot. */
  add(job: Job, w: Waiter, waitMs?: number): void {
    if (job.state === 'finished' && job.final) {
      w.onEnd?.('final');
      w.t.send(job.final);
      return;
    }
    job.waiters.add(w);
    const mine = this.links.get(w.t);
    if (mine) {
      // A broker keeps its link open for the runs that follow: forget the waiters already answered.
      if (mine.length >= 8) {
        const open = mine.filter((e) => e.job.waiters.has(e.w));
        mine.length = 0;
        mine.push(...open);
      }
      mine.push({ job, w });
    }
    if (waitMs !== undefined) {
      const pending = (): void => {
        if (!job.waiters.delete(w)) return;
        w.onEnd?.('pending');
        w.t.send(pendingOf(job));
      };
      if (waitMs === 0) pending();
      else {
        w.timer = setTimeout(pending, waitMs);
        w.timer.unref();
      }
    }
    if (w.progress) this.startProgress(job);
  }

  /** Sends a frame that is not final (started, progress) to every waiter that wants it. */
  emit(job: Job, reply: Reply, onlyProgress = false): void {
    for (const w of job.waiters) if (!onlyProgress || w.progress) w.t.send(reply);
  }

  /** Sends a progress frame to the job's waiters that asked for them. */
  sendProgress(job: Job): void {
    if (job.state === 'finished') return;
    this.emit(job, progressOf(job, job.state), true);
  }

  /** The job's final reply, to every waiter (each one's `onEnd` first); progress frames stop. */
  finish(job: Job, reply: Reply): void {
    clearInterval(job.progressTimer);
    job.progressTimer = undefined;
    const waiters = [...job.waiters];
    job.waiters.clear();
    for (const w of waiters) {
      clearTimeout(w.timer);
      w.onEnd?.('final');
      w.t.send(reply);
    }
  }

  /** Sends progress frames to the job's waiters that asked for them, while it waits and runs. */
  private startProgress(job: Job): void {
    if (job.progressTimer) return;
    const timer = setInterval(() => {
      if (job.state === 'finished' || ![...job.waiters].some((w) => w.progress)) {
        clearInterval(timer);
        job.progressTimer = undefined;
        return;
      }
      this.sendProgress(job);
    }, PROGRESS_MS);
    timer.unref();
    job.progressTimer = timer;
  }
}
