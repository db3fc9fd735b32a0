// The snapshot as bytes (helper/shell/snapshot.ts) and the exact exec wrapper's pure parts
// (helper/run/exact-exec.ts): what the wrapper is handed and what a refusal names.
import { describe, expect, it } from 'vitest';
import { bytesOf, cwdPath, parseSnapshot } from '../../helper/shell/snapshot.js';
import { e2bigDetail, envRefusal, exactFailure, exactSpec, MAX_ARG_STRLEN } from '../../helper/run/exact-exec.js';

const file = (...parts: (string | Buffer)[]): Buffer =>
  Buffer.concat(parts.flatMap((p, i) => [i ? Buffer.from([0]) : Buffer.alloc(0), Buffer.from(p)]));

describe('a snapshot that is not UTF-8', () => {
  const data = file('n', Buffer.from('/w/lat\xe9n', 'latin1'), Buffer.from('BAD=\xff\xfe ok', 'latin1'), 'OK=é');
  const s = parseSnapshot(data, 'n')!;

  it('keeps the bytes beside the UTF-8 reading', () => {
    expect(s.env.BAD).toBe('\ufffd\ufffd ok');
    expect(s.bytes?.env.BAD).toBe('\xff\xfe ok');
    expect(Buffer.from(s.bytes!.cwd, 'latin1')).toEqual(Buffer.from('/w/lat\xe9n', 'latin1'));
    // A UTF-8 value among them is the same bytes either way.
    expect(Buffer.from(s.bytes!.env.OK!, 'latin1').toString('utf8')).toBe('é');
  });

  it('gives the file system the exact cwd', () => {
    expect(cwdPath(s)).toEqual(Buffer.from('/w/lat\xe9n', 'latin1'));
  });

  it('hands the wrapper the exact bytes, each entry NUL-terminated', () => {
    expect(exactSpec(s.bytes!)).toEqual(Buffer.concat([data.subarray(2), Buffer.from([0])]));
  });
});

describe('a snapshot in UTF-8', () => {
  const s = parseSnapshot(file('n', '/w/é', 'A=ü'), 'n')!;
  it('has no bytes of its own, and its bytes view is its UTF-8 encoding', () => {
    expect(s.bytes).toBeUndefined();
    expect(cwdPath(s)).toBe('/w/é');
    expect(Buffer.from(bytesOf(s).env.A!, 'latin1')).toEqual(Buffer.from('ü'));
  });
});

describe('what the kernel cannot pass', () => {
  it('names a variable over the limit of one string, with its size, never its value', () => {
    const value = 'x'.repeat(MAX_ARG_STRLEN);
    const why = envRefusal({ SMALL: 'a', BIG_ONE: value })!;
    expect(why).toContain(`"BIG_ONE" is ${MAX_ARG_STRLEN + 8} bytes`);
    expect(why).not.toContain('xxxx');
    expect(envRefusal({ FITS: 'y'.repeat(MAX_ARG_STRLEN - 6) })).toBeUndefined();
    expect(envRefusal({ FITS: 'y'.repeat(MAX_ARG_STRLEN - 5) })).toBeDefined();
  });
  it('counts bytes, not characters', () => {
    expect(envRefusal({ U: 'é'.repeat(MAX_ARG_STRLEN / 2) })).toBeDefined();
    expect(envRefusal({ U: '\xe9'.repeat(MAX_ARG_STRLEN / 2) }, true)).toBeUndefined();
  });
  it('names the largest variables when the whole is too big', () => {
    const d = e2bigDetail({ A: 'a'.repeat(100), B: 'b'.repeat(10), C: 'c' });
    expect(d).toContain('"A" 102 bytes, "B" 12 bytes, "C" 3 bytes');
    expect(d).not.toContain('aaa');
  });
  it('says what the wrapper reported', () => {
    expect(exactFailure('C 2')).toMatch(/could not be entered \(ENOENT\)/);
    expect(exactFailure('E 7')).toMatch(/exec failed \(E2BIG\)/);
    expect(exactFailure('')).toBeUndefined();
  });
});
