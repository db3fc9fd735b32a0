// The exchange every shell's channel speaks, whatever carries its lines: a request (Q NONCE) and
// its answer (K NONCE, B NONCE REASON; in ask mode A NONCE SECONDS, then P NONCE DETAILS from the
// helper, then K NONCE y|a|always or D NONCE denied|approval_timeout; W NONCE withdraws), and the
// snapshot file the shell writes before a K. A shell's module carries the lines (zsh: FIFOs;
// bash, fish: files and a signal) and hands each answer line to deliver().
import { closeSync, constants, openSync, readFileSync, unlinkSync } from 'node:fs';
import { freshId } from '../../src/core/enrollment/generation.js';
import { CHANNEL } from '../../src/core/enrollment/layout.js';
import { monotonicMs } from '../../src/core/protocol/trace.js';
import { APPROVAL_MARGIN_MS, MAX_APPROVAL_S, previewFields } from './approval.js';
import type { Approval, AskOptions, AskResult } from './shell.js';
import { parseSnapshot, type Snapshot } from './snapshot.js';

const APPROVALS: Record<string, Approval | undefined> = { y: 'yes', a: 'always', always: 'remembered' };

export abstract class LineShell {
  protected waiting = new Map<string, (line: string) => void>();
  protected closed = false;

  constructor(readonly base: string) {}

  /** Sends one line to the shell (dropped once the channel is closed). */
  protected abstract write(line: string): void;

  /** Hands a line from the shell to the request it answers; a line for a nonce nobody waits for is late: ignored. */
  protected deliver(line: string): void {
    const nonce = line.split(' ')[1] ?? '';
    const resolve = this.waiting.get(nonce);
    if (resolve) {
      this.waiting.delete(nonce);
      resolve(line);
    }
  }

  /** Ends every wait (the shell's side is gone). */
  protected endWaits(): void {
    for (const resolve of this.waiting.values()) resolve('');
    this.waiting.clear();
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
        timer = setTimeout(() => done(timedOut(this.closed, asking), true), ms);
      };
      const onAbort = (): void => done({ ok: false, reason: 'withdrawn' }, true);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const onLine = (line: string): void => {
        const read = readAnswer(line, asking);
        if ('result' in read) return done(read.result, read.withdraw);
        if (opts.run === undefined) return done({ ok: false, reason: 'protocol' }, true); // only a run is asked about
        // The shell asks the person: keep waiting (for them now), and send what they are to see.
        asking = read.asks;
        this.waiting.set(nonce, onLine);
        expire(asking * 1000 + APPROVAL_MARGIN_MS);
        opts.onAwaiting?.();
        this.write(`P ${nonce} ${previewFields(opts.run)}`);
      };
      this.waiting.set(nonce, onLine);
      expire(timeoutMs);
      this.write(`Q ${nonce}`);
    });
    const answeredAt = monotonicMs();
    if (!('k' in result)) return result;
    const snapshot = this.takeSnapshot(nonce);
    return snapshot ? { ok: true, snapshot, approval: result.k, answeredAt } : { ok: false, reason: 'snapshot_failed' };
  }

  /** Reads the snapshot the shell wrote for `nonce`, and removes it. */
  private takeSnapshot(nonce: string): Snapshot | undefined {
    let data: Buffer;
    try {
      const fd = openSync(this.base + CHANNEL.snapshot, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        data = readFileSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch {
      return undefined;
    } finally {
      // The snapshot holds the person's exported environment: no copy stays on disk once read.
      try {
        unlinkSync(this.base + CHANNEL.snapshot);
      } catch {
        // already gone, or not ours to remove (the shell refuses anything but a plain file)
      }
    }
    return parseSnapshot(data, nonce);
  }
}

/** What one answer line means: the question's end (withdrawn from the shell or not), or the shell asking the person. */
type Reading = { result: AskResult | { k: Approval }; withdraw: boolean } | { asks: number };

// One line of the shell (pure), `asking` the seconds it gave the person once it asked (A): a
// refusal (B) before a question, the person's no (D) after one, a yes (K) either side with the
// answer only after one; '' is the channel closed, anything else a protocol error, withdrawn.
function readAnswer(line: string, asking: number | undefined): Reading {
  const ends = (result: AskResult | { k: Approval }, withdraw = false): Reading => ({ result, withdraw });
  if (line === '') return ends({ ok: false, reason: 'closed' });
  const [kind, , arg, extra] = line.split(' ');
  if (asking === undefined && kind === 'A' && extra === undefined && /^[0-9]{1,5}$/.test(arg ?? ''))
    return { asks: Math.min(Math.max(Number(arg), 1), MAX_APPROVAL_S) };
  if (kind === 'B' && asking === undefined) return ends({ ok: false, reason: arg ?? 'unknown' });
  if (kind === 'D' && asking !== undefined && (arg === 'denied' || arg === 'approval_timeout'))
    return ends({ ok: false, reason: arg, timeoutS: asking });
  // Before a question a bare K; after one, K with the person's answer, never the other way round.
  if (kind === 'K' && extra === undefined) {
    const approval = asking === undefined ? (arg === undefined ? 'auto' : undefined) : APPROVALS[arg ?? ''];
    if (approval) return ends({ k: approval });
  }
  return ends({ ok: false, reason: 'protocol' }, true);
}

// A wait's end with no answer: the channel closed, the person's time over, or the editor's.
function timedOut(closed: boolean, asking: number | undefined): AskResult {
  if (closed) return { ok: false, reason: 'closed' };
  return asking !== undefined
    ? { ok: false, reason: 'approval_timeout', timeoutS: asking }
    : { ok: false, reason: 'timeout' };
}
