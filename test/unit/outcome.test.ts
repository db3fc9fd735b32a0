// A started run's report (helper/outcome.ts): the final reply, the audit trail's end entry and the
// pane's notice, for each way a run ends.
import { describe, expect, it } from 'vitest';
import { reportOf, type Reported } from '../../helper/queue/outcome.js';
import type { RunOutcome } from '../../helper/run/run-spec.js';

const runId = '0123456789abcdef'.repeat(2);
const job: Reported = {
  binding: { run_id: runId, script_digest: 'd'.repeat(64), stdout_limit: 1000, stderr_limit: 100 },
};
const exited = (status: number) => ({ state: 'exited', exit_status: status, signal: null }) as const;
const signaled = (signal: number) => ({ state: 'signaled', exit_status: null, signal }) as const;

function outcome(over: Partial<RunOutcome>): RunOutcome {
  return {
    reason: 'completed',
    stdout: Buffer.from('out'),
    stderr: Buffer.from('err'),
    stdoutBytes: 3,
    stderrBytes: 3,
    durationMs: 12,
    ...over,
  };
}

/** The end entry's fields that every started run has. */
const endOf = (o: RunOutcome, rest: Record<string, unknown>) => ({
  event: 'end',
  run_id: runId,
  pane_id: '%5',
  script_digest: 'd'.repeat(64),
  ran: true,
  exit_status: o.completion?.exit_status ?? null,
  signal: o.completion?.signal ?? null,
  stdout_bytes: o.stdoutBytes,
  stderr_bytes: o.stderrBytes,
  duration_ms: o.durationMs,
  ...rest,
});

const stopMessage = (by: string, how: string) =>
  `${by} tmux-run stopped its process group (descendants that left the group may still run); the script ${how}`;

