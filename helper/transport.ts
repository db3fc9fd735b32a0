// One small transport interface for the broker-helper protocol: a real socket or an in-memory pair.
import type { Socket } from 'node:net';
import { DEFAULT_MAX_FRAME, FrameDecoder, encodeFrame } from './framing.js';

export interface Transport {
  send(message: unknown): void;
  close(): void;
  onmessage?: (message: unknown) => void;
  /** Called once, when the link is gone (closed by either side, or broken: `error` says how). */
  onclose?: (error?: Error) => void;
}

/** Frames messages over a connected socket; a malformed or oversized frame closes the link. */
export function socketTransport(socket: Socket, maxFrame: number = DEFAULT_MAX_FRAME): Transport {
  const decoder = new FrameDecoder(maxFrame);
  let closed = false;
  const t: Transport = {
    send(message) {
      if (!closed && socket.writable) socket.write(encodeFrame(message));
    },
    close() {
      if (!closed) socket.end();
    },
  };
  const finish = (err?: Error): void => {
    if (closed) return;
    closed = true;
    socket.destroy();
    t.onclose?.(err);
  };
  socket.on('data', (chunk: Buffer) => {
    if (closed) return;
    let frames: unknown[];
    try {
      frames = decoder.push(chunk);
    } catch (e) {
      finish(e as Error);
      return;
    }
    for (const f of frames) {
      if (closed) return;
      t.onmessage?.(f);
    }
  });
  socket.on('error', (e) => finish(e));
  socket.on('close', () => finish());
  socket.on('end', () => finish());
  return t;
}

/** Two linked in-memory transports that still encode and decode every frame (for unit tests). */
export function memoryPair(): [Transport, Transport] {
  let open = true;
  const mk = (): Transport => ({ send: () => {}, close: () => {} });
  const a = mk();
  const b = mk();
  const link = (from: Transport, to: Transport): void => {
    from.send = (m) => {
      if (!open) return;
      const frame = encodeFrame(m);
      queueMicrotask(() => {
        for (const f of new FrameDecoder().push(frame)) if (open) to.onmessage?.(f);
      });
    };
    from.close = () => {
      if (!open) return;
      open = false;
      queueMicrotask(() => {
        a.onclose?.();
        b.onclose?.();
      });
    };
  };
  link(a, b);
  link(b, a);
  return [a, b];
}
