// What a wait or cancel for a run of a gone enrollment says: the audit trail's outcome, only for a
// run that trail shows started on exactly that target (its pane and generations).
import { describe, expect, it } from 'vitest';
import { paneGeneration } from '../../src/core/enrollment/generation.js';
import { outcomeFromAudit } from '../../src/broker/held-outcome.js';

const run = 'a'.repeat(32);
const gens = {
  server_generation: '/tmp/s.1.2.boot',
  pane_id: '%4',
  process_generation: 'b'.repeat(32),
  enrollment_generation: 'c'.repeat(32),
};
const target = { kind: 'pane' as const, id: '%4', generation: paneGeneration(gens) };
const start = {
  event: 'start',
  run_id: run,
  script_digest: 'd'.repeat(64),
  outcome: 'started',
  ...gens,
};

describe('outcomeFromAudit', () => {
  it('knows nothing of a run without a start entry for this target, or started under other generations', () => {
    expect(outcomeFromAudit([], run, target)).toBeUndefined();
    expect(outcomeFromAudit([{ ...start, run_id: 'e'.repeat(32) }], run, target)).toBeUndefined();
    expect(outcomeFromAudit([{ ...start, pane_id: '%5' }], run, target)).toBeUndefined();
    expect(outcomeFromAudit([{ ...start, enrollment_generation: 'f'.repeat(32) }], run, target)).toBeUndefined();
  });

  it('an exit status or a signal on record is a known completion, with the authorization', () => {
    const exited = outcomeFromAudit(
      [start, { event: 'end', run_id: run, pane_id: '%4', outcome: 'exited', exit_status: 3 }],
      run,
      target,
    )!;
    expect(exited.effects).toEqual({
      state: 'known',
      authorization: { state: 'authorized', run_id: run, script_digest: 'd'.repeat(64), ...gens },
      completion: { state: 'exited', exit_status: 3, signal: null },
    });
    expect(exited.said).toBe('the audit trail says run aaaaaaaa started and ended exited, exit status 3');
    const killed = outcomeFromAudit(
      [start, { event: 'end', run_id: run, pane_id: '%4', outcome: 'shell_exited', signal: 15 }],
      run,
      target,
    )!;
    expect(killed.effects.completion).toEqual({ state: 'signaled', exit_status: null, signal: 15 });
    expect(killed.said).toMatch(/ended shell_exited, killed by signal 15$/);
  });

  it('an end without a status (helper_lost) or no end at all is unknown', () => {
    const lost = outcomeFromAudit(
      [
        start,
        { event: 'end', run_id: run, pane_id: '%4', outcome: 'helper_lost', detail: 'stopped its process group 77' },
      ],
      run,
      target,
    )!;
    expect(lost.effects).toMatchObject({ state: 'unknown', completion: { state: 'unobserved' } });
    expect(lost.said).toBe(
      'the audit trail says run aaaaaaaa started and ended helper_lost, its end not observed (stopped its process group 77)',
    );
    const open = outcomeFromAudit([start], run, target)!;
    expect(open.effects.state).toBe('unknown');
    expect(open.said).toBe('the audit trail says run aaaaaaaa started, and has no end for it');
  });
});
