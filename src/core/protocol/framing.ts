// Framing: a 4-byte big-endian length, then one msgpack value. Pure: bytes in, frames out.
// Which msgpackr this is: its plain JavaScript Packr and Unpackr (msgpackr's dist/index.js, the
// code 'msgpackr/pack' resolves to under Node; long strings decode with TextDecoder), copied into
// generated/msgpackr.cjs by the build (scripts/build-vendored.mjs), so that msgpackr is needed at
// build time only. Not msgpackr's main entry, which also loads msgpackr-extract, a native addon
// that speeds up string-heavy messages (frames here carry bytes, not long strings): about 3 MB
// resident in every helper, and its load time; an install of tmux-run does not even fetch it.
// test/unit/framing-entry.test.ts checks which code runs under plain Node.
import type * as Msgpackr from 'msgpackr';
import { loadGenerated } from './generated.js';
import { DEFAULT_MAX_FRAME } from './limits.js';

const { Packr, RESERVE_START_SPACE } = loadGenerated<typeof Msgpackr>('msgpackr');
const packr = new Packr({ useRecords: false, mapsAsObjects: true, moreTypes: false });

/** A frame that is too large, not msgpack, or never completed: the link is dropped. */
export class FrameError extends Error {
  constructor(
    message: string,
    readonly reason: 'too_large' | 'not_msgpack' | 'stalled',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Encodes one value as a frame. */
export function encodeFrame(value: unknown): Buffer {
  // Packed with 4 bytes kept free in front for the length: a 256 KiB output is not copied again.
  // (msgpackr returns a view of its own buffer and never writes over a region it returned.)
  const frame = packr.pack(value, RESERVE_START_SPACE | 4);
  frame.writeUInt32BE(frame.length - 4, 0);
  return frame;
}

/**
 * Accumulates chunks and yields whole decoded frames. A length over `maxFrame` or a body that
 * is not msgpack throws FrameError; the connection should then be dropped.
 */
export class FrameDecoder {
  private buf: Buffer = Buffer.alloc(0);
  /** Chunks after `buf`, joined to it only when a frame needs them: a big frame is copied once, not once per chunk. */
  private later: Buffer[] = [];
  private held = 0;
  constructor(private readonly maxFrame: number = DEFAULT_MAX_FRAME) {}

  /** Appends a chunk; returns the values of the frames it completed, in order. */
  push(chunk: Buffer): unknown[] {
    if (this.held === 0) this.buf = chunk;
    else this.later.push(chunk);
    this.held += chunk.length;
    const out: unknown[] = [];
    for (;;) {
      if (this.held < 4) break;
      if (this.buf.length < 4) this.join();
      const len = this.buf.readUInt32BE(0);
      if (len > this.maxFrame)
        throw new FrameError(`frame of ${len} bytes exceeds the limit of ${this.maxFrame}`, 'too_large');
      if (this.held < 4 + len) break;
      if (this.buf.length < 4 + len) this.join();
      const body = this.buf.subarray(4, 4 + len);
      this.buf = this.buf.subarray(4 + len);
      this.held -= 4 + len;
      try {
        out.push(packr.unpack(body));
      } catch (e) {
        throw new FrameError(`frame is not valid msgpack: ${(e as Error).message}`, 'not_msgpack', { cause: e });
      }
    }
    return out;
  }

  private join(): void {
    this.buf = Buffer.concat([this.buf, ...this.later], this.held);
    this.later = [];
  }

  /** Bytes held for an incomplete frame. */
  get pending(): number {
    return this.held;
  }
}