describe('reportOf', () => {
  it('a completed exit: done with the output; the end entry says exited; the notice its status', () => {
    const o = outcome({ completion: exited(3) });
    const r = reportOf(job, o, '%5');
    expect(r.reply).toEqual({
      type: 'done',
      run_id: runId,
      completion: exited(3),
      stdout: Buffer.from('out'),
      stderr: Buffer.from('err'),
      duration_ms: 12,
    });
    expect(r.end).toEqual(endOf(o, { outcome: 'exited' }));
    expect(r.notice).toBe('tmux-run: run 01234567 exited 3 after 12 ms');
  });

  it('a completed run killed by a signal (not by tmux-run): done, outcome signaled', () => {
    const o = outcome({ completion: signaled(9) });
    const r = reportOf(job, o, '%5');
    expect(r.reply).toMatchObject({ type: 'done', completion: signaled(9) });
    expect(r.end).toEqual(endOf(o, { outcome: 'signaled' }));
    expect(r.notice).toBe('tmux-run: run 01234567 was killed by signal 9 after 12 ms');
  });

  it('output over the limit, the script then exited: says it was an exit, not the stop', () => {
    const o = outcome({
      reason: 'output_limit_exceeded',
      overflow: 'stderr',
      completion: exited(0),
      stderrBytes: 150,
    });
    const r = reportOf(job, o, '%5');
    expect(r.reply).toEqual({
      type: 'error',
      code: 'output_limit_exceeded',
      message:
        "stderr passed its limit of 100 bytes (at least 150 bytes seen), so tmux-run stopped the run's process group (SIGTERM, then SIGKILL after a grace); the script exited 0 (an exit, not a signal: it ended before or despite the stop)",
      ran: true,
      run_id: runId,
      completion: exited(0),
      stdout_bytes: 3,
      stderr_bytes: 150,
    });
    expect(r.end).toEqual(endOf(o, { outcome: 'output_limit_exceeded' }));
    expect(r.notice).toBe('tmux-run: run 01234567 exited 0 (output limit exceeded) after 12 ms');
  });

  it('output over the limit, the script then killed by the stop: says the signal was tmux-run’s', () => {
    const o = outcome({
      reason: 'output_limit_exceeded',
      overflow: 'stdout',
      completion: signaled(15),
      stdoutBytes: 1200,
    });
    const r = reportOf(job, o, '%5');
    expect(r.reply).toMatchObject({
      type: 'error',
      code: 'output_limit_exceeded',
      message:
        "stdout passed its limit of 1000 bytes (at least 1200 bytes seen), so tmux-run stopped the run's process group (SIGTERM, then SIGKILL after a grace); the script then was killed by signal 15, a signal sent by tmux-run",
      ran: true,
      completion: signaled(15),
      stdout_bytes: 1200,
    });
    expect(r.end).toEqual(endOf(o, { outcome: 'output_limit_exceeded' }));
    expect(r.notice).toBe('tmux-run: run 01234567 was killed by signal 15 (output limit exceeded) after 12 ms');
  });

  it('output over the limit with no end observed: no completion, says so', () => {
    const r = reportOf(job, outcome({ reason: 'output_limit_exceeded', overflow: 'stdout' }), '%5');
    expect(r.reply).not.toHaveProperty('completion');
    expect(r.reply).toMatchObject({ message: expect.stringMatching(/; its end was not observed$/) });
  });

  it('cancelled by its caller: code cancelled, the caller’s reason in the end entry only', () => {
    const o = outcome({ reason: 'cancelled', completion: signaled(15) });
    const r = reportOf({ ...job, stopReason: 'cancelled', cancelReason: 'user pressed stop' }, o, '%5');
    expect(r.reply).toEqual({
      type: 'error',
      code: 'cancelled',
      message: stopMessage('the run was cancelled;', 'was killed by signal 15'),
      ran: true,
      run_id: runId,
      completion: signaled(15),
    });
    expect(r.end).toEqual(
      endOf(o, { outcome: 'cancelled', detail: 'the caller cancelled it (reason given: user pressed stop)' }),
    );
    expect(r.notice).toBe('tmux-run: run 01234567 was killed by signal 15 (cancelled) after 12 ms');
    // A stop with no recorded reason counts as the caller's cancel.
    expect(reportOf(job, o, '%5').end).toEqual(endOf(o, { outcome: 'cancelled', detail: 'the caller cancelled it' }));
  });

  it('stopped because the caller went away or a tmux_run_cancel asked: code cancelled, who stopped it', () => {
    const o = outcome({ reason: 'cancelled', completion: exited(0) });
    const gone = reportOf({ ...job, stopReason: 'caller_gone', cancelReason: 'ignored' }, o, '%5');
    expect(gone.reply).toMatchObject({
      code: 'cancelled',
      message: stopMessage('the caller went away while the run was executing, so', 'exited 0'),
    });
    expect(gone.end).toEqual(endOf(o, { outcome: 'cancelled', detail: 'the caller went away' }));
    const asked = reportOf({ ...job, stopReason: 'cancel_requested' }, o, '%5');
    expect(asked.reply).toMatchObject({
      code: 'cancelled',
      message: stopMessage('a tmux_run_cancel request stopped the run, so', 'exited 0'),
    });
    expect(asked.end).toEqual(endOf(o, { outcome: 'cancelled', detail: 'a tmux_run_cancel request stopped it' }));
  });

  it('stopped because the shell exited or the enrollment was revoked: code shell_exited, not cancelled', () => {
    const o = outcome({ reason: 'cancelled', completion: signaled(9) });
    for (const [why, detail] of [
      ['shell_exited', 'the enrolled shell exited'],
      ['revoked', 'the enrollment was revoked'],
    ] as const) {
      const r = reportOf({ ...job, stopReason: why }, o, '%5');
      expect(r.reply).toEqual({
        type: 'error',
        code: 'shell_exited',
        message: stopMessage(`${detail} while the run was executing, so`, 'was killed by signal 9'),
        ran: true,
        run_id: runId,
        completion: signaled(9),
      });
      expect(r.end).toEqual(endOf(o, { outcome: 'shell_exited', detail }));
      expect(r.notice).toBe('tmux-run: run 01234567 was killed by signal 9 (cancelled) after 12 ms');
    }
  });

  it('spawn failed: an error that says nothing ran, with the cause', () => {
    const o = outcome({ reason: 'spawn_failed', error: 'spawn /bin/sh ENOENT', stdoutBytes: 0, stderrBytes: 0 });
    const r = reportOf(job, o, '%5');
    expect(r.reply).toEqual({
      type: 'error',
      code: 'spawn_failed',
      message: '/bin/sh could not be started: spawn /bin/sh ENOENT',
      ran: false,
      run_id: runId,
    });
    // Nothing ran, and the audit trail says so as the reply does.
    expect(r.end).toEqual(endOf(o, { outcome: 'spawn_failed', ran: false }));
    expect(r.notice).toBe('tmux-run: run 01234567 did not start (spawn failed) after 12 ms');
    // A run that "completed" without a completion is reported the same way.
    const none = reportOf(job, outcome({}), '%5');
    expect(none.reply).toEqual({
      type: 'error',
      code: 'spawn_failed',
      message: '/bin/sh could not be started',
      ran: false,
      run_id: runId,
    });
    expect(none.end).toMatchObject({ outcome: 'spawn_failed', ran: false });
    expect(none.notice).toBe('tmux-run: run 01234567 did not start after 12 ms');
  });
});
