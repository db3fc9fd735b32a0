// The first frame of a connection through a remote pane's forward (src/core/enrollment/remote-link.ts),
// read by hand so that what follows it stays on the socket untouched: a control link goes on with
// framed messages, a data link carries the broker-helper protocol as it is.
import type { Socket } from 'node:net';
import { FrameDecoder } from '../core/protocol/framing.js';

/** Frames a link opens with are small: a hello, a key. */
const MAX_FIRST_FRAME = 16 * 1024;

/** Resolves the first frame's value (the bytes after it put back on the socket), or rejects. */
export function readFirstFrame(socket: Socket, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const done = (e?: Error, v?: unknown): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.off('error', onClose);
      if (e) reject(e);
      else resolve(v);
    };
    const onClose = (): void => done(new Error('the link closed before its first frame'));
    const onData = (chunk: Buffer): void => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 4) return;
      const len = buf.readUInt32BE(0);
      if (len > MAX_FIRST_FRAME) return done(new Error(`a first frame of ${len} bytes is too large`));
      if (buf.length < 4 + len) return;
      socket.pause();
      let value: unknown;
      try {
        [value] = new FrameDecoder(MAX_FIRST_FRAME).push(buf.subarray(0, 4 + len));
      } catch (e) {
        return done(e as Error);
      }
      const rest = buf.subarray(4 + len);
      if (rest.length > 0) socket.unshift(rest);
      done(undefined, value);
    };
    const timer = setTimeout(() => done(new Error(`no first frame within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.once('error', onClose);
  });
}
