// One job taken from the queue, up to its run's end: the shell is asked for its state (in ask mode
// the person for approval), the run journal and the audit trail note the run before it is spawned,
// then /bin/sh runs in the state the shell reported. A refusal along the way settles the job.
import { statSync } from 'node:fs';
import type { Reply } from '../../src/core/protocol/messages.js';
import type { ErrorCode } from '../../src/core/protocol/errors.js';
import { uptimeTicks } from '../../src/core/enrollment/run-journal.js';
import { procStat, procUmask, shellBusy } from '../../src/core/os/proc.js';
import { monotonicMs } from '../../src/core/protocol/trace.js';
import { Run } from '../run/runner.js';
import type { RunLauncher, RunOutcome } from '../run/run-spec.js';
import type { AskResult, Snapshot } from '../shell/shell.js';
import { cwdPath } from '../shell/snapshot.js';
import { envRefusal } from '../run/exact-exec.js';
import { terminalEnv } from '../run/terminal.js';
import { ASK_TIMEOUT_MS, askRefusal } from './ask-refusal.js';
import { byClient, clientEntry, err, short, type Job, type StopReason } from './job.js';
import type { ServiceDeps } from './service-deps.js';

/** The sandbox code, once a sandboxed run loaded it. */
let sandboxCode: typeof import('../walls/sandbox.js') | undefined;

/** What a job's turn tells the queue it was taken from (run-queue.ts). */
export interface Turns {
  /** The service has ended (shell exited or enrollment revoked). */
  readonly ended: boolean;
  /** Sends the job's final reply. */
  settle(job: Job, reply: Reply): void;
  /** Settles a job whose script never started; the audit trail says why. */
  settleUnstarted(job: Job, code: ErrorCode, message: string, why: StopReason): void;
  /** The run started: its waiters and watchers are told. */
  started(job: Job, reply: Reply): void;
  /** Sends a progress frame to the job's waiters that asked for them. */
  progress(job: Job): void;
}

/** A job's turn: from asking the shell to its run's end, or its refusal. */
export class Dispatch {
  constructor(
    private readonly d: Pick<ServiceDeps, 'record' | 'shell' | 'audit' | 'journal' | 'log' | 'alive'>,
    private readonly queue: Turns,
  ) {}

  /** Runs the job, or settles it with a refusal; returns its run's outcome when it was started. */
  async run(job: Job): Promise<RunOutcome | undefined> {
    if (job.cancelled) return undefined; // settled by cancel() or shutdown()
    if (this.queue.ended || !this.d.alive()) {
      this.refuse(job, 'shell_exited', 'the enrolled shell has exited');
      return undefined;
    }
    if (shellBusy(this.d.record.shell_pid)) {
      this.refuse(
        job,
        'shell_busy',
        'the shell is running a command in the foreground (retry when its prompt is back)',
      );
      return undefined;
    }
    const asking = this.askShell(job);
    // While the shell answers, the walls the pane's last sandboxed run had are decided again (the
    // run takes them when its own plan is the same: helper/walls/sandbox.ts guessAhead).
    sandboxCode?.guessAhead(this.d.record, this.d.audit.path);
    const answer = await asking;
    if (this.goneMeanwhile(job)) return undefined;
    const snapshot = this.admit(job, answer);
    if (!snapshot) return undefined;
    try {
      if (!statSync(cwdPath(snapshot)).isDirectory()) throw new Error('not a directory');
    } catch {
      const where = JSON.stringify(snapshot.cwd);
      this.refuse(job, 'cwd_unavailable', `the shell's current directory ${where} is not available`);
      return undefined;
    }
    const tooBig = envRefusal(snapshot.bytes?.env ?? snapshot.env, snapshot.bytes !== undefined);
    if (tooBig) {
      this.refuse(job, 'spawn_failed', `/bin/sh could not be started: ${tooBig}`);
      return undefined;
    }
    const walls = await this.decideSandbox(snapshot, job);
    if (this.goneMeanwhile(job)) return undefined;
    if (!walls.ok) {
      // The trail says which walls were asked for and why they could not be built, as the reply does.
      const asked = snapshot.shell?.TMUX_RUN_SANDBOX ?? '';
      this.refuse(job, 'sandbox_unavailable', walls.message, { sandbox: asked.slice(0, 64), reason: walls.message });
      return undefined;
    }
    job.sandbox = walls.value;
    if (!this.noteStart(job, snapshot.cwd, walls.value)) return undefined;
    return this.startRun(job, snapshot, walls.launcher);
  }

