// The bytes a run keeps of one output stream (pure): every byte is counted, at most `capacity` of
// the newest are kept (a ring of chunks; the oldest are dropped first), and any range of what is
// kept can be read by absolute offset. Memory: at most `capacity` bytes, plus the chunk being added.
export class StreamStore {
  /** Every byte the stream produced. */
  total = 0;
  private chunks: Buffer[] = [];
  private held = 0;

  /** Called with each chunk and its offset as it is counted (the watch feed: helper/watch/feed.ts). */
  onAppend?: (chunk: Buffer, from: number) => void;

  constructor(readonly capacity: number) {}

  /** Offset of the oldest byte still kept (0 until the stream passed its capacity). */
  get keptFrom(): number {
    return this.total - this.held;
  }

  /** Counts a chunk and keeps it, dropping the oldest bytes over the capacity. */
  append(chunk: Buffer): void {
    this.onAppend?.(chunk, this.total);
    this.total += chunk.length;
    if (chunk.length >= this.capacity) {
      // Copied, so that the bytes dropped do not stay alive behind a view of them.
      this.chunks = this.capacity === 0 ? [] : [Buffer.from(chunk.subarray(chunk.length - this.capacity))];
      this.held = this.capacity;
      return;
    }
    this.chunks.push(chunk);
    this.held += chunk.length;
    while (this.held > this.capacity) {
      const head = this.chunks[0]!;
      const excess = this.held - this.capacity;
      if (head.length <= excess) {
        this.chunks.shift();
        this.held -= head.length;
      } else {
        this.chunks[0] = Buffer.from(head.subarray(excess));
        this.held -= excess;
      }
    }
  }

  /** Up to `max` kept bytes from offset `from` (or from keptFrom when `from` is older), and where they start. */
  read(from: number, max: number): { from: number; bytes: Buffer } {
    const start = Math.max(from, this.keptFrom);
    const end = Math.min(this.total, start + max);
    if (start >= end) return { from: start, bytes: Buffer.alloc(0) };
    const parts: Buffer[] = [];
    let at = this.keptFrom;
    for (const c of this.chunks) {
      const next = at + c.length;
      if (next > start && at < end) parts.push(c.subarray(Math.max(0, start - at), Math.min(c.length, end - at)));
      if (next >= end) break;
      at = next;
    }
    return { from: start, bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts) };
  }

  /** The last `n` bytes kept, and where they start. */
  last(n: number): { from: number; bytes: Buffer } {
    return this.read(Math.max(0, this.total - n), n);
  }

  /** Every byte kept, as one buffer (which the store then keeps instead of its chunks). */
  contents(): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.held);
    this.chunks = this.held === 0 ? [] : [all];
    return all;
  }
}
