// The helper's service: authorizes each request, queues runs in arrival order, runs them one at a
// time in the shell's current state, reports each outcome exactly once, and records it.
import { readlinkSync, statSync } from 'node:fs';
import type { Transport } from '../src/protocol/transport.js';
import {
  checkRequest,
  type ErrorReply,
  type HeldRunInfo,
  type PendingReply,
  type Reply,
  type Request,
  type RunState,
} from '../src/protocol/messages.js';
import {
  signBinding,
  signHeld,
  signRevoke,
  tokenMatches,
  TOKEN_TTL_MS,
  type Binding,
  type HeldOp,
} from '../src/protocol/token.js';
import { uptimeTicks, type RunJournal } from '../src/enrollment/run-journal.js';
import { HELD_FOR_MS, HELD_MAX_FINISHED, HeldRuns } from './held-runs.js';
import type { ErrorCode } from '../src/protocol/errors.js';
import { MAX_OUTPUT_LIMIT, MAX_SCRIPT_BYTES } from '../src/protocol/limits.js';
import { scriptDigest } from '../src/enrollment/generation.js';
import { procStat, procUmask } from '../src/os/proc.js';
import { Run, type RunOutcome } from './runner.js';
import type { AuditLog } from '../src/audit/audit-log.js';
import type { ShellChannel } from './shell-channel.js';
import type { EnrollmentRecord } from '../src/enrollment/record.js';
import { monotonicMs, type Stamps } from '../src/protocol/trace.js';

/** How long the shell's line editor has to answer before the shell counts as busy. */
export const ASK_TIMEOUT_MS = 1000;
/** A run with more output than this is followed by a collection sooner. */
const LARGE_OUTPUT = 64 * 1024;
/** Runs pause when none has ended for this long (after a large output, sooner). */
const GC_AFTER_MS = 2000;
const GC_AFTER_LARGE_MS = 250;
/** Progress frames are sent this often while a run waits or runs. */
export const PROGRESS_MS = 1000;

/** The largest output count a pending result or a progress frame reports (the contract's cap). */
const MAX_REPORTED_BYTES = MAX_OUTPUT_LIMIT;
/** A test-only hook (inert unless set in the enrolled shell's environment): the helper SIGKILLs itself right after spawning a run, before it notes the run's process group, to prove that orphan is still found and stopped. */
const DIE_AFTER_SPAWN = process.env.TMUX_RUN_TEST_DIE_AFTER_SPAWN === '1';

/** Someone waiting for a job's outcome on a link: the `run` caller, or a start, wait or cancel request. */
interface Waiter {
  t: Transport;
  progress: boolean;
  /** The link that sent `run`: its closing cancels the job. */
  owner: boolean;
  timer?: NodeJS.Timeout;
  /** Called once, just before the waiter gets the final reply ('final') or a pending snapshot ('pending'), or when its link closed ('gone'): the audit entry is written before the caller can see the answer. */
  onEnd?: (how: 'final' | 'pending' | 'gone') => void;
}

interface Job {
  binding: Binding;
  script: string;
  queuedAt: number;
  cancelled: boolean;
  /** Held for tmux_run_start: not tied to any link; its final reply is kept (held-runs.ts). */
  held: boolean;
  /** queued -> (awaiting_approval, ask mode) -> running -> finished; finished also when refused or cancelled unstarted. */
  state: RunState;
  startedAt?: number;
  finishedAt?: number;
  /** The final reply (done or error), once finished. */
  final?: Reply;
  waiters: Set<Waiter>;
  progressTimer?: NodeJS.Timeout;
  /** Why the job was stopped, once it was: the caller cancelled or went away, or the shell or enrollment ended. */
  stopReason?: StopReason;
  /** The caller's own reason for cancelling (MCP notifications/cancelled), escaped and bounded by the broker. */
  cancelReason?: string;
  /** The journal names this run (its end must be noted). */
  journaled?: boolean;
  /** This run's stamps, when the request asked for a trace (returned in the final reply). */
  trace?: Stamps;
  run?: Run;
  /** Withdraws the question put to the shell for this job, if one is pending. */
  withdraw?: AbortController;
}

type StopReason = 'cancelled' | 'cancel_requested' | 'caller_gone' | 'shell_exited' | 'revoked';

