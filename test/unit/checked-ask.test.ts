// The ask policy of signal-woken shells (helper/shell/signal/checked-ask.ts): which refusals are asked
// again within the bound, and the screen compared once more with a fresh prompt where cached.
import { describe, expect, it } from 'vitest';
import { checkedAsk } from '../../helper/shell/signal/checked-ask.js';
import type { ScreenVerdict } from '../../helper/shell/screen/screen.js';
import type { AskResult } from '../../helper/shell/shell.js';

const yes = { ok: true, snapshot: { cwd: '/', env: {} }, approval: 'auto' } as unknown as AskResult;
const no = (reason: string): AskResult => ({ ok: false, reason });

/** Parts that answer from `answers` in turn (the last one again when they run out), and record the calls. */
function parts(answers: AskResult[], verdicts?: ScreenVerdict[], cachesPrompt = false) {
  const calls: { ms: number; fresh: boolean }[] = [];
  let screens = 0;
  return {
    calls,
    screens: () => screens,
    answer: (ms: number, fresh: boolean) => {
      calls.push({ ms, fresh });
      return Promise.resolve(answers[Math.min(calls.length - 1, answers.length - 1)]!);
    },
    ...(verdicts ? { screen: () => Promise.resolve(verdicts[Math.min(screens++, verdicts.length - 1)]!) } : {}),
    cachesPrompt,
  };
}

describe('checkedAsk', () => {
  it('asks again while readline is not yet reading or a notice redraws, then takes the answer', async () => {
    const p = parts([no('context:not_reading'), no('context:redrawing'), yes]);
    expect(await checkedAsk(1000, p)).toBe(yes);
    expect(p.calls).toHaveLength(3);
    expect(p.calls[1]!.ms).toBeLessThan(1000);
  });

  it('refuses with the passing reason once the bound is spent', async () => {
    const p = parts([no('context:not_reading')]);
    expect(await checkedAsk(80, p)).toEqual(no('context:not_reading'));
    expect(p.calls.length).toBeGreaterThan(1);
  });

  it('never asks again after any other refusal', async () => {
    for (const reason of ['editor_not_empty', 'busy', 'context:continuation', 'timeout', 'denied']) {
      const p = parts([no(reason), yes]);
      expect(await checkedAsk(1000, p)).toEqual(no(reason));
      expect(p.calls).toHaveLength(1);
    }
  });

  it('compares the screen once more with the prompt rendered fresh where it may be cached', async () => {
    const bad: ScreenVerdict = { ok: false, reason: 'the cursor is elsewhere', cause: 'line' };
    const p = parts([yes], [bad, { ok: true }], true);
    expect(await checkedAsk(1000, p)).toBe(yes);
    expect(p.calls.map((c) => c.fresh)).toEqual([false, true]);
    const q = parts([yes], [bad], true);
    expect(await checkedAsk(1000, q)).toEqual(no('screen:the cursor is elsewhere'));
    expect(q.calls.map((c) => c.fresh)).toEqual([false, true]);
    const r = parts([yes], [bad], false);
    expect(await checkedAsk(1000, r)).toEqual(no('screen:the cursor is elsewhere'));
    expect(r.calls).toHaveLength(1);
  });

  it('an exact shell has no screen check', async () => {
    const p = parts([yes]);
    expect(await checkedAsk(1000, p)).toBe(yes);
    expect(p.screens()).toBe(0);
  });
});

describe('checkedAsk, the fresh look', () => {
  const bad: ScreenVerdict = { ok: false, reason: 'there is text below the prompt line', cause: 'line' };
  it('is not made for copy mode or a full-screen program', async () => {
    const p = parts([yes], [{ ok: false, reason: 'the pane is in copy mode', cause: 'pane' }], true);
    expect(await checkedAsk(1000, p)).toEqual(no('screen:the pane is in copy mode'));
    expect(p.calls).toHaveLength(1);
  });

  it('that times out leaves the first refusal standing (not busy)', async () => {
    const p = parts([yes, no('timeout')], [bad], true);
    expect(await checkedAsk(1000, p)).toEqual(no(`screen:${bad.reason}`));
    expect(p.calls.map((c) => c.fresh)).toEqual([false, true]);
  });

  it('that finds the shell busy says so', async () => {
    const p = parts([yes, no('busy')], [bad], true);
    expect(await checkedAsk(1000, p)).toEqual(no('busy'));
  });
});

describe('checkedAsk, a screen being redrawn', () => {
  it('is looked at again until it is back, then judged', async () => {
    const redraw: ScreenVerdict = { ok: false, reason: 'the shell is drawing a notice', cause: 'redraw' };
    const typed: ScreenVerdict = { ok: false, reason: 'there is text on the prompt line', cause: 'line' };
    const p = parts([yes], [redraw, redraw, typed], false);
    expect(await checkedAsk(1000, p)).toEqual(no(`screen:${typed.reason}`));
    expect(p.calls).toHaveLength(3);
    const q = parts([yes], [redraw], false);
    expect(await checkedAsk(100, q)).toEqual(no(`screen:${redraw.reason}`));
  });
});
