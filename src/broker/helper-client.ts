// The broker's side of the helper socket: connect, send one request, read its replies.
import { connect } from 'node:net';
import { socketTransport, type Transport } from '../core/protocol/transport.js';
import { checkReply, type Reply, type Request } from '../core/protocol/messages.js';

/** Connection failures before anything was sent. */
export class ConnectError extends Error {
  constructor(
    message: string,
    readonly errno: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Opens a transport to a helper socket; rejects with ConnectError within `timeoutMs`. */
export function connectHelper(path: string, timeoutMs = 2000): Promise<Transport> {
  return new Promise((resolve, reject) => {
    const sock = connect(path);
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new ConnectError(`the helper at ${path} did not accept a connection within ${timeoutMs} ms`, 'ETIMEDOUT'));
    }, timeoutMs);
    sock.once('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new ConnectError(`cannot connect to the helper at ${path}: ${e.code ?? e.message}`, e.code, { cause: e }));
    });
    sock.once('connect', () => {
      clearTimeout(timer);
      sock.removeAllListeners('error');
      resolve(socketTransport(sock));
    });
  });
}

export interface Exchange {
  /** Sends one request; replies arrive through `onreply`, validated. */
  send(req: Request): void;
  close(): void;
  onreply?: (reply: Reply) => void;
  /** The link ended; `error` when a reply was malformed or the socket broke. */
  onclose?: (error?: Error) => void;
}

/** Wraps a transport so that every reply is validated against schemas/wire/reply. */
export function exchange(t: Transport): Exchange {
  const x: Exchange = {
    send: (req) => t.send(req),
    close: () => t.close(),
  };
  t.onmessage = (raw) => {
    const r = checkReply(raw);
    if (!r.ok) {
      t.close();
      x.onclose?.(new Error(`the helper sent a malformed reply: ${r.error}`));
      x.onclose = undefined;
      return;
    }
    x.onreply?.(r.value);
  };
  t.onclose = (e) => {
    x.onclose?.(e);
    x.onclose = undefined;
  };
  return x;
}

/**
 * Sends one request on a fresh link and resolves with the first reply `pick` accepts, or undefined
 * when the helper does not connect or answer within `timeoutMs` (or answers something else).
 */
export async function askOnce<T>(
  path: string,
  request: Request,
  pick: (reply: Reply) => T | undefined,
  timeoutMs = 1000,
): Promise<T | undefined> {
  let t: Transport;
  try {
    t = await connectHelper(path, timeoutMs);
  } catch {
    return undefined;
  }
  return askOver(t, request, pick, timeoutMs);
}

/** askOnce over a link already made (and closed once answered). */
export function askOver<T>(
  t: Transport,
  request: Request,
  pick: (reply: Reply) => T | undefined,
  timeoutMs = 1000,
): Promise<T | undefined> {
  return new Promise((resolve) => {
    const x = exchange(t);
    let done = false;
    const end = (v: T | undefined): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      x.close();
      resolve(v);
    };
    // Out of time: a reply already read by the kernel is taken first (setImmediate runs after the
    // poll phase, so a reply that came with the timer is not mistaken for silence).
    const timer = setTimeout(() => setImmediate(() => end(undefined)), timeoutMs);
    x.onreply = (r) => end(pick(r));
    x.onclose = () => end(undefined);
    x.send(request);
  });
}

/** Sends a ping and resolves with the pong, or undefined when the helper does not answer in time. */
export const ping = (path: string, timeoutMs = 1000): Promise<Extract<Reply, { type: 'pong' }> | undefined> =>
  askOnce(path, { type: 'ping' }, (r) => (r.type === 'pong' ? r : undefined), timeoutMs);