const STOP_DETAIL: Record<StopReason, string> = {
  cancelled: 'the caller cancelled it',
  cancel_requested: 'a tmux_run_cancel request stopped it',
  caller_gone: 'the caller went away',
  shell_exited: 'the enrolled shell exited',
  revoked: 'the enrollment was revoked',
};

/** Why a job stopped, with the caller's reason when it gave one. */
const stopDetail = (job: Job, why: StopReason): string =>
  `${STOP_DETAIL[why]}${job.cancelReason && why === 'cancelled' ? ` (reason given: ${job.cancelReason})` : ''}`;

export interface ServiceDeps {
  record: EnrollmentRecord;
  secret: Buffer;
  shell: Pick<ShellChannel, 'ask' | 'notify' | 'revoked' | 'mode'>;
  audit: AuditLog;
  /** Where the helper notes runs before and after it spawns them (src/enrollment/run-journal.ts). */
  journal: Pick<RunJournal, 'note' | 'tryNote'>;
  /** The helper's log (stderr). */
  log: (message: string) => void;
  /** Called when the enrollment must end (revoked). */
  onRevoke: () => void;
  /** Live check of the shell and the tmux server this enrollment belongs to. */
  alive: () => boolean;
}

const short = (id: string): string => id.slice(0, 8);

export class HelperService {
  private queue: Job[] = [];
  private current: Job | undefined;
  private seen = new Map<string, number>();
  private ended = false;
  private readonly held = new HeldRuns<Job>();
  /** The waiters of each link, so that a closing link lets go of them. */
  private readonly links = new WeakMap<Transport, Array<{ job: Job; w: Waiter }>>();

  constructor(private readonly d: ServiceDeps) {}

  /** Serves one connection: every request gets exactly one final reply. */
  attach(t: Transport): void {
    this.links.set(t, []);
    t.onmessage = (raw) => {
      const received = monotonicMs();
      const checked = checkRequest(raw);
      if (!checked.ok) {
        t.send(err('bad_request', `malformed request: ${checked.error}`));
        t.close();
        return;
      }
      this.handle(checked.value, t, received);
    };
    t.onclose = () => {
      // The caller is gone (cancelled, or its server died): its runs stop, queued ones never
      // start. A held run is nobody's: its waiters just stop waiting.
      for (const { job, w } of this.links.get(t) ?? []) {
        if (!job.waiters.delete(w)) continue;
        clearTimeout(w.timer);
        w.onEnd?.('gone');
        if (w.owner) this.cancel(job, 'caller_gone');
      }
      this.links.delete(t);
    };
  }

  /** Adds a waiter to a job; a finished job answers at once. With `waitMs`, a job still going then gets a pending snapshot. */
  private addWaiter(job: Job, w: Waiter, waitMs?: number): void {
    if (job.state === 'finished' && job.final) {
      w.onEnd?.('final');
      w.t.send(job.final);
      return;
    }
    job.waiters.add(w);
    const mine = this.links.get(w.t);
    if (mine) {
      // A broker keeps its link open for the runs that follow: forget the waiters already answered.
      if (mine.length >= 8) {
        const open = mine.filter((e) => e.job.waiters.has(e.w));
        mine.length = 0;
        mine.push(...open);
      }
      mine.push({ job, w });
    }
    if (waitMs !== undefined) {
      const pending = (): void => {
        if (!job.waiters.delete(w)) return;
        w.onEnd?.('pending');
        w.t.send(this.pendingOf(job));
      };
      if (waitMs === 0) pending();
      else {
        w.timer = setTimeout(pending, waitMs);
        w.timer.unref();
      }
    }
    if (w.progress) this.startProgress(job);
  }

  private pendingOf(job: Job): PendingReply {
    return {
      type: 'pending',
      run_id: job.binding.run_id,
      state: job.state === 'finished' ? 'running' : job.state,
      elapsed_ms: Date.now() - job.queuedAt,
      stdout_bytes: Math.min(job.run?.stdoutBytes ?? 0, MAX_REPORTED_BYTES),
      stderr_bytes: Math.min(job.run?.stderrBytes ?? 0, MAX_REPORTED_BYTES),
    };
  }

  /** Sends a frame that is not final (started, progress) to every waiter that wants it. */
  private emit(job: Job, reply: Reply, onlyProgress = false): void {
    for (const w of job.waiters) if (!onlyProgress || w.progress) w.t.send(reply);
  }

