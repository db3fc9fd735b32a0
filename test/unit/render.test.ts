// The text renderings a person (or an agent reading text only) sees for long-run results: a stream
// cut by overflow tail says that only its end was kept, and a read past the end of a finished
// stream does not promise more bytes.
import { describe, expect, it } from 'vitest';
import { renderText, type LongResult, type ToolResult } from '../../src/broker/result.js';
import { renderOutput, type OutputResult } from '../../src/broker/run-output.js';

const target = { kind: 'pane' as const, id: '%3', generation: 'g' };
const authorization = {
  state: 'authorized' as const,
  run_id: 'a'.repeat(32),
  script_digest: 'b'.repeat(64),
  server_generation: '1.2.abc',
  pane_id: '%3',
  enrollment_generation: 'c'.repeat(32),
  process_generation: 'd'.repeat(32),
};

function finished(stdout: Extract<ToolResult, { ok: true }>['data']['stdout']): ToolResult {
  return {
    ok: true,
    data: {
      target,
      authorization,
      completion: { state: 'exited', exit_status: 0, signal: null },
      stdout,
      stderr: { encoding: 'utf-8', data: '', bytes: 0, truncated: false },
    },
  };
}

describe('text of a final result', () => {
  it('says when a stream kept only its last bytes (overflow tail)', () => {
    const text = renderText(
      finished({ encoding: 'utf-8', data: '200000\n', bytes: 1288895, truncated: true, kept_from: 1288888 }),
      'tmux_run_wait',
    );
    expect(text).toContain('stdout (1288895 bytes; only the last 7 kept, from byte 1288888: over its limit');
    const none = renderText(finished({ encoding: 'utf-8', data: '', bytes: 3, truncated: true, kept_from: 3 }));
    expect(none).toContain('stdout (3 bytes; none kept');
  });

  it("shows a script's control characters as \\xHH, newlines and tabs as they are", () => {
    const raw = 'a\tb\n\u001b[2J\u001b]0;title\u0007x\ry\u009bz\n';
    const text = renderText(
      finished({ encoding: 'utf-8', data: raw, bytes: Buffer.byteLength(raw), truncated: false }),
    );
    expect(text).toContain('a\tb\n\\x1b[2J\\x1b]0;title\\x07x\\x0dy\\x9bz\n');
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });

  it('is as before for a stream within its limit', () => {
    const text = renderText(finished({ encoding: 'utf-8', data: 'hi\n', bytes: 3, truncated: false }));
    expect(text).toBe('run aaaaaaaa in pane %3: exit status 0\nstdout (3 bytes):\nhi\n\nstderr: (empty)');
  });
});

describe('text of a pending result', () => {
  const tail = { encoding: 'utf-8' as const, data: 'up\n', from: 0 };
  const pending = (background: boolean): LongResult => ({
    pending: {
      run_id: 'a'.repeat(32),
      target,
      authorization,
      state: 'running',
      elapsed_ms: 4000,
      stdout_bytes: 3,
      stderr_bytes: 0,
      stdout_tail: tail,
      stderr_tail: { ...tail, data: '' },
      background,
    },
  });

  it('after a cancel that did not wait for the end, says the stop is under way', () => {
    for (const bg of [false, true]) {
      const text = renderText(pending(bg), 'tmux_run_cancel');
      expect(text).toContain('is running');
      expect(text).toContain('stopping: its process group got SIGTERM');
      expect(text).not.toContain('stop it with tmux_run_cancel');
    }
  });

  it("escapes a tail's control characters too", () => {
    const p = pending(false) as { pending: { stdout_tail: { data: string } } };
    p.pending.stdout_tail = { ...tail, data: 'up\u001b[1A\r\n' };
    expect(renderText(p as LongResult, 'tmux_run_wait')).toContain('up\\x1b[1A\\x0d\n');
  });

  it('from a wait, says what to call next', () => {
    expect(renderText(pending(false), 'tmux_run_wait')).toContain('call tmux_run_wait with this run_id');
    expect(renderText(pending(true), 'tmux_run_wait')).toContain('stop it with tmux_run_cancel when done');
    expect(renderText(pending(false), 'tmux_run_wait')).not.toContain('stopping');
  });
});

describe('text of a tmux_run_output chunk', () => {
  const chunk = (over: Partial<Extract<OutputResult, { ok: true }>['data']>): OutputResult => ({
    ok: true,
    data: {
      run_id: 'a'.repeat(32),
      target,
      state: 'finished',
      stream: 'stdout',
      from: 14,
      to: 14,
      encoding: 'utf-8',
      data: '',
      total_bytes: 13,
      kept_from: 0,
      finished: true,
      ...over,
    },
  });

  it('past the end of a finished stream says where it ended, not "yet"', () => {
    const text = renderOutput(chunk({}));
    expect(text).toContain('the stream ended at byte 13');
    expect(text).not.toMatch(/yet/);
  });

  it("shows a chunk's control characters as \\xHH", () => {
    const text = renderOutput(chunk({ from: 0, to: 6, total_bytes: 6, data: 'ok\u001b[0m\n' }));
    expect(text).toMatch(/:\nok\\x1b\[0m\n$/);
  });

  it('at the end of a running stream says no bytes yet', () => {
    expect(renderOutput(chunk({ state: 'running', finished: false, from: 13, to: 13 }))).toMatch(
      /no bytes from offset 13 yet$/,
    );
  });
});
