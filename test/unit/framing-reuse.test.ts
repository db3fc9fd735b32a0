// encodeFrame packs into msgpackr's own buffer with room for the length in front (no copy): a
// frame handed out stays intact while later frames are encoded (a socket may still be writing it).
import { describe, expect, it } from 'vitest';
import { FrameDecoder, encodeFrame } from '../../src/core/protocol/framing.js';

describe('encodeFrame', () => {
  it('keeps every frame it returned intact across later encodes, large and small', () => {
    const big = Buffer.alloc(262144, 0x61);
    const values: unknown[] = [
      { type: 'done', stdout: big, n: 0 },
      ...Array.from({ length: 300 }, (_, i) => ({ type: 'queued', run_id: 'a'.repeat(32), position: i })),
      { type: 'done', stdout: Buffer.alloc(100000, 0x62), n: 1 },
      'x'.repeat(70000),
    ];
    const frames = values.map((v) => encodeFrame(v));
    const copies = frames.map((f) => Buffer.from(f));
    for (let i = 0; i < 200; i++) encodeFrame({ filler: Buffer.alloc(5000, i), i });
    frames.forEach((f, i) => expect(f.equals(copies[i]!)).toBe(true));
    for (const [i, f] of frames.entries()) {
      expect(f.readUInt32BE(0)).toBe(f.length - 4);
      expect(new FrameDecoder().push(f)).toEqual([values[i]]);
    }
  });
});
