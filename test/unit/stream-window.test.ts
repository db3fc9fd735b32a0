// The windows of a stream put in results (helper/stream-window.ts): pending tails that start on a
// character, tmux_run_output chunks that end on one, base64 for what is not UTF-8.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { chunkWindow, incompleteEnd, lastLine, tailWindow, type Window } from '../../helper/output/stream-window.js';

const bytesOf = (w: Window): Buffer => Buffer.from(w.data, w.encoding === 'base64' ? 'base64' : 'utf8');
const euro = Buffer.from('€'); // e2 82 ac

describe('tailWindow', () => {
  it('is the bytes as text when they are UTF-8; from says where they start', () => {
    expect(tailWindow(Buffer.from('abc\n'), 10)).toEqual({ from: 10, encoding: 'utf-8', data: 'abc\n' });
    expect(tailWindow(Buffer.alloc(0), 0)).toEqual({ from: 0, encoding: 'utf-8', data: '' });
  });

  it('starts up to 3 bytes late rather than inside a character', () => {
    expect(tailWindow(Buffer.concat([euro.subarray(1), Buffer.from('x')]), 100)).toEqual({
      from: 102,
      encoding: 'utf-8',
      data: 'x',
    });
    const four = Buffer.from('😀y'); // f0 9f 98 80 79
    expect(tailWindow(four.subarray(1), 7)).toEqual({ from: 10, encoding: 'utf-8', data: 'y' });
  });

  it('keeps every byte as base64 when the rest is not UTF-8, or the window starts the stream', () => {
    const bad = Buffer.from([0x80, 0x41, 0xff]);
    expect(tailWindow(bad, 5)).toEqual({ from: 5, encoding: 'base64', data: bad.toString('base64') });
    // At offset 0 nothing was cut off: a leading continuation byte is the stream's own.
    expect(tailWindow(Buffer.from([0x80, 0x41]), 0).encoding).toBe('base64');
    // Ends inside a character (the rest is not written yet): base64, still ending at the stream's end.
    expect(tailWindow(euro.subarray(0, 2), 3)).toEqual({ from: 3, encoding: 'base64', data: '4oI=' });
  });

  it('from + the byte length of data is always the end of the window', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.nat(1000), (raw, from) => {
        const w = tailWindow(Buffer.from(raw), from);
        expect(w.from + bytesOf(w).length).toBe(from + raw.length);
        expect(w.from - from).toBeLessThanOrEqual(3);
      }),
    );
  });
});

describe('chunkWindow', () => {
  it('is text when the bytes are UTF-8, ending up to 3 bytes early rather than split a character', () => {
    expect(chunkWindow(Buffer.from('héllo'), 4)).toEqual({ from: 4, to: 10, encoding: 'utf-8', data: 'héllo' });
    const cut = Buffer.concat([Buffer.from('ab'), euro.subarray(0, 2)]);
    expect(chunkWindow(cut, 0)).toEqual({ from: 0, to: 2, encoding: 'utf-8', data: 'ab' });
  });

  it('is base64 when it starts inside a character, is not UTF-8, or is only part of one character', () => {
    expect(chunkWindow(Buffer.concat([euro.subarray(1), Buffer.from('a')]), 1).encoding).toBe('base64');
    expect(chunkWindow(Buffer.from([0x41, 0xff, 0x42]), 0)).toMatchObject({ encoding: 'base64', to: 3 });
    expect(chunkWindow(euro.subarray(0, 2), 9)).toEqual({ from: 9, to: 11, encoding: 'base64', data: '4oI=' });
  });

  it('never empty, and chunks read one after another give back exactly the bytes', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string({ unit: 'grapheme', maxLength: 8 }).map((s) => Buffer.from(s)),
            fc.uint8Array({ maxLength: 4 }).map((a) => Buffer.from(a)),
          ),
        ),
        fc.integer({ min: 1, max: 9 }),
        (parts, max) => {
          const all = Buffer.concat(parts);
          const got: Buffer[] = [];
          let at = 0;
          while (at < all.length) {
            const c = chunkWindow(all.subarray(at, at + max), at);
            expect(c.from).toBe(at);
            expect(c.to).toBeGreaterThan(at);
            const b = bytesOf(c);
            expect(b.length).toBe(c.to - c.from);
            got.push(b);
            at = c.to;
          }
          expect(Buffer.concat(got)).toEqual(all);
        },
      ),
    );
  });
});

describe('incompleteEnd', () => {
  it('counts the bytes of a character cut off at the end', () => {
    expect(incompleteEnd(Buffer.from('abc'))).toBe(0);
    expect(incompleteEnd(euro)).toBe(0);
    expect(incompleteEnd(euro.subarray(0, 1))).toBe(1);
    expect(incompleteEnd(euro.subarray(0, 2))).toBe(2);
    expect(incompleteEnd(Buffer.from('😀').subarray(0, 3))).toBe(3);
    expect(incompleteEnd(Buffer.from([0x41, 0xff]))).toBe(0);
  });
});

describe('lastLine', () => {
  it('is the last whole line, without its newline, cut to 200 characters', () => {
    expect(lastLine(Buffer.from('a\nb\npartial'))).toBe('b');
    expect(lastLine(Buffer.from('one\r\n'))).toBe('one');
    expect(lastLine(Buffer.from('x'.repeat(300) + '\n'))).toBe('x'.repeat(200));
    expect(lastLine(Buffer.from('€'.repeat(250) + '\n'))).toBe('€'.repeat(200));
  });

  it('is undefined when no line has ended yet, or the last one is empty', () => {
    expect(lastLine(Buffer.from('partial'))).toBeUndefined();
    expect(lastLine(Buffer.from('\n'))).toBeUndefined();
    expect(lastLine(Buffer.from('a\n\n'))).toBeUndefined();
    expect(lastLine(Buffer.alloc(0))).toBeUndefined();
  });
});