  state(): 'idle' | 'busy' | 'running' | 'awaiting_approval' {
    if (this.current) return this.current.state === 'awaiting_approval' ? 'awaiting_approval' : 'running';
    return this.shellBusy() ? 'busy' : 'idle';
  }

  private shellBusy(): boolean {
    const st = procStat(this.d.record.shell_pid);
    // tpgid -1: no controlling terminal to tell from; the editor's answer (or its silence) decides.
    return st !== undefined && st.tpgid > 0 && st.tpgid !== st.pgrp;
  }

  private handle(req: Request, t: Transport, received = monotonicMs()): Job | undefined {
    switch (req.type) {
      case 'ping': {
        let cwd: string | null;
        try {
          cwd = readlinkSync(`/proc/${this.d.record.shell_pid}/cwd`);
        } catch {
          cwd = null;
        }
        t.send({
          type: 'pong',
          pid: process.pid,
          shell_pid: this.d.record.shell_pid,
          state: this.state(),
          cwd,
          queued: this.queue.length,
          generation: this.d.record.generation,
          mode: this.d.shell.mode,
        } satisfies Reply);
        return undefined;
      }
      case 'revoke': {
        const expected = signRevoke(this.d.secret, this.d.record.enrollment_generation, req.issued_at);
        if (
          req.enrollment_generation !== this.d.record.enrollment_generation ||
          !tokenMatches(expected, req.token) ||
          Math.abs(Date.now() - req.issued_at) > TOKEN_TTL_MS
        ) {
          t.send(err('unauthorized', 'the revocation is not signed for this enrollment'));
          return undefined;
        }
        t.send({ type: 'revoked' } satisfies Reply);
        this.d.shell.revoked();
        this.d.onRevoke();
        return undefined;
      }
      case 'cancel': {
        const job = [...this.queue, ...(this.current ? [this.current] : [])].find(
          (j) => j.binding.run_id === req.run_id && [...j.waiters].some((w) => w.owner && w.t === t),
        );
        if (job) {
          if (req.reason) job.cancelReason = req.reason;
          this.cancel(job, 'cancelled');
        }
        return undefined;
      }
      case 'run':
      case 'start':
        return this.accept(req, t, received);
      case 'wait':
      case 'cancel_held':
        this.waitOrCancel(req, t);
        return undefined;
      case 'list': {
        if (!this.authorizeHeld('list', '', req.auth, t)) return undefined;
        t.send({ type: 'runs', runs: this.held.list().map(info) } satisfies Reply);
        return undefined;
      }
    }
  }

  /**
   * Checks a wait, cancel or list request's signature, generations and age; on failure replies
   * with the error (nothing changes) and returns false.
   */
  private authorizeHeld(
    op: HeldOp,
    runId: string,
    a: Extract<Request, { type: 'list' }>['auth'],
    t: Transport,
  ): boolean {
    const rec = this.d.record;
    const refuse = (code: ErrorCode, message: string): false => {
      t.send(err(code, message, runId || undefined));
      return false;
    };
    if (!tokenMatches(signHeld(this.d.secret, op, runId, a), a.token))
      return refuse('unauthorized', 'the request is not signed for this enrollment');
    if (
      a.pane_id !== rec.pane_id ||
      a.server_generation !== rec.server_generation ||
      a.process_generation !== rec.process_generation ||
      a.enrollment_generation !== rec.enrollment_generation
    )
      return refuse('stale_generation', 'the request is for another pane, shell, server or enrollment');
    if (Math.abs(Date.now() - a.issued_at) > TOKEN_TTL_MS) return refuse('expired', 'the request has expired');
    return true;
  }

