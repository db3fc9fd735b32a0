// What only the security suites need: raw connections to a helper socket and requests sent
// on them the way the broker sends them (or forged ones).
import { connect, type Socket } from 'node:net';
import { signBinding, type Binding } from '../../src/core/protocol/token.js';
import type { Reply, Request } from '../../src/core/protocol/messages.js';
import { connectHelper, exchange } from '../../src/broker/helper-client.js';

/** Connects to a Unix socket; resolves once connected. */
export function rawConnect(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    s.once('connect', () => {
      s.removeAllListeners('error');
      s.on('error', () => {});
      resolve(s);
    });
    s.once('error', reject);
  });
}

/** Resolves when the peer ends or closes the connection, with what it sent; rejects after `timeoutMs`. */
export function untilClosed(s: Socket, timeoutMs = 5000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    if (s.destroyed || s.readableEnded) return resolve(Buffer.concat(chunks));
    const timer = setTimeout(() => reject(new Error(`the connection stayed open for ${timeoutMs} ms`)), timeoutMs);
    s.once('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
}

/** Sends one request on a fresh connection; resolves with its final reply (done or error). */
export async function sendRequest(socket: string, req: Request, timeoutMs = 10_000): Promise<Reply> {
  const x = exchange(await connectHelper(socket));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no final reply in time')), timeoutMs);
    x.onreply = (r) => {
      if (r.type !== 'done' && r.type !== 'error' && r.type !== 'revoked') return;
      clearTimeout(timer);
      x.close();
      resolve(r);
    };
    x.onclose = (e) => {
      clearTimeout(timer);
      reject(new Error(`the helper closed the link${e ? `: ${e.message}` : ''}`));
    };
    x.send(req);
  });
}

/** A run request for `binding`, signed with `secretHex`. */
export function runRequest(binding: Binding, secretHex: string, script: string): Extract<Request, { type: 'run' }> {
  return { type: 'run', binding, token: signBinding(Buffer.from(secretHex, 'hex'), binding), script, progress: false };
}
