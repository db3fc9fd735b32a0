// The channel to the enrolled shell: two FIFOs the shell's zle -F widget reads and answers.
// Q NONCE -> K NONCE (snapshot written) | B NONCE REASON; in ask mode the shell answers
// A NONCE SECONDS at once, the helper sends P NONCE DETAILS, and the person's key comes back as
// K NONCE y|a|always (snapshot written) or D NONCE denied|approval_timeout; W NONCE withdraws a
// question. M ask|auto SANDBOX reports the shell's modes at a prompt. N TEXT draws a notice; X revokes.
import { closeSync, constants, openSync, readFileSync, unlinkSync } from 'node:fs';
import { Socket } from 'node:net';
import { freshId } from '../../src/enrollment/generation.js';
import { CHANNEL } from '../../src/enrollment/layout.js';
import { APPROVAL_MARGIN_MS, MAX_APPROVAL_S, previewFields, type RunDetails } from './approval.js';
import { monotonicMs } from '../../src/protocol/trace.js';
import type { SandboxShown } from '../sandbox/policy.js';
import { parseSnapshot, type Snapshot } from './snapshot.js';

export type { Snapshot } from './snapshot.js';

/** Unanswered text from the shell kept at most (a line is a few dozen bytes; more is noise). */
const MAX_PENDING = 64 * 1024;

/**
 * How a run was let through: `auto` (the shell does not ask), `yes` (the person pressed y),
 * `always` (the person pressed a), `remembered` (a earlier, for this exact digest).
 */
export type Approval = 'auto' | 'yes' | 'always' | 'remembered';
/** `answeredAt` (ok): when the editor's answer arrived (src/protocol/trace.ts clock), before the snapshot was read. */
export type AskResult =
  | { ok: true; snapshot: Snapshot; approval: Approval; answeredAt?: number }
  | { ok: false; reason: string; timeoutS?: number };
/** The shell's approval mode as of its last prompt. */
export type ApproveMode = 'ask' | 'auto' | 'unknown';

export interface AskOptions {
  /** The run the person is asked about, when the shell asks. */
  run?: RunDetails;
  /** Called when the shell starts asking the person (the wait is then theirs, not the editor's). */
  onAwaiting?: () => void;
  /** Aborting withdraws the question (the shell removes it) and resolves `withdrawn`. */
  signal?: AbortSignal;
}

const APPROVALS: Record<string, Approval | undefined> = { y: 'yes', a: 'always', always: 'remembered' };

export class ShellChannel {
  private req: Socket | undefined;
  private rsp: Socket | undefined;
  private inbuf = '';
  private waiting = new Map<string, (line: string) => void>();
  /** The shell's mode as its last prompt reported it (informational: the shell decides each run). */
  mode: ApproveMode = 'unknown';
  /** TMUX_RUN_SANDBOX as of the shell's last prompt (informational: the shell reports it again at each run). */
  sandbox: SandboxShown = 'unknown';
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
      const m = /^M (ask|auto)(?: (off|workspace|workspace\+net|read-only|invalid))?$/.exec(line);
      if (m) {
        this.mode = m[1] as 'ask' | 'auto';
        this.sandbox = (m[2] as SandboxShown | undefined) ?? 'off';
        continue;
      }
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
   * Asks whether the editor is idle and empty; on yes, reads the snapshot the shell wrote. In ask
   * mode the shell says so at once (A) and the wait becomes the person's: up to the timeout the
   * shell names plus a margin. A reply after a wait ends is recognised as late and ignored, and the
   * shell is told to drop the question (W), so a stale question is never shown.
   */
  async ask(timeoutMs: number, opts: AskOptions = {}): Promise<AskResult> {
    if (this.closed) return { ok: false, reason: 'closed' };
    if (opts.signal?.aborted) return { ok: false, reason: 'withdrawn' };
    const nonce = freshId();
    let asking: number | undefined;
    const result = await new Promise<AskResult | { k: Approval }>((resolve) => {
      let timer: NodeJS.Timeout;
      const done = (r: AskResult | { k: Approval }, withdraw: boolean): void => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        this.waiting.delete(nonce);
        if (withdraw) this.write(`W ${nonce}`);
        resolve(r);
      };
      const expire = (ms: number): void => {
        clearTimeout(timer);
        timer = setTimeout(
          () =>
            done(
              this.closed
                ? { ok: false, reason: 'closed' }
                : asking !== undefined
                  ? { ok: false, reason: 'approval_timeout', timeoutS: asking }
                  : { ok: false, reason: 'timeout' },
              true,
            ),
          ms,
        );
      };
      const onAbort = (): void => done({ ok: false, reason: 'withdrawn' }, true);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const onLine = (line: string): void => {
        if (line === '') return done({ ok: false, reason: 'closed' }, false);
        const [kind, , arg, extra] = line.split(' ');
        if (asking === undefined && kind === 'A' && opts.run && extra === undefined && /^[0-9]{1,5}$/.test(arg ?? '')) {
          // The shell asks the person: keep waiting (for them now), and send what they are to see.
          asking = Math.min(Math.max(Number(arg), 1), MAX_APPROVAL_S);
          this.waiting.set(nonce, onLine);
          expire(asking * 1000 + APPROVAL_MARGIN_MS);
          opts.onAwaiting?.();
          this.write(`P ${nonce} ${previewFields(opts.run)}`);
          return;
        }
        if (kind === 'B' && asking === undefined) return done({ ok: false, reason: arg ?? 'unknown' }, false);
        if (kind === 'D' && asking !== undefined && (arg === 'denied' || arg === 'approval_timeout'))
          return done({ ok: false, reason: arg, timeoutS: asking }, false);
        // Before a question a bare K; after one, K with the person's answer, never the other way round.
        if (kind === 'K' && extra === undefined) {
          const approval = asking === undefined ? (arg === undefined ? 'auto' : undefined) : APPROVALS[arg ?? ''];
          if (approval) return done({ k: approval }, false);
        }
        done({ ok: false, reason: 'protocol' }, true);
      };
      this.waiting.set(nonce, onLine);
      expire(timeoutMs);
      this.write(`Q ${nonce}`);
    });
    const answeredAt = monotonicMs();
    if (!('k' in result)) return result;
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
    } finally {
      // The snapshot holds the person's exported environment: no copy stays on disk once read.
      try {
        unlinkSync(this.base + CHANNEL.snapshot);
      } catch {
        // already gone, or not ours to remove (the shell refuses anything but a plain file)
      }
    }
    const snapshot = parseSnapshot(data, nonce);
    return snapshot ? { ok: true, snapshot, approval: result.k, answeredAt } : { ok: false, reason: 'snapshot_failed' };
  }

  close(): void {
    this.finish();
  }
}