  /**
   * The sandbox the shell asks for (TMUX_RUN_SANDBOX, sent with the snapshot only when it is set and
   * not `off`): its walls, or why the run cannot have them. The sandbox code loads on the first
   * sandboxed run, never in a helper whose shell does not ask for one.
   */
  private async decideSandbox(
    snapshot: Snapshot,
    job: Job,
  ): Promise<{ ok: true; value: string; launcher?: RunLauncher } | { ok: false; message: string }> {
    const value = snapshot.shell?.TMUX_RUN_SANDBOX;
    if (value === undefined || value === '' || value === 'off') {
      sandboxCode?.noGuess(); // the sandbox is off now: no walls are decided ahead of the next run
      return { ok: true, value: 'off' };
    }
    try {
      sandboxCode ??= await import('../walls/sandbox.js');
      return await sandboxCode.sandboxFor(snapshot, this.d.record, this.d.audit.path, job.input?.mode);
    } catch (e) {
      return { ok: false, message: `the sandbox could not be prepared (${(e as Error).message})` };
    }
  }

  /** Refuses a job taken from the queue before its script started: audited `refused`, then its reply. */
  refuse(job: Job, code: ErrorCode, message: string, detail: Record<string, string> = {}): void {
    const b = job.binding;
    this.d.audit.tryAppend({
      event: 'refused',
      run_id: b.run_id,
      pane_id: this.d.record.pane_id,
      script_digest: b.script_digest,
      ...clientEntry(job),
      outcome: code,
      ...detail,
    });
    this.queue.settle(job, err(code, message, b.run_id));
  }

  /** Settles a job whose shell ended or that was cancelled while a step awaited; true when it did. */
  private goneMeanwhile(job: Job): boolean {
    if (!job.cancelled && !this.queue.ended) return false;
    // Cancelled (or the shell ended) while the shell was asked: settled there; a late yes is ignored.
    if (job.state !== 'finished')
      this.queue.settleUnstarted(job, 'shell_exited', 'the enrolled shell has exited', 'shell_exited');
    return true;
  }

  /** Asks the shell for its state (in ask mode the person for approval), with the trace's stamps. */
  private async askShell(job: Job): Promise<AskResult> {
    const b = job.binding;
    job.withdraw = new AbortController();
    if (job.trace) job.trace.asked = monotonicMs();
    const answer = await this.d.shell.ask(ASK_TIMEOUT_MS, {
      run: {
        runId: b.run_id,
        digest: b.script_digest,
        script: job.script,
        ...clientEntry(job),
        ...(job.input ? { input: job.input.mode } : {}),
      },
      signal: job.withdraw.signal,
      onAwaiting: () => {
        if (job.state !== 'queued') return;
        job.state = 'awaiting_approval';
        this.queue.progress(job);
      },
    });
    if (job.trace) {
      if (answer.ok && answer.answeredAt !== undefined) job.trace.answered = answer.answeredAt;
      job.trace.snapshot = monotonicMs();
    }
    if (job.state === 'awaiting_approval') job.state = 'queued';
    job.withdraw = undefined;
    return answer;
  }

