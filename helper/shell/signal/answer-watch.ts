// The watch on the signal-woken channel's answer file (the protocol: helper/shell/signal/signal.ts):
// while a request is out, the helper watches the channel's directory (inotify, fs.watch) and
// looks at BASE.ans whenever it changes; where the directory cannot be watched (out of watches,
// say) it looks every POLL_MS instead. A change of BASE.env (the shell's handler writing the
// snapshot: it is answering) is told to `snapshotSeen`, when given (inotify only). When the watch
// stops (the answer read, or the wait over), BASE.ans is removed soon after, in the event loop's
// next turn, while the run's next steps wait on other processes: on a disk filesystem an unlink
// costs about 0.2 ms, which the next request then need not pay before it wakes the shell (it
// still removes whatever is there first).
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { CHANNEL } from '../../../src/core/enrollment/layout.js';
import { removeQuietly } from '../../../src/core/enrollment/record.js';

/** How often the helper looks at the answer file when the directory cannot be watched. */
export const POLL_MS = 20;

/** Calls `look` when BASE.ans may have changed, from start() until stop(). */
export class AnswerWatch {
  private watcher: FSWatcher | undefined;
  private poll: NodeJS.Timeout | undefined;
  private tidy: NodeJS.Immediate | undefined;

  constructor(
    private readonly base: string,
    private readonly look: () => void,
    private readonly snapshotSeen?: () => void,
  ) {}

  start(): void {
    clearImmediate(this.tidy);
    this.tidy = undefined;
    if (this.watcher || this.poll) return;
    const name = basename(this.base) + CHANNEL.answer;
    const snapshot = basename(this.base) + CHANNEL.snapshot;
    try {
      this.watcher = watch(dirname(this.base), { persistent: false }, (_event, file) => {
        if (file === null || file === name) this.look();
        else if (file === snapshot) this.snapshotSeen?.();
      });
      this.watcher.on('error', () => this.fallBack());
    } catch {
      this.fallBack();
    }
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = undefined;
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
    clearImmediate(this.tidy);
    // On this thread, and cancelled by start(): never after the next request's answer is written.
    this.tidy = setImmediate(() => {
      this.tidy = undefined;
      removeQuietly(this.base + CHANNEL.answer);
    });
  }

  /** No inotify: look every POLL_MS while a request is out. */
  private fallBack(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.poll ??= setInterval(() => this.look(), POLL_MS);
  }
}
