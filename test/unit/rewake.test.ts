import { describe, expect, it } from 'vitest';
import { REWAKE_MS } from '../../src/core/enrollment/layout.js';
import { DETAILS_REWAKES, wakeAgain } from '../../helper/shell/signal/rewake.js';

describe('wakeAgain', () => {
  it('wakes the given number of times, REWAKE_MS apart, then stops', async () => {
    const at: number[] = [];
    const start = Date.now();
    wakeAgain(() => at.push(Date.now() - start), DETAILS_REWAKES);
    await new Promise((r) => setTimeout(r, REWAKE_MS * (DETAILS_REWAKES + 6)));
    expect(at).toHaveLength(DETAILS_REWAKES);
    expect(at[0]).toBeGreaterThanOrEqual(REWAKE_MS - 5);
  });

  it('stops at once when cleared (the answer came)', async () => {
    let n = 0;
    const timer = wakeAgain(() => n++, DETAILS_REWAKES);
    await new Promise((r) => setTimeout(r, REWAKE_MS * 1.5));
    clearInterval(timer);
    await new Promise((r) => setTimeout(r, REWAKE_MS * 3));
    expect(n).toBe(1);
  });
});
