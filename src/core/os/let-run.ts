// A short stop of this thread, so that a process it has just woken runs first: the screen check's
// read, once begun (helper/shell/screen/pane-screen.ts). A woken process is put on its waker's
// CPU, and on two cores the other one is often busy (the shell answering, another pane's work): it
// then waited there behind the waker's own next work, which was not urgent (the shell's answer
// read and checked, needed only when the screen comes). A futex wait of LET_RUN_MS (Node has no
// sched_yield) hands it the CPU at once; where it did not need it, the waker loses that long, off
// the read's way. Measured in BENCHMARKS.md. (The relay's send of the screen, tried the same way,
// showed no gain.)
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** How long the thread stops. */
export const LET_RUN_MS = 0.05;

/** Stops this thread for LET_RUN_MS. */
export function letRun(): void {
  Atomics.wait(PAUSE, 0, 0, LET_RUN_MS);
}