  /** tmux_run_wait and tmux_run_cancel: answer with the final reply, or a pending snapshot after wait_ms. */
  private waitOrCancel(req: Extract<Request, { type: 'wait' | 'cancel_held' }>, t: Transport): void {
    if (!this.authorizeHeld(req.type, req.run_id, req.auth, t)) return;
    const rec = this.d.record;
    const event = req.type === 'wait' ? 'wait' : 'cancel';
    const job = this.held.get(req.run_id);
    if (!job) {
      this.d.audit.tryAppend({ event, run_id: req.run_id, pane_id: rec.pane_id, outcome: 'unknown_run' });
      t.send(
        err(
          'unknown_run',
          `pane ${rec.pane_id}'s helper holds no run ${req.run_id} (it never existed here, was not started with tmux_run_start, or its result was dropped: results are held for ${HELD_MINUTES} minutes, at most ${HELD_MAX} per pane; the audit trail keeps every outcome)`,
          req.run_id,
        ),
      );
      return;
    }
    const before = job.state;
    t.send({
      type: 'held',
      run_id: req.run_id,
      script_digest: job.binding.script_digest,
      state: before,
    } satisfies Reply);
    const base = { run_id: req.run_id, pane_id: rec.pane_id, script_digest: job.binding.script_digest };
    if (req.type === 'cancel_held' && before !== 'finished') this.cancel(job, 'cancel_requested');
    this.addWaiter(
      job,
      {
        t,
        progress: req.progress,
        owner: false,
        onEnd: (how) =>
          this.d.audit.tryAppend({
            event,
            ...base,
            // What the request found, and what it answered with.
            outcome: how === 'final' ? 'finished' : how === 'pending' ? 'pending' : 'caller_gone',
            state: before,
            wait_ms: req.wait_ms,
          }),
      },
      req.wait_ms,
    );
  }

  private accept(req: Extract<Request, { type: 'run' | 'start' }>, t: Transport, received: number): Job | undefined {
    const b = req.binding;
    const rec = this.d.record;
    const refuse = (code: ErrorCode, message: string): undefined => {
      this.d.audit.tryAppend({
        event: 'refused',
        run_id: b.run_id,
        pane_id: rec.pane_id,
        script_digest: b.script_digest,
        outcome: code,
      });
      t.send(err(code, message, b.run_id));
      return undefined;
    };
    if (this.ended) return refuse('shell_exited', 'the enrolled shell has exited');
    const expected = signBinding(this.d.secret, b);
    if (!tokenMatches(expected, req.token)) {
      return refuse('unauthorized', 'the authorization token does not match this enrollment');
    }
    if (scriptDigest(req.script) !== b.script_digest) {
      return refuse('unauthorized', 'the script does not match its authorized digest');
    }
    // The broker refuses these too; a helper does not rely on it.
    if (req.script.includes('\0') || Buffer.byteLength(req.script, 'utf8') > MAX_SCRIPT_BYTES) {
      return refuse('invalid_arguments', `the script contains NUL or is over ${MAX_SCRIPT_BYTES} bytes of UTF-8`);
    }
    if (
      b.pane_id !== rec.pane_id ||
      b.server_generation !== rec.server_generation ||
      b.process_generation !== rec.process_generation ||
      b.enrollment_generation !== rec.enrollment_generation
    ) {
      return refuse('stale_generation', 'the authorization is for another pane, shell, server or enrollment');
    }
    const now = Date.now();
    if (Math.abs(now - b.issued_at) > TOKEN_TTL_MS) {
      return refuse('expired', 'the authorization has expired');
    }
    // Oldest first (insertion order): stop at the first one still kept, rather than walk every
    // run id of the last two minutes on each run.
    for (const [id, at] of this.seen) {
      if (now - at <= 2 * TOKEN_TTL_MS) break;
      this.seen.delete(id);
    }
    if (this.seen.has(b.run_id)) {
      return refuse('replayed', 'this run id was already used');
    }
    this.seen.set(b.run_id, now);
    if (!this.d.alive()) return refuse('shell_exited', 'the enrolled shell has exited');
    const held = req.type === 'start';
    const job: Job = {
      binding: b,
      script: req.script,
      queuedAt: now,
      cancelled: false,
      held,
      state: 'queued',
      waiters: new Set(),
      ...(req.type === 'run' && req.trace ? { trace: { received, verified: monotonicMs() } } : {}),
    };
    if (held) {
      this.held.add(job);
      // Noted so that a helper killed before the run starts still leaves its outcome to the audit trail.
      this.d.journal.tryNote({ k: 'held', run_id: b.run_id, digest: b.script_digest, at: now }, this.d.log);
      job.journaled = true;
      this.d.audit.tryAppend({
        event: 'held',
        run_id: b.run_id,
        pane_id: rec.pane_id,
        script_digest: b.script_digest,
        outcome: 'queued',
        wait_ms: req.wait_ms,
      });
    }
    this.queue.push(job);
    t.send({
      type: 'queued',
      run_id: b.run_id,
      position: this.queue.length - 1 + (this.current ? 1 : 0),
    } satisfies Reply);
    if (job.trace) job.trace.queued = monotonicMs();
    this.addWaiter(job, { t, progress: req.progress, owner: !held }, held ? req.wait_ms : undefined);
    void this.pump();
    return job;
  }

