// Waiting without timed assertions: poll until something holds, with a generous deadline.

/** Default for every wait in the harness: generous, because CI machines are small and noisy. */
export const DEFAULT_TIMEOUT_MS = 10_000;
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
  const deadline = Date.now() + timeoutMs;
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
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await sleep(everyMs);
  }
}
