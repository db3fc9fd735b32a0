// Waiting without timed assertions: poll until something holds, with a generous deadline.

/** Default for every wait in the harness: generous, because CI machines are small and noisy. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/**
 * Every guard's deadline is multiplied by this (TMUX_RUN_TEST_GUARD_SCALE, default 3). A guard
 * only keeps a hung test from hanging the suite; on a loaded machine it waits longer rather than
 * fail. Nothing in the suite asserts that something happened within a time: that is the bench's.
 */
export const GUARD_SCALE = Math.max(1, Number(process.env.TMUX_RUN_TEST_GUARD_SCALE) || 3);

/** A guard's deadline in milliseconds, scaled. */
export const guardMs = (ms: number): number => ms * GUARD_SCALE;

/** How often pollers look again. */
export const POLL_MS = 25;

/** Resolves after ms milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A readable one-liner for anything thrown. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Poll fn every POLL_MS until it yields something other than undefined/false (throws count as not yet); reject on timeout. */
export async function waitUntil<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number = DEFAULT_TIMEOUT_MS,
  what = 'condition',
  everyMs: number = POLL_MS,
): Promise<T> {
  const deadline = Date.now() + guardMs(timeoutMs);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value !== undefined && value !== false) return value;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const cause = lastError === undefined ? '' : `; last error: ${errorText(lastError)}`;
      throw new Error(`timed out after ${guardMs(timeoutMs)} ms waiting for ${what}${cause}`);
    }
    await sleep(everyMs);
  }
}
