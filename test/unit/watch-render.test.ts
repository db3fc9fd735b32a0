// What tmux-run watch prints (src/cli/watch-render.ts): escaped, cut to the width, coloured only
// when colour is on, output split into lines as they complete, and --json events.
import { describe, expect, it } from 'vitest';
import type { WatchEvent } from '../../src/core/protocol/messages.js';
import { cutTo, jsonEvent, PARTIAL_MS, WatchRenderer } from '../../src/cli/watch-render.js';

const RUN = 'ab'.repeat(16);
const at = new Date(2026, 11, 1, 9, 8, 7).getTime();
const out = (data: string | Buffer, from = 0, stream: 'stdout' | 'stderr' = 'stdout'): WatchEvent => ({
  type: 'watch_event',
  ev: 'output',
  run_id: RUN,
  at,
  stream,
  from,
  data: Buffer.isBuffer(data) ? data : Buffer.from(data),
});
const start: WatchEvent = {
  type: 'watch_event',
  ev: 'start',
  run_id: RUN,
  at,
  client: 'codex\x1b[31m 1',
  script_digest: 'c'.repeat(64),
  approval: 'yes',
  sandbox: 'workspace',
  background: false,
  script_bytes: 40,
  script_lines: 7,
  preview: ['echo \\x1b[2J', 'b', 'c', 'd', 'e'],
};

describe('tmux-run watch output', () => {
  it('a start: who asked (escaped), mode, sandbox, digest, size, then the first lines and how many more', () => {
    const lines = new WatchRenderer({ color: false }).event('%3', start);
    expect(lines[0]).toBe(
      '09:08:07 %3 abababab start   by codex\\x1b[31m 1; mode ask: you approved it; sandbox workspace; sha256 cccccccccccc; 40 bytes, 7 lines',
    );
    expect(lines[1]).toBe('09:08:07 %3 abababab   |     echo \\x1b[2J');
    expect(lines.at(-1)).toBe('09:08:07 %3 abababab   |     (2 more lines not shown)');
  });

  it('output: complete lines at once, an open line when it ends or grows stale, controls as \\xHH', () => {
    const r = new WatchRenderer({ color: false });
    expect(r.event('%3', out('one\ntw'))).toEqual(['09:08:07 %3 abababab out     one']);
    expect(r.event('%3', out('o\x1b]0;t\x07\r\n', 6))).toEqual(['09:08:07 %3 abababab out     two\\x1b]0;t\\x07']);
    expect(r.event('%3', out('oops', 0, 'stderr'))).toEqual([]);
    expect(r.stale(at + PARTIAL_MS - 1)).toEqual([]);
    expect(r.stale(at + PARTIAL_MS)[0]).toMatch(/ err +oops$/);
    // A character split between two chunks is whole on the screen.
    const euro = Buffer.from('€\n');
    expect(r.event('%3', out(euro.subarray(0, 1)))).toEqual([]);
    expect(r.event('%3', out(euro.subarray(1)))).toEqual(['09:08:07 %3 abababab out     €']);
    const end: WatchEvent = {
      type: 'watch_event',
      ev: 'end',
      run_id: RUN,
      at,
      ok: false,
      code: 'output_limit_exceeded',
      completion: { state: 'signaled', exit_status: null, signal: 15 },
      duration_ms: 1500,
      stdout_bytes: 70000,
      stderr_bytes: 4,
    };
    r.event('%3', out('tail-without-newline', 20));
    expect(r.event('%3', end)).toEqual([
      '09:08:07 %3 abababab out     tail-without-newline',
      '09:08:07 %3 abababab end     output_limit_exceeded (killed by signal 15) after 1.5 s (70000 bytes of stdout, 4 of stderr)',
    ]);
  });

  it('cuts every line to the width, after escaping, and colours only when colour is on', () => {
    const narrow = new WatchRenderer({ color: false }, 30);
    const [line] = narrow.event('%3', out(`${'x'.repeat(50)}\n`));
    expect(line).toBe('09:08:07 %3 abababab out   ...');
    expect(Array.from(line!)).toHaveLength(30);
    expect(cutTo('\\x1b'.repeat(3), 8)).toBe('\\x1b...');
    expect(cutTo('\\x1b'.repeat(3), 9)).toBe('\\x1b...');
    const [plain] = new WatchRenderer({ color: false }).event('%3', out('e\n', 0, 'stderr'));
    expect(plain).not.toContain('\x1b');
    const [coloured] = new WatchRenderer({ color: true }).event('%3', out('e\n', 0, 'stderr'));
    expect(coloured).toBe('\x1b[2m09:08:07 %3 abababab \x1b[0m\x1b[31merr     \x1b[0me');
  });

  it('--json: one object per event, output as UTF-8 text when it is, else base64', () => {
    expect(JSON.parse(jsonEvent('%3', out('hi\n')))).toEqual({
      event: 'output',
      time: new Date(at).toISOString(),
      pane_id: '%3',
      run_id: RUN,
      stream: 'stdout',
      from: 0,
      encoding: 'utf-8',
      data: 'hi\n',
    });
    expect(JSON.parse(jsonEvent('%3', out(Buffer.from([0xff, 0x00])))).data).toBe('/wA=');
    const raw = jsonEvent('%3', { ...start, client: 'a\u009bb' });
    expect(raw).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(JSON.parse(raw).client).toBe('a\u009bb');
  });
});