  /** Sends progress frames to the job's waiters that asked for them, while it waits and runs. */
  private startProgress(job: Job): void {
    if (job.progressTimer) return;
    const timer = setInterval(() => {
      if (job.state === 'finished' || ![...job.waiters].some((w) => w.progress)) {
        clearInterval(timer);
        job.progressTimer = undefined;
        return;
      }
      this.sendProgress(job);
    }, PROGRESS_MS);
    timer.unref();
    job.progressTimer = timer;
  }

  /** Sends a progress frame to the job's waiters that asked for them. */
  private sendProgress(job: Job): void {
    if (job.state === 'finished') return;
    this.emit(
      job,
      {
        type: 'progress',
        run_id: job.binding.run_id,
        phase: job.state,
        elapsed_ms: Date.now() - job.queuedAt,
        stdout_bytes: Math.min(job.run?.stdoutBytes ?? 0, MAX_REPORTED_BYTES),
        stderr_bytes: Math.min(job.run?.stderrBytes ?? 0, MAX_REPORTED_BYTES),
      } satisfies Reply,
      true,
    );
  }

  /** The job's final reply: sent to every waiter, kept when the run is held. */
  private settle(job: Job, reply: Reply): void {
    if (job.state === 'finished') return;
    job.state = 'finished';
    job.finishedAt = Date.now();
    clearInterval(job.progressTimer);
    job.progressTimer = undefined;
    if (job.journaled) this.d.journal.tryNote({ k: 'end', run_id: job.binding.run_id }, this.d.log);
    if (job.held) {
      job.final = reply;
      this.held.finished(job);
    }
    if (job.trace) {
      job.trace.replied = monotonicMs();
      (reply as { trace?: Stamps }).trace = job.trace;
    }
    const waiters = [...job.waiters];
    job.waiters.clear();
    for (const w of waiters) {
      clearTimeout(w.timer);
      w.onEnd?.('final');
      w.t.send(reply);
    }
  }

  private cancel(job: Job, why: 'cancelled' | 'cancel_requested' | 'caller_gone'): void {
    if (job.cancelled || job.state === 'finished') return;
    job.cancelled = true;
    job.stopReason = why;
    const i = this.queue.indexOf(job);
    if (i >= 0) {
      this.queue.splice(i, 1);
      this.d.audit.tryAppend({
        event: 'end',
        run_id: job.binding.run_id,
        pane_id: this.d.record.pane_id,
        script_digest: job.binding.script_digest,
        outcome: 'cancelled',
        ran: false,
        detail: `${stopDetail(job, why)} while the run was queued`,
      });
      this.settle(job, err('cancelled', 'the run was cancelled while queued', job.binding.run_id));
      return;
    }
    if (job.run) job.run.stop('cancelled');
    // Still asking the shell (or the person): nothing started, and nothing will (execute checks
    // `cancelled`); the question is withdrawn from the screen.
    else {
      const asked = job.state === 'awaiting_approval';
      job.withdraw?.abort();
      this.settleUnstarted(
        job,
        'cancelled',
        why === 'caller_gone'
          ? `the caller went away before the run started${asked ? ' (the question to the person was withdrawn)' : ''}`
          : `the run was cancelled before it started${asked ? ' (the question to the person was withdrawn)' : ''}`,
        why,
        asked,
      );
    }
  }

  /** Settles a job taken from the queue whose script was never started; the audit trail says why. */
  private settleUnstarted(job: Job, code: ErrorCode, message: string, why: StopReason, asked = false): void {
    if (job.state === 'finished') return;
    this.d.audit.tryAppend({
      event: 'end',
      run_id: job.binding.run_id,
      pane_id: this.d.record.pane_id,
      script_digest: job.binding.script_digest,
      outcome: code,
      ran: false,
      detail: `${stopDetail(job, why)} before the run started${asked ? ', while the person was asked to approve it' : ''}`,
    });
    this.settle(job, err(code, message, job.binding.run_id));
  }

