// The watch on the signal-woken channel's answer file (the protocol: helper/shell/signal.ts):
// while a request is out, the helper watches the channel's directory (inotify, fs.watch) and
// looks at BASE.ans whenever it changes; where the directory cannot be watched (out of watches,
// say) it looks every POLL_MS instead. A change of BASE.env (the shell's handler writing the
// snapshot: it is answering) is told to `snapshotSeen`, when given (inotify only).
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { CHANNEL } from '../../src/enrollment/layout.js';

/** How often the helper looks at the answer file when the directory cannot be watched. */
export const POLL_MS = 20;

/** Calls `look` when BASE.ans may have changed, from start() until stop(). */
export class AnswerWatch {
  private watcher: FSWatcher | undefined;
  private poll: NodeJS.Timeout | undefined;

  constructor(
    private readonly base: string,
    private readonly look: () => void,
    private readonly snapshotSeen?: () => void,
  ) {}

  start(): void {
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
  }

  /** No inotify: look every POLL_MS while a request is out. */
  private fallBack(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.poll ??= setInterval(() => this.look(), POLL_MS);
  }
}
