// The remote link's pure parts: its messages' checks, and the take-by time moved onto the far host's clock.
import { describe, expect, it } from 'vitest';
import { checkRelay, onThisClock } from '../../src/core/enrollment/remote-link.js';
import { memoryPair } from '../../src/core/protocol/transport.js';

describe('the remote link', () => {
  it("takes a welcome only with the relay's clock", () => {
    const record = { pane_id: '%1' };
    expect(checkRelay({ type: 'welcome', record, key: 'k', now: 12.5 })).toEqual({
      type: 'welcome',
      record,
      key: 'k',
      now: 12.5,
    });
    expect(checkRelay({ type: 'welcome', record, key: 'k' })).toBeUndefined();
    expect(checkRelay({ type: 'welcome', record, key: 'k', now: 'soon' })).toBeUndefined();
  });

  it("moves each request's take-by time by the clocks' offset, and leaves everything else alone", async () => {
    const [near, far] = memoryPair();
    const seen: unknown[] = [];
    const moved = onThisClock(far, 1_000_000);
    moved.onmessage = (m) => seen.push(m);
    let closed = false;
    moved.onclose = () => (closed = true);
    near.send({ type: 'run', take_by: 5000 });
    near.send({ type: 'list' });
    moved.send({ type: 'pong' });
    const back: unknown[] = [];
    near.onmessage = (m) => back.push(m);
    await new Promise((r) => setTimeout(r, 20));
    expect(seen).toEqual([{ type: 'run', take_by: 1_005_000 }, { type: 'list' }]);
    expect(back).toEqual([{ type: 'pong' }]);
    near.close();
    await new Promise((r) => setTimeout(r, 20));
    expect(closed).toBe(true);
  });
});
