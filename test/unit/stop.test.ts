// `tmux-run stop RUN` names one held run by its id or a prefix of at least 8 hex digits.
import { describe, expect, it } from 'vitest';
import type { RunListing } from '../../src/broker/held-runs.js';
import { describeStop, pickRun, runPrefix } from '../../src/cli/stop.js';
import { failure } from '../../src/broker/result.js';
import { CliError, UsageError } from '../../src/cli/common/errors.js';

const run = (run_id: string): RunListing => ({ run_id }) as RunListing;
const list = [run('abcdef01' + '0'.repeat(24)), run('abcdef02' + '0'.repeat(24)), run('12345678' + 'f'.repeat(24))];

describe('tmux-run stop RUN', () => {
  it('takes 8 to 32 hex digits, any case; anything else is bad usage', () => {
    expect(runPrefix('ABCDEF01')).toBe('abcdef01');
    for (const bad of ['abcdef0', 'xyz', 'a'.repeat(33), '%1', '']) expect(() => runPrefix(bad)).toThrow(UsageError);
  });

  it('picks the one run a prefix names; none or several is a failure', () => {
    expect(pickRun(list, '12345678').run_id).toBe(list[2]!.run_id);
    expect(pickRun(list, list[0]!.run_id)).toBe(list[0]);
    expect(() => pickRun(list, '99999999')).toThrow(/no held run/);
    expect(() => pickRun(list, 'abcdef0')).toThrow(CliError);
    expect(() => pickRun([...list, run('12345678' + 'e'.repeat(24))], '12345678')).toThrow(/2 held runs/);
  });

  it('says a queued run it stopped never ran, rather than that its end was unobserved', () => {
    const queued = { ...run('abcdef01' + '0'.repeat(24)), pane_id: '%3', state: 'queued' } as RunListing;
    const never = failure('cancelled', 'the run was cancelled while queued', 'observed', {
      state: 'none',
      authorization: null,
      completion: { state: 'unobserved' },
    });
    expect(describeStop(never, queued)).toBe('stopped: run abcdef01 in pane %3 (it was still queued: it never ran)');
    const lost = failure('helper_lost', 'the link broke', 'possibly_sent', {
      state: 'unknown',
      authorization: null,
      completion: { state: 'unobserved' },
    });
    expect(describeStop(lost, { ...queued, state: 'running' })).toBe(
      'helper_lost: run abcdef01 in pane %3 (end unobserved)',
    );
  });
});