  /** The shell's (or the person's) answer: the snapshot to run in, or undefined once the job is settled. */
  private admit(job: Job, answer: AskResult): Snapshot | undefined {
    const b = job.binding;
    const base = {
      run_id: b.run_id,
      pane_id: this.d.record.pane_id,
      script_digest: b.script_digest,
      ...clientEntry(job),
    };
    if (!answer.ok) {
      const r = askRefusal(answer);
      if (!r.byPerson) {
        this.refuse(job, r.code, r.message);
        return undefined;
      }
      this.d.audit.tryAppend({ event: 'refused', ...base, outcome: answer.reason, by: 'person' });
      this.queue.settle(job, err(r.code, r.message, b.run_id));
      return undefined;
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
    job.approval = answer.approval;
    return answer.snapshot;
  }

  /**
   * Notes the run before the spawn, synchronously: in the run journal (a helper killed from here on
   * leaves a note that lets whoever finds it dead stop the run: src/broker/orphans.ts), then in the
   * audit trail. False (the job refused) when either cannot be written.
   */
  private noteStart(job: Job, cwd: string, sandbox: string): boolean {
    const b = job.binding;
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
      this.refuse(
        job,
        'audit_unavailable',
        `the run journal cannot be written (${(e as Error).message}); the run was refused rather than run untracked`,
      );
      return false;
    }
    try {
      this.d.audit.append({
        event: 'start',
        run_id: b.run_id,
        pane_id: this.d.record.pane_id,
        script_digest: b.script_digest,
        ...clientEntry(job),
        outcome: 'started',
        server_generation: b.server_generation,
        process_generation: b.process_generation,
        enrollment_generation: b.enrollment_generation,
        stdout_limit: b.stdout_limit,
        stderr_limit: b.stderr_limit,
        cwd,
        ...(job.background ? { background: true } : {}),
        ...(job.input ? { input: job.input.mode } : {}),
        ...(job.terminal ? { terminal_size: `${job.terminal.size.cols}x${job.terminal.size.rows}` } : {}),
        sandbox,
      });
    } catch (e) {
      this.refuse(job, 'audit_unavailable', `${(e as Error).message}; the run was refused rather than run unrecorded`);
      return false;
    }
    if (job.trace) job.trace.audited = monotonicMs();
    return true;
  }

  /** Spawns /bin/sh in the shell's state and waits for the run's end. */
  private async startRun(job: Job, snapshot: Snapshot, launcher?: RunLauncher): Promise<RunOutcome> {
    const b = job.binding;
    if (job.terminal) this.watchEcho(job);
    const run = new Run({
      script: job.script,
      cwd: snapshot.cwd,
      env: job.terminal ? terminalEnv(snapshot.env) : snapshot.env,
      ...(snapshot.bytes
        ? { bytes: job.terminal ? { ...snapshot.bytes, env: terminalEnv(snapshot.bytes.env) } : snapshot.bytes }
        : {}),
      ...(job.input ? { input: job.input } : {}),
      ...(job.terminal ? { terminal: job.terminal } : {}),
      umask: procUmask(this.d.record.shell_pid),
      stdoutLimit: b.stdout_limit,
      stderrLimit: b.stderr_limit,
      overflow: job.overflow,
      ...(launcher ? { launcher } : {}),
    });
    job.run = run;
    const pgid = run.start();
    if (job.trace) job.trace.spawned = monotonicMs();
    if (pgid !== undefined) {
      this.d.journal.tryNote(
        { k: 'pgid', run_id: b.run_id, pgid, start: procStat(pgid)?.startTicks ?? '' },
        this.d.log,
      );
      job.state = 'running';
      job.startedAt = Date.now();
      this.queue.started(job, { type: 'started', run_id: b.run_id, pgid } satisfies Reply);
      this.d.shell.notify(
        `tmux-run: run ${short(b.run_id)}${byClient(job)} started${job.background ? ' in the background' : ''} (script sha256 ${b.script_digest.slice(0, 12)})`,
      );
    }
    if (job.cancelled) run.stop('cancelled');
    const o = await run.done;
    if (job.trace) {
      job.trace.exited = run.exitedAt;
      job.trace.drained = run.endedAt;
    }
    return o;
  }

  /** When a terminal run's program turns echo off, the pane says how the person can answer it. */
  private watchEcho(job: Job): void {
    const id = short(job.binding.run_id);
    job.terminal!.onEcho = (echo) => {
      if (!echo)
        this.d.shell.notify(
          `tmux-run: run ${id}${byClient(job)} waits for input with echo off (a password?); to answer it yourself: tmux-run attach ${id}`,
        );
      this.queue.progress(job);
    };
  }
}
