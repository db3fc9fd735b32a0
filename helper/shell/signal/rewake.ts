// Waking a signal-woken shell again (helper/shell/signal/signal.ts): a signal can be lost to its handler
// (REWAKE_MS says how), and each request is answered once, so waking it again is harmless.
import { REWAKE_MS } from '../../../src/core/enrollment/layout.js';

/**
 * How many times a question's details (P) wake the shell again, REWAKE_MS apart: they follow the
 * shell's A at once, often while the trap that wrote it still runs, where bash loses the signal.
 * A WINCH while the question is up changes nothing on the screen (checked: bash 5.2, tmux 3.3a).
 */
export const DETAILS_REWAKES = 6;

/** Calls `wake` every REWAKE_MS, `times` times; returns the interval, to clear sooner (the answer came). */
export function wakeAgain(wake: () => void, times: number): NodeJS.Timeout {
  let left = times;
  const timer = setInterval(() => {
    if (--left <= 0) clearInterval(timer);
    wake();
  }, REWAKE_MS);
  return timer;
}
