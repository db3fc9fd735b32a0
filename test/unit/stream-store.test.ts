// What a run keeps of a stream (helper/stream-store.ts): everything counted, at most its capacity
// kept (the newest bytes), any kept range readable by absolute offset.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { StreamStore } from '../../helper/output/stream-store.js';

const b = (s: string): Buffer => Buffer.from(s);

describe('StreamStore', () => {
  it('keeps everything while within its capacity', () => {
    const s = new StreamStore(10);
    s.append(b('abc'));
    s.append(b('defg'));
    expect([s.total, s.keptFrom]).toEqual([7, 0]);
    expect(s.read(2, 3)).toEqual({ from: 2, bytes: b('cde') });
    expect(s.last(2)).toEqual({ from: 5, bytes: b('fg') });
    expect(s.contents()).toEqual(b('abcdefg'));
  });

  it('drops the oldest bytes over its capacity and counts them all', () => {
    const s = new StreamStore(5);
    for (const c of ['abc', 'defg', 'hi']) s.append(b(c));
    expect([s.total, s.keptFrom]).toEqual([9, 4]);
    expect(s.contents()).toEqual(b('efghi'));
    // A read from before keptFrom starts at keptFrom; at or past the end it is empty.
    expect(s.read(0, 2)).toEqual({ from: 4, bytes: b('ef') });
    expect(s.read(9, 10)).toEqual({ from: 9, bytes: Buffer.alloc(0) });
    expect(s.read(20, 10)).toEqual({ from: 20, bytes: Buffer.alloc(0) });
    s.append(b('0123456789'));
    expect([s.total, s.keptFrom, s.contents().toString()]).toEqual([19, 14, '56789']);
  });

  it('a capacity of 0 keeps nothing', () => {
    const s = new StreamStore(0);
    s.append(b('abc'));
    expect([s.total, s.keptFrom, s.contents().length]).toEqual([3, 3, 0]);
  });

  it('always holds exactly the last min(total, capacity) bytes, readable in any slices', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.uint8Array({ maxLength: 30 })),
        fc.nat(60),
        fc.integer({ min: 1, max: 50 }),
        (cap, chunks, from, max) => {
          const s = new StreamStore(cap);
          for (const c of chunks) s.append(Buffer.from(c));
          const all = Buffer.concat(chunks.map((c) => Buffer.from(c)));
          const kept = all.subarray(Math.max(0, all.length - cap));
          expect(s.total).toBe(all.length);
          expect(s.keptFrom).toBe(all.length - kept.length);
          const r = s.read(from, max);
          const start = Math.max(from, s.keptFrom);
          expect(r.from).toBe(start);
          expect(r.bytes).toEqual(all.subarray(start, Math.min(all.length, start + max)));
          expect(s.contents()).toEqual(kept);
        },
      ),
    );
  });
});
