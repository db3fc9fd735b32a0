// A final reply's stream for a run with overflow tail (helper/outcome.ts keptOf): within its limit
// as it is; past it, its kept last bytes starting on a character, with every byte counted.
import { describe, expect, it } from 'vitest';
import { keptOf } from '../../helper/outcome.js';

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