  /** Ends the service: queued work is refused with shell_exited, running work is stopped and reported. */
  shutdown(reason: string, why: 'shell_exited' | 'revoked' = 'shell_exited'): void {
    this.ended = true;
    for (const job of this.queue.splice(0)) {
      this.d.audit.tryAppend({
        event: 'end',
        run_id: job.binding.run_id,
        pane_id: this.d.record.pane_id,
        script_digest: job.binding.script_digest,
        outcome: 'shell_exited',
        ran: false,
        detail: STOP_DETAIL[why],
      });
      this.settle(job, err('shell_exited', `${reason} before the queued run started`, job.binding.run_id));
    }
    const cur = this.current;
    if (cur && !cur.cancelled && cur.state !== 'finished') {
      cur.cancelled = true;
      cur.stopReason = why;
      cur.withdraw?.abort();
      if (cur.run) cur.run.stop('cancelled');
      else this.settleUnstarted(cur, 'shell_exited', `${reason} before the run started`, why);
    }
  }

  /** Waits for the current run (if any) to report. */
  async idle(): Promise<void> {
    await this.current?.run?.done;
  }

  private async pump(): Promise<void> {
    if (this.current) return;
    const job = this.queue.shift();
    if (!job) return;
    this.current = job;
    try {
      await this.execute(job);
    } catch (e) {
      this.settle(
        job,
        err('internal_error', `the helper failed: ${(e as Error).message}`, job.binding.run_id, job.run !== undefined),
      );
    } finally {
      this.current = undefined;
      void this.pump();
    }
  }

