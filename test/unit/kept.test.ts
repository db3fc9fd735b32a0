// A final reply's stream for a run with overflow tail (helper/outcome.ts keptOf): within its limit
// as it is; past it, its kept last bytes starting on a character, with every byte counted.
import { describe, expect, it } from 'vitest';
import { keptOf, reportOf, type Reported } from '../../helper/queue/outcome.js';
import type { RunOutcome } from '../../helper/run/run-spec.js';

describe('keptOf', () => {
  it('a stream within its limit is all there, not truncated', () => {
    expect(keptOf(Buffer.from('abc'), 3)).toEqual({ data: Buffer.from('abc') });
    expect(keptOf(Buffer.alloc(0), 0)).toEqual({ data: Buffer.alloc(0) });
  });

  it('past its limit: the kept bytes, kept_from = bytes - limit', () => {
    expect(keptOf(Buffer.from('6\n7\n'), 100)).toEqual({
      data: Buffer.from('6\n7\n'),
      truncation: { bytes: 100, kept_from: 96 },
    });
  });

  it('starts up to 3 bytes later so that UTF-8 data starts on a character', () => {
    const kept = Buffer.concat([Buffer.from('€').subarray(1), Buffer.from('ok\n')]);
    expect(keptOf(kept, 1000)).toEqual({ data: Buffer.from('ok\n'), truncation: { bytes: 1000, kept_from: 997 } });
  });

  it('output that is not UTF-8 keeps every kept byte', () => {
    const kept = Buffer.from([0x80, 0xff, 0x41]);
    expect(keptOf(kept, 10)).toEqual({ data: kept, truncation: { bytes: 10, kept_from: 7 } });
  });
});

describe('reportOf with overflow tail and background', () => {
  const runId = 'ab'.repeat(16);
  const job: Reported = {
    binding: { run_id: runId, script_digest: 'd'.repeat(64), stdout_limit: 4, stderr_limit: 100 },
    background: true,
  };
  const o: RunOutcome = {
    reason: 'completed',
    completion: { state: 'exited', exit_status: 0, signal: null },
    stdout: Buffer.from('7\n8\n'),
    stderr: Buffer.from('e'),
    stdoutBytes: 16,
    stderrBytes: 1,
    durationMs: 5,
  };

  it('a truncated stream says so in the reply, counts every byte in the end entry, and the notice says background', () => {
    const r = reportOf(job, o, '%2');
    expect(r.reply).toMatchObject({
      type: 'done',
      stdout: Buffer.from('7\n8\n'),
      truncated: { stdout: { bytes: 16, kept_from: 12 } },
    });
    expect((r.reply as { truncated?: object }).truncated).not.toHaveProperty('stderr');
    expect(r.end).toMatchObject({ outcome: 'exited', stdout_bytes: 16, stderr_bytes: 1 });
    expect(r.notice).toBe(`tmux-run: run ${runId.slice(0, 8)} (in the background) exited 0 after 5 ms`);
  });

  it('a run within its limits has no truncated field', () => {
    const r = reportOf({ binding: job.binding }, { ...o, stdoutBytes: 4 }, '%2');
    expect(r.reply).not.toHaveProperty('truncated');
    expect(r.notice).toBe(`tmux-run: run ${runId.slice(0, 8)} exited 0 after 5 ms`);
  });
});
