// The channel to the enrolled shell: two FIFOs the shell's zle -F widget reads and answers.
// Q NONCE -> K NONCE (snapshot written) | B NONCE REASON; N TEXT draws a notice; X revokes.
import { closeSync, constants, openSync, readFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { freshId } from '../src/enrollment/generation.js';
import { CHANNEL } from '../src/enrollment/layout.js';

/** Unanswered text from the shell kept at most (a line is a few dozen bytes; more is noise). */
const MAX_PENDING = 64 * 1024;

export type Snapshot = { cwd: string; env: Record<string, string> };
export type AskResult = { ok: true; snapshot: Snapshot } | { ok: false; reason: string };

/** Parses the snapshot file: NONCE \0 PWD \0 NAME=VALUE \0 ... (pure; exported for tests). */
export function parseSnapshot(data: Buffer, nonce: string): Snapshot | undefined {
  const parts = data.toString('utf8').split('\0');
  if (parts[0] !== nonce || parts.length < 2) return undefined;
  const env: Record<string, string> = {};
  for (const kv of parts.slice(2)) {
    const eq = kv.indexOf('=');
    if (eq <= 0) continue;
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return { cwd: parts[1] ?? '', env };
}

export class ShellChannel {
  private req: Socket | undefined;
  private rsp: Socket | undefined;
  private inbuf = '';
  private waiting = new Map<string, (line: string) => void>();
  private closed = false;
  /** Called once when the shell's side is gone (EOF or error on the channel). */
  onclose?: () => void;

  constructor(readonly base: string) {}

  /** Opens the FIFOs the shell created (it holds both ends open read-write). */
  open(): void {
    const w = openSync(this.base + CHANNEL.request, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    const r = openSync(this.base + CHANNEL.reply, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    this.req = new Socket({ fd: w, readable: false, writable: true });
    this.rsp = new Socket({ fd: r, readable: true, writable: false });
    this.req.on('error', () => this.finish());
    this.rsp.on('error', () => this.finish());
    this.rsp.on('end', () => this.finish());
    this.rsp.on('close', () => this.finish());
    this.rsp.setEncoding('latin1');
    this.rsp.on('data', (chunk: string) => this.onData(chunk));
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.req?.destroy();
    this.rsp?.destroy();
    for (const resolve of this.waiting.values()) resolve('');
    this.waiting.clear();
    this.onclose?.();
  }

  private onData(chunk: string): void {
    this.inbuf += chunk;
    if (this.inbuf.length > MAX_PENDING) this.inbuf = this.inbuf.slice(-4096);
    let nl: number;
    while ((nl = this.inbuf.indexOf('\n')) >= 0) {
      const line = this.inbuf.slice(0, nl);
      this.inbuf = this.inbuf.slice(nl + 1);
      const nonce = line.split(' ')[1] ?? '';
      const resolve = this.waiting.get(nonce);
      if (resolve) {
        this.waiting.delete(nonce);
        resolve(line);
      }
      // A line for a nonce nobody waits for is a late answer: ignored, never acted on.
    }
  }

  private write(line: string): void {
    if (!this.closed) this.req?.write(line.replace(/[\r\n]/g, ' ') + '\n', 'utf8');
  }

  /**
   * Tells the shell this helper is ready, with the pane's listed generation and the enrollment
   * generation (the shell removes the record itself when it finds the helper killed).
   */
  ready(generation: string, enrollment: string): void {
    this.write(`R ${generation} ${enrollment}`);
  }

  /**
   * Tells the shell enrollment failed (the snippet prints the reason); resolves once the line
   * has been handed to the FIFO (or after a short bound), so the process can exit right after.
   */
  fail(reason: string): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, 500);
      if (this.closed || !this.req) {
        clearTimeout(timer);
        resolve();
        return;
      }
      this.req.write(`E ${reason.replace(/[\r\n]/g, ' ')}\n`, 'utf8', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Draws a one-line notice in the pane (zle -M); the shell drops it when notices are off. */
  notify(text: string): void {
    this.write(`N ${text}`);
  }

  /** Tells the shell its enrollment was revoked. */
  revoked(): void {
    this.write('X');
  }

  /**
   * Asks whether the editor is idle and empty; on yes, reads the snapshot the shell wrote.
   * A reply after `timeoutMs` is recognised as late and ignored.
   */
  async ask(timeoutMs: number): Promise<AskResult> {
    if (this.closed) return { ok: false, reason: 'closed' };
    const nonce = freshId();
    const line = await new Promise<string>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(nonce);
        resolve('');
      }, timeoutMs);
      this.waiting.set(nonce, (l) => {
        clearTimeout(timer);
        resolve(l);
      });
      this.write(`Q ${nonce}`);
    });
    if (line === '') return { ok: false, reason: this.closed ? 'closed' : 'timeout' };
    const [kind, , reason] = line.split(' ');
    if (kind === 'B') return { ok: false, reason: reason ?? 'unknown' };
    if (kind !== 'K') return { ok: false, reason: 'protocol' };
    let data: Buffer;
    try {
      const fd = openSync(this.base + CHANNEL.snapshot, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        data = readFileSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch {
      return { ok: false, reason: 'snapshot_failed' };
    }
    const snapshot = parseSnapshot(data, nonce);
    return snapshot ? { ok: true, snapshot } : { ok: false, reason: 'snapshot_failed' };
  }

  close(): void {
    this.finish();
  }
}