  private async execute(job: Job): Promise<void> {
    const b = job.binding;
    const rec = this.d.record;
    const base = { run_id: b.run_id, pane_id: rec.pane_id, script_digest: b.script_digest };
    const refuse = (code: ErrorCode, message: string): void => {
      this.d.audit.tryAppend({ event: 'refused', ...base, outcome: code });
      this.settle(job, err(code, message, b.run_id));
    };
    if (job.cancelled) return; // settled by cancel() or shutdown()
    if (this.ended || !this.d.alive()) return refuse('shell_exited', 'the enrolled shell has exited');
    if (this.shellBusy()) {
      return refuse('shell_busy', 'the shell is running a command in the foreground (retry when its prompt is back)');
    }
    job.withdraw = new AbortController();
    if (job.trace) job.trace.asked = monotonicMs();
    const answer = await this.d.shell.ask(ASK_TIMEOUT_MS, {
      run: { runId: b.run_id, digest: b.script_digest, script: job.script },
      signal: job.withdraw.signal,
      onAwaiting: () => {
        if (job.state !== 'queued') return;
        job.state = 'awaiting_approval';
        this.sendProgress(job);
      },
    });
    if (job.trace) {
      if (answer.ok && answer.answeredAt !== undefined) job.trace.answered = answer.answeredAt;
      job.trace.snapshot = monotonicMs();
    }
    if (job.state === 'awaiting_approval') job.state = 'queued';
    job.withdraw = undefined;
    if (job.cancelled || this.ended) {
      // Cancelled (or the shell ended) while the shell was asked: settled there; a late yes is ignored.
      if (job.state !== 'finished')
        this.settleUnstarted(job, 'shell_exited', 'the enrolled shell has exited', 'shell_exited');
      return;
    }
    if (!answer.ok) {
      if (answer.reason === 'editor_not_empty') {
        return refuse(
          'editor_not_empty',
          "the person has text in the shell's line editor, left untouched (retry later)",
        );
      }
      if (answer.reason.startsWith('context:') || answer.reason === 'pending_input') {
        return refuse('editor_not_empty', `the shell's line editor is not at an empty prompt (${answer.reason})`);
      }
      if (answer.reason === 'closed') return refuse('shell_exited', 'the enrolled shell has exited');
      if (answer.reason === 'denied' || answer.reason === 'approval_timeout') {
        this.d.audit.tryAppend({ event: 'refused', ...base, outcome: answer.reason, by: 'person' });
        return this.settle(
          job,
          err(
            answer.reason,
            answer.reason === 'denied'
              ? 'the person at the pane refused the run (ask mode)'
              : `the person at the pane did not answer within ${answer.timeoutS ?? '?'} s (ask mode)`,
            b.run_id,
          ),
        );
      }
      if (answer.reason === 'timeout') {
        return refuse('shell_busy', `the shell's line editor did not answer within ${ASK_TIMEOUT_MS} ms (it is busy)`);
      }
      return refuse('internal_error', `the shell could not describe its state (${answer.reason})`);
    }
    if (answer.approval !== 'auto') {
      this.d.audit.tryAppend({
        event: 'approved',
        ...base,
        outcome: 'approved',
        by: 'person',
        ...(answer.approval === 'always' ? { remember: true } : {}),
        ...(answer.approval === 'remembered' ? { always: true } : {}),
      });
    }
    const { cwd, env } = answer.snapshot;
    try {
      if (!statSync(cwd).isDirectory()) throw new Error('not a directory');
    } catch {
      return refuse('cwd_unavailable', `the shell's current directory ${JSON.stringify(cwd)} is not available`);
    }
    // Before the spawn, synchronously: a helper killed from here on leaves a note that lets
    // whoever finds it dead stop the run (src/broker/orphans.ts).
    try {
      this.d.journal.note({
        k: 'intent',
        run_id: b.run_id,
        digest: b.script_digest,
        at: Date.now(),
        after_ticks: uptimeTicks() - 1,
      });
      job.journaled = true;
    } catch (e) {
      return refuse(
        'audit_unavailable',
        `the run journal cannot be written (${(e as Error).message}); the run was refused rather than run untracked`,
      );
    }
    try {
      this.d.audit.append({
        event: 'start',
        ...base,
        outcome: 'started',
        server_generation: b.server_generation,
        process_generation: b.process_generation,
        enrollment_generation: b.enrollment_generation,
        stdout_limit: b.stdout_limit,
        stderr_limit: b.stderr_limit,
        cwd,
      });
    } catch (e) {
      return refuse('audit_unavailable', `${(e as Error).message}; the run was refused rather than run unrecorded`);
    }
    if (job.trace) job.trace.audited = monotonicMs();
    const run = new Run({
      script: job.script,
      cwd,
      env,
      umask: procUmask(rec.shell_pid),
      stdoutLimit: b.stdout_limit,
      stderrLimit: b.stderr_limit,
    });
    job.run = run;
    const pgid = run.start();
    if (job.trace) job.trace.spawned = monotonicMs();
    if (pgid !== undefined) {
      if (DIE_AFTER_SPAWN) process.kill(process.pid, 'SIGKILL');
      this.d.journal.tryNote(
        { k: 'pgid', run_id: b.run_id, pgid, start: procStat(pgid)?.startTicks ?? '' },
        this.d.log,
      );
      job.state = 'running';
      job.startedAt = Date.now();
      this.emit(job, { type: 'started', run_id: b.run_id, pgid } satisfies Reply);
      this.d.shell.notify(`tmux-run: run ${short(b.run_id)} started (script sha256 ${b.script_digest.slice(0, 12)})`);
    }
    if (job.cancelled) run.stop('cancelled');
    const o = await run.done;
    if (job.trace) {
      job.trace.exited = run.exitedAt;
      job.trace.drained = run.endedAt;
    }
    this.report(job, o);
  }

  private report(job: Job, o: RunOutcome): void {
    this.reportOutcome(job, o);
    // The helper lives as long as the pane: once runs pause, collect what they left (big outputs
    // leave big buffers) instead of holding it until V8 gets round to it. The shell starts the
    // helper with --expose-gc; a burst of runs never pays for a collection.
    if (typeof globalThis.gc === 'function') {
      clearTimeout(this.gcTimer);
      this.gcTimer = setTimeout(
        () => globalThis.gc?.(),
        o.stdoutBytes + o.stderrBytes > LARGE_OUTPUT ? GC_AFTER_LARGE_MS : GC_AFTER_MS,
      );
      this.gcTimer.unref();
    }
  }
  private gcTimer: NodeJS.Timeout | undefined;

