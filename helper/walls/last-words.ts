// A process's exit can come before what it wrote last on a pipe is read (Node tells of the exit
// as soon as the child is reaped): bwrap's complaint about walls it could not set up, say.
import type { Readable } from 'node:stream';

/** How long the pipe's end is waited for after the exit. */
export const LAST_WORDS_MS = 200;

/** Calls `then` once `pipe` has ended (at once when it has, or there is none), or after LAST_WORDS_MS. */
export function afterLastWords(pipe: Readable | null | undefined, then: () => void): void {
  if (!pipe || pipe.readableEnded || pipe.destroyed) return then();
  let done = false;
  const once = (): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    then();
  };
  const timer = setTimeout(once, LAST_WORDS_MS);
  pipe.once('end', once).once('close', once);
}
