// One small transport interface for the broker-helper protocol: a real socket or an in-memory pair.
import type { Socket } from 'node:net';
import { FrameDecoder, FrameError, encodeFrame } from './framing.js';
import { DEFAULT_MAX_FRAME } from './limits.js';

/** How long a peer may hold an incomplete frame without completing one before the link is dropped. */
export const FRAME_TIMEOUT_MS = 10_000;

export interface Transport {
  send(message: unknown): void;
  close(): void;
  /** Whether an open link keeps the process alive (true unless said otherwise); an idle pooled link does not. */
  hold?(keepAlive: boolean): void;
  /** Bytes sent but not yet taken by the peer's side of the link (a peer that does not read lets them grow). */
  backlog?(): number;
  onmessage?: (message: unknown) => void;
  /** Called once, when the link is gone (closed by either side, or broken: `error` says how). */
  onclose?: (error?: Error) => void;
}

/** Frames messages over a connected socket; a malformed or oversized frame closes the link. */
export function socketTransport(socket: Socket, maxFrame: number = DEFAULT_MAX_FRAME, onframe?: () => void): Transport {
  const decoder = new FrameDecoder(maxFrame);
  let closed = false;
  // A slow or stuck peer (bytes dribbled, a frame never finished) must not hold the link forever.
  let stalled: NodeJS.Timeout | undefined;
  const t: Transport = {
    send(message) {
      if (!closed && socket.writable) socket.write(encodeFrame(message));
    },
    hold(keepAlive) {
      if (keepAlive) socket.ref();
      else socket.unref();
    },
    backlog: () => socket.writableLength,
    close() {
      if (closed) return;
      // Flush what was sent, then make sure a peer that never answers cannot hold the socket open.
      socket.end();
      setTimeout(() => finish(), 1000).unref();
    },
  };
  const finish = (err?: Error): void => {
    if (closed) return;
    closed = true;
    clearTimeout(stalled);
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
    if (frames.length > 0 || decoder.pending === 0) {
      clearTimeout(stalled);
      stalled = undefined;
    }
    if (decoder.pending > 0 && !stalled) {
      stalled = setTimeout(
        () =>
          finish(new FrameError(`an incomplete frame was held for more than ${FRAME_TIMEOUT_MS / 1000} s`, 'stalled')),
        FRAME_TIMEOUT_MS,
      );
      stalled.unref();
    }
    if (frames.length > 0) onframe?.();
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

/**
 * Admission of a server's links: at most `max` at once. When a new link passes the cap, the oldest
 * link that has not delivered a whole frame yet is dropped to make room (the newcomer itself when
 * every other has), so a flood of silent or dribbling clients cannot lock out a real caller.
 */
export class LinkLimit {
  private readonly open = new Set<Socket>();
  private readonly silent = new Set<Socket>();
  constructor(readonly max: number) {}

  /** Frames `socket` as socketTransport does, counting it against the cap. */
  admit(socket: Socket, maxFrame?: number): Transport {
    const forget = (s: Socket): void => {
      this.open.delete(s);
      this.silent.delete(s);
    };
    this.open.add(socket);
    this.silent.add(socket);
    socket.once('close', () => forget(socket));
    const t = socketTransport(socket, maxFrame, () => this.silent.delete(socket));
    if (this.open.size > this.max) {
      const victim = this.silent.values().next().value ?? socket;
      forget(victim);
      victim.destroy();
    }
    return t;
  }
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
      // Messages sent before close are still delivered, as on a socket.
      queueMicrotask(() => {
        if (!open) return;
        open = false;
        a.onclose?.();
        b.onclose?.();
      });
    };
  };
  link(a, b);
  link(b, a);
  return [a, b];
}
