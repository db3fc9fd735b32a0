// `tmux-run stop RUN` names one held run by its id or a prefix of at least 8 hex digits.
import { describe, expect, it } from 'vitest';
import type { RunListing } from '../../src/broker/long-run.js';
import { pickRun, runPrefix } from '../../src/cli/stop.js';
import { CliError, UsageError } from '../../src/cli/errors.js';

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
});
