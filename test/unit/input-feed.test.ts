// A run's input feed (helper/run/input-feed.ts): bytes in call order, held until the run has its
// stdin, at most 1 MiB undelivered (a call past it is refused whole), eof, the end of the run,
// and the person's attach, against a real pipe.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { InputFeed } from '../../helper/run/input-feed.js';
import { INPUT_BACKLOG_BYTES } from '../../src/core/protocol/limits.js';

/** A sink that keeps what it is written and whether it was ended; `stuck` holds every write unacknowledged. */
function sink(stuck = false): Writable & { got: Buffer[]; ended: boolean } {
  const w = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _e, cb) {
      w.got.push(chunk);
      if (!stuck) cb();
    },
    final(cb) {
      w.ended = true;
      cb();
    },
  }) as Writable & { got: Buffer[]; ended: boolean };
  w.got = [];
  w.ended = false;
  return w;
}

const take = (f: InputFeed, text: string, eof = false): void => {
  const data = Buffer.from(text);
  expect(f.refusal(data, eof)).toBeUndefined();
  f.take(data, eof);
};

describe('the input feed', () => {
  it('holds input given before the run starts and writes it in order once it does, then eof', async () => {
    const f = new InputFeed('pipe');
    const seen: Array<[string, number]> = [];
    f.onInput = (c, from) => seen.push([c.toString(), from]);
    take(f, 'one ');
    take(f, 'two', true);
    expect(f.backlog()).toBe(7);
    const s = sink();
    f.connect(s);
    await new Promise((r) => setImmediate(r));
    expect(Buffer.concat(s.got).toString()).toBe('one two');
    expect(s.ended).toBe(true);
    expect(seen).toEqual([
      ['one ', 0],
      ['two', 4],
    ]);
    expect([f.given, f.calls, f.closed]).toEqual([7, 2, true]);
    expect(f.refusal(Buffer.from('x'), false)?.code).toBe('input_closed');
  });

  it('refuses a call that would leave more than 1 MiB undelivered, taking none of it', () => {
    const f = new InputFeed('pipe');
    const s = sink(true);
    f.connect(s);
    const chunk = Buffer.alloc(65536, 0x61);
    for (let i = 0; i < INPUT_BACKLOG_BYTES / chunk.length; i++) {
      expect(f.refusal(chunk, false)).toBeUndefined();
      f.take(chunk, false);
    }
    expect(f.backlog()).toBe(INPUT_BACKLOG_BYTES);
    const r = f.refusal(Buffer.from('x'), false);
    expect(r?.code).toBe('input_backlog');
    expect(f.given).toBe(INPUT_BACKLOG_BYTES);
    // An empty call (eof alone) still fits.
    expect(f.refusal(Buffer.alloc(0), true)).toBeUndefined();
  });

  it("refuses the agent while the person is attached, not the person's keys", () => {
    const f = new InputFeed('terminal');
    f.attached = true;
    expect(f.refusal(Buffer.from('a'), false)?.code).toBe('run_attached');
    expect(f.refusal(Buffer.from('a'), false, true)).toBeUndefined();
    expect(f.refusal(Buffer.alloc(0), true, true)?.code).toBe('invalid_arguments');
  });

  it('takes nothing once the run has ended', () => {
    const f = new InputFeed('pipe');
    take(f, 'never delivered');
    f.end();
    expect(f.backlog()).toBe(0);
    expect(f.refusal(Buffer.from('x'), false)).toMatchObject({ code: 'input_closed' });
    expect(f.refusal(Buffer.from('x'), false)?.message).toMatch(/ended/);
  });
});