  private reportOutcome(job: Job, o: RunOutcome): void {
    const b = job.binding;
    const c = o.completion;
    const how = !c
      ? 'did not start'
      : c.state === 'exited'
        ? `exited ${c.exit_status}`
        : `was killed by signal ${c.signal}`;
    const why = o.reason === 'cancelled' ? (job.stopReason ?? 'cancelled') : undefined;
    // A run stopped because its shell or enrollment ended was not cancelled by anyone: say so.
    const stopCode = why === 'shell_exited' || why === 'revoked' ? 'shell_exited' : 'cancelled';
    const stoppedBy =
      why === 'cancel_requested'
        ? 'a tmux_run_cancel request stopped the run, so'
        : why && why !== 'cancelled'
          ? `${STOP_DETAIL[why]} while the run was executing, so`
          : 'the run was cancelled;';
    const outcome =
      o.reason === 'completed' ? (c?.state ?? 'spawn_failed') : o.reason === 'cancelled' ? stopCode : o.reason;
    // The reply goes first (settled below, in this same turn); the audit trail's end entry and the
    // notice follow at once, so that the caller does not wait for them.
    queueMicrotask(() => {
      this.d.audit.tryAppend({
        event: 'end',
        run_id: b.run_id,
        pane_id: this.d.record.pane_id,
        script_digest: b.script_digest,
        outcome,
        ran: true,
        ...(why ? { detail: stopDetail(job, why) } : {}),
        exit_status: c?.exit_status ?? null,
        signal: c?.signal ?? null,
        stdout_bytes: o.stdoutBytes,
        stderr_bytes: o.stderrBytes,
        duration_ms: o.durationMs,
      });
      this.d.shell.notify(
        `tmux-run: run ${short(b.run_id)} ${o.reason === 'completed' ? how : `${how} (${o.reason.replace(/_/g, ' ')})`} after ${o.durationMs} ms`,
      );
    });
    switch (o.reason) {
      case 'completed':
        if (!c) break;
        this.settle(job, {
          type: 'done',
          run_id: b.run_id,
          completion: c,
          stdout: o.stdout,
          stderr: o.stderr,
          duration_ms: o.durationMs,
        });
        return;
      case 'output_limit_exceeded': {
        const which = o.overflow ?? 'stdout';
        const limit = which === 'stdout' ? b.stdout_limit : b.stderr_limit;
        const seen = which === 'stdout' ? o.stdoutBytes : o.stderrBytes;
        this.settle(job, {
          ...err(
            'output_limit_exceeded',
            `${which} passed its limit of ${limit} bytes (at least ${seen} bytes seen), so tmux-run stopped the run's process group (SIGTERM, then SIGKILL after a grace); ${!c ? 'its end was not observed' : c.state === 'signaled' ? `the script then ${how}, a signal sent by tmux-run` : `the script ${how} (an exit, not a signal: it ended before or despite the stop)`}`,
            b.run_id,
            true,
          ),
          ...(c ? { completion: c } : {}),
          stdout_bytes: o.stdoutBytes,
          stderr_bytes: o.stderrBytes,
        });
        return;
      }
      case 'cancelled':
        this.settle(job, {
          ...err(
            stopCode,
            `${stoppedBy} tmux-run stopped its process group (descendants that left the group may still run); the script ${how}`,
            b.run_id,
            true,
          ),
          ...(c ? { completion: c } : {}),
        });
        return;
      case 'spawn_failed':
        break;
    }
    this.settle(job, err('spawn_failed', `/bin/sh could not be started${o.error ? `: ${o.error}` : ''}`, b.run_id));
  }
}

const HELD_MINUTES = HELD_FOR_MS / 60_000;
const HELD_MAX = HELD_MAX_FINISHED;

/** A held run as `list` reports it. */
function info(job: Job): HeldRunInfo {
  const f = job.final;
  const c = f?.type === 'done' ? f.completion : f?.type === 'error' ? f.completion : undefined;
  return {
    run_id: job.binding.run_id,
    script_digest: job.binding.script_digest,
    state: job.state,
    queued_at: job.queuedAt,
    started_at: job.startedAt ?? null,
    finished_at: job.finishedAt ?? null,
    held_until: HeldRuns.heldUntil(job),
    stdout_bytes: Math.min(job.run?.stdoutBytes ?? 0, MAX_REPORTED_BYTES),
    stderr_bytes: Math.min(job.run?.stderrBytes ?? 0, MAX_REPORTED_BYTES),
    outcome: f
      ? {
          ok: f.type === 'done',
          code: f.type === 'error' ? f.code : null,
          exit_status: c?.exit_status ?? null,
          signal: c?.signal ?? null,
        }
      : null,
  };
}

/** An error reply; `ran` false (the script never started) makes the broker say "nothing was run" after the message. */
function err(code: ErrorCode, message: string, run_id?: string, ran = false): ErrorReply {
  return { type: 'error', code, message, ran, ...(run_id ? { run_id } : {}) };
}
