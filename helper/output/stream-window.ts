// How a window of a stream's bytes is put in a result (pure): a pending result's tail, which
// starts up to 3 bytes late rather than inside a character, and a tmux_run_output chunk, which ends
// up to 3 bytes early rather than split one. Text when the bytes are UTF-8, else base64.
import { isUtf8 } from 'node:buffer';

export interface Window {
  /** Offset in the stream of the window's first byte. */
  from: number;
  encoding: 'utf-8' | 'base64';
  data: string;
}

export interface Chunk extends Window {
  /** Offset just past the chunk's last byte. */
  to: number;
}

/** A byte that continues a UTF-8 character (10xxxxxx). */
const continues = (b: number): boolean => (b & 0xc0) === 0x80;

/** How many bytes a UTF-8 character that starts with `lead` has (0: not a lead byte). */
function charLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** How many bytes at the end of `bytes` are the start of a character that is not complete (0 to 3). */
export function incompleteEnd(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back]!;
    if (continues(b)) continue;
    const need = charLength(b);
    return need > back ? back : 0;
  }
  return 0;
}

/** The longest last line a progress frame carries, in characters. */
export const LAST_LINE_CHARS = 200;

/**
 * The last whole line in `bytes` (the end of a stream), without its newline, cut to
 * LAST_LINE_CHARS characters (bytes that are not UTF-8 become U+FFFD); undefined when no line in
 * them has ended, or the last one is empty.
 */
export function lastLine(bytes: Buffer): string | undefined {
  const end = bytes.lastIndexOf(0x0a);
  if (end <= 0) return undefined;
  const start = bytes.lastIndexOf(0x0a, end - 1) + 1;
  const line = bytes.subarray(start, end).toString('utf8').replace(/\r$/, '');
  if (line === '') return undefined;
  return [...line].slice(0, LAST_LINE_CHARS).join('');
}

const text = (from: number, bytes: Buffer): Window => ({ from, encoding: 'utf-8', data: bytes.toString('utf8') });
const base64 = (from: number, bytes: Buffer): Window => ({ from, encoding: 'base64', data: bytes.toString('base64') });

/**
 * The tail of a stream: `bytes` are its last bytes, the first of them at offset `from`. When the
 * window does not start the stream, up to 3 leading bytes that continue a character cut off by the
 * window are left out if the rest is then UTF-8; otherwise the whole window comes as base64.
 */
export function tailWindow(bytes: Buffer, from: number): Window {
  const skip = characterStart(bytes, from);
  return skip === undefined ? base64(from, bytes) : text(from + skip, bytes.subarray(skip));
}

/**
 * Where the kept last bytes of a stream (`bytes`, from offset `from`) start as UTF-8 text: how many
 * leading bytes (0 to 3, none at the stream's start) continue a character cut off before them, when
 * the rest is UTF-8; undefined when it is not.
 */
export function characterStart(bytes: Buffer, from: number): number | undefined {
  let skip = 0;
  if (from > 0) while (skip < 3 && skip < bytes.length && continues(bytes[skip]!)) skip++;
  return isUtf8(bytes.subarray(skip)) ? skip : undefined;
}

/**
 * A chunk of a stream: `bytes` are the bytes available from offset `from` (at most the caller's
 * max_bytes). UTF-8 text when they are, ending up to 3 bytes early rather than split a character;
 * base64 when they start inside a character, are not UTF-8, or are only part of one character (a
 * chunk is never empty when there are bytes).
 */
export function chunkWindow(bytes: Buffer, from: number): Chunk {
  if (isUtf8(bytes)) return { ...text(from, bytes), to: from + bytes.length };
  const cut = incompleteEnd(bytes);
  if (cut > 0 && cut < bytes.length) {
    const whole = bytes.subarray(0, bytes.length - cut);
    if (isUtf8(whole)) return { ...text(from, whole), to: from + whole.length };
  }
  return { ...base64(from, bytes), to: from + bytes.length };
}
