// Background runs (helper/background.ts): a start request's overflow and background, and the ninth
// refused while 8 run.
import { describe, expect, it } from 'vitest';
import { BackgroundRuns, runMode } from '../../helper/queue/background.js';
import type { Request } from '../../src/core/protocol/messages.js';
import { MAX_BACKGROUND_RUNS } from '../../src/core/protocol/limits.js';

type RunReq = Extract<Request, { type: 'run' | 'start' }>;
const start = (over: Partial<Extract<RunReq, { type: 'start' }>> = {}): RunReq =>
  ({ type: 'start', wait_ms: 0, progress: false, ...over }) as RunReq;

describe('runMode', () => {
  it('tmux_run stops at its limit; a start does unless it asks for tail; background implies tail', () => {
    expect(runMode({ type: 'run' } as RunReq)).toEqual({ overflow: 'stop', background: false });
    expect(runMode(start())).toEqual({ overflow: 'stop', background: false });
    expect(runMode(start({ overflow: 'tail' }))).toEqual({ overflow: 'tail', background: false });
    expect(runMode(start({ background: true }))).toEqual({ overflow: 'tail', background: true });
    expect(runMode(start({ background: false, overflow: 'stop' }))).toEqual({ overflow: 'stop', background: false });
  });
});

describe('BackgroundRuns', () => {
  it(`refuses one more while ${MAX_BACKGROUND_RUNS} run, and again accepts once one ended`, () => {
    const bg = new BackgroundRuns<number>();
    for (let i = 0; i < MAX_BACKGROUND_RUNS; i++) {
      expect(bg.refusal('%1')).toBeUndefined();
      bg.add(i);
    }
    expect(bg.refusal('%1')).toEqual({
      code: 'too_many_background_runs',
      message: expect.stringMatching(/^pane %1 already has 8 background runs running/),
    });
    bg.delete(3);
    expect(bg.refusal('%1')).toBeUndefined();
    expect(bg.all()).toHaveLength(MAX_BACKGROUND_RUNS - 1);
    bg.delete(99); // a run that was never a background one
    expect(bg.all()).toHaveLength(MAX_BACKGROUND_RUNS - 1);
  });
});
