// The helper lives as long as the pane: once runs pause, collect what they left (big outputs leave
// big buffers) instead of holding it until V8 gets round to it. The shell starts the helper with
// --expose-gc; a burst of runs never pays for a collection.

/** A run with more output than this is followed by a collection sooner. */
const LARGE_OUTPUT = 64 * 1024;
/** Runs pause when none has ended for this long (after a large output, sooner). */
const GC_AFTER_MS = 2000;
const GC_AFTER_LARGE_MS = 250;

export class GcHint {
  private timer: NodeJS.Timeout | undefined;

  /** A run ended with this much output: collect once no other run ends for a while. */
  runEnded(outputBytes: number): void {
    if (typeof globalThis.gc !== 'function') return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => globalThis.gc?.(), outputBytes > LARGE_OUTPUT ? GC_AFTER_LARGE_MS : GC_AFTER_MS);
    this.timer.unref();
  }
}
