// One job taken from the queue, up to its run's end: the shell is asked for its state (in ask mode
// the person for approval), the run journal and the audit trail note the run before it is spawned,
// then /bin/sh runs in the state the shell reported. A refusal along the way settles the job.
import { statSync } from 'node:fs';
import type { Reply } from '../../src/core/protocol/messages.js';
import type { ErrorCode } from '../../src/core/protocol/errors.js';
import { uptimeTicks, type RunJournal } from '../../src/core/enrollment/run-journal.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';
import type { AuditLog } from '../../src/core/audit/audit-log.js';
import { procStat, procUmask, shellBusy } from '../../src/core/os/proc.js';
import { monotonicMs } from '../../src/core/protocol/trace.js';
import { Run } from '../run/runner.js';
import type { RunLauncher, RunOutcome } from '../run/run-spec.js';
import type { AskResult, Shell, Snapshot } from '../shell/shell.js';
import { cwdPath } from '../shell/snapshot.js';
import { envRefusal } from '../run/exact-exec.js';
import { terminalEnv } from '../run/terminal.js';
import { ASK_TIMEOUT_MS, askRefusal } from './ask-refusal.js';
import { byClient, clientEntry, err, short, type Job, type StopReason } from './job.js';

/** What dispatching a job needs of the service. */
export interface DispatchContext {
  record: EnrollmentRecord;
  shell: Pick<Shell, 'ask' | 'notify'>;
  audit: AuditLog;
  journal: Pick<RunJournal, 'note' | 'tryNote'>;
  log: (message: string) => void;
  alive: () => boolean;
  /** The service has ended (shell exited or enrollment revoked). */
  ended: () => boolean;
  /** Sends the job's final reply. */
  settle: (job: Job, reply: Reply) => void;
  /** Settles a job whose script never started; the audit trail says why. */
  settleUnstarted: (job: Job, code: ErrorCode, message: string, why: StopReason) => void;
  /** Sends a frame that is not final to the job's waiters. */
  emit: (job: Job, reply: Reply) => void;
  /** Sends a progress frame to the job's waiters that asked for them. */
  sendProgress: (job: Job) => void;
}

export { shellBusy };

/** The sandbox code, once a sandboxed run loaded it. */
let sandboxCode: typeof import('../walls/sandbox.js') | undefined;

/**
 * The sandbox the shell asks for (TMUX_RUN_SANDBOX, sent with the snapshot only when it is set and
 * not `off`): its walls, or why the run cannot have them. The sandbox code loads on the first
 * sandboxed run, never in a helper whose shell does not ask for one.
 */
async function decideSandbox(
  snapshot: Snapshot,
  cx: DispatchContext,
  job: Job,
): Promise<{ ok: true; value: string; launcher?: RunLauncher } | { ok: false; message: string }> {
  const value = snapshot.shell?.TMUX_RUN_SANDBOX;
  if (value === undefined || value === '' || value === 'off') {
    sandboxCode?.noGuess(); // the sandbox is off now: no walls are decided ahead of the next run
    return { ok: true, value: 'off' };
  }
  try {
    sandboxCode ??= await import('../walls/sandbox.js');
    return await sandboxCode.sandboxFor(snapshot, cx.record, cx.audit.path, job.input?.mode);
  } catch (e) {
    return { ok: false, message: `the sandbox could not be prepared (${(e as Error).message})` };
  }
}

/** Refuses a job taken from the queue before its script started: audited `refused`, then its reply. */
export function refuseJob(
  job: Job,
  cx: Pick<DispatchContext, 'record' | 'audit' | 'settle'>,
  code: ErrorCode,
  message: string,
  detail: Record<string, string> = {},
): void {
  const b = job.binding;
  cx.audit.tryAppend({
    event: 'refused',
    run_id: b.run_id,
    pane_id: cx.record.pane_id,
    script_digest: b.script_digest,
    ...clientEntry(job),
    outcome: code,
    ...detail,
  });
  cx.settle(job, err(code, message, b.run_id));
}

/** Settles a job whose shell ended or that was cancelled while a step awaited; true when it did. */
function goneMeanwhile(job: Job, cx: DispatchContext): boolean {
  if (!job.cancelled && !cx.ended()) return false;
  // Cancelled (or the shell ended) while the shell was asked: settled there; a late yes is ignored.
  if (job.state !== 'finished')
    cx.settleUnstarted(job, 'shell_exited', 'the enrolled shell has exited', 'shell_exited');
  return true;
}

/** Asks the shell for its state (in ask mode the person for approval), with the trace's stamps. */
async function askShell(job: Job, cx: DispatchContext): Promise<AskResult> {
  const b = job.binding;
  job.withdraw = new AbortController();
  if (job.trace) job.trace.asked = monotonicMs();
  const answer = await cx.shell.ask(ASK_TIMEOUT_MS, {
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
      cx.sendProgress(job);
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
function admit(job: Job, cx: DispatchContext, answer: AskResult): Snapshot | undefined {
  const b = job.binding;
  const base = { run_id: b.run_id, pane_id: cx.record.pane_id, script_digest: b.script_digest, ...clientEntry(job) };
  if (!answer.ok) {
    const r = askRefusal(answer);
    if (!r.byPerson) {
      refuseJob(job, cx, r.code, r.message);
      return undefined;
    }
    cx.audit.tryAppend({ event: 'refused', ...base, outcome: answer.reason, by: 'person' });
    cx.settle(job, err(r.code, r.message, b.run_id));
    return undefined;
  }
  if (answer.approval !== 'auto') {
    cx.audit.tryAppend({
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
function noteStart(job: Job, cx: DispatchContext, cwd: string, sandbox: string): boolean {
  const b = job.binding;
  try {
    cx.journal.note({
      k: 'intent',
      run_id: b.run_id,
      digest: b.script_digest,
      at: Date.now(),
      after_ticks: uptimeTicks() - 1,
    });
    job.journaled = true;
  } catch (e) {
    refuseJob(
      job,
      cx,
      'audit_unavailable',
      `the run journal cannot be written (${(e as Error).message}); the run was refused rather than run untracked`,
    );
    return false;
  }
  try {
    cx.audit.append({
      event: 'start',
      run_id: b.run_id,
      pane_id: cx.record.pane_id,
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
    refuseJob(job, cx, 'audit_unavailable', `${(e as Error).message}; the run was refused rather than run unrecorded`);
    return false;
  }
  if (job.trace) job.trace.audited = monotonicMs();
  return true;
}

/** Spawns /bin/sh in the shell's state and waits for the run's end. */
async function startRun(
  job: Job,
  cx: DispatchContext,
  snapshot: Snapshot,
  launcher?: RunLauncher,
): Promise<RunOutcome> {
  const b = job.binding;
  if (job.terminal) watchEcho(job, cx);
  const run = new Run({
    script: job.script,
    cwd: snapshot.cwd,
    env: job.terminal ? terminalEnv(snapshot.env) : snapshot.env,
    ...(snapshot.bytes
      ? { bytes: job.terminal ? { ...snapshot.bytes, env: terminalEnv(snapshot.bytes.env) } : snapshot.bytes }
      : {}),
    ...(job.input ? { input: job.input } : {}),
    ...(job.terminal ? { terminal: job.terminal } : {}),
    umask: procUmask(cx.record.shell_pid),
    stdoutLimit: b.stdout_limit,
    stderrLimit: b.stderr_limit,
    overflow: job.overflow,
    ...(launcher ? { launcher } : {}),
  });
  job.run = run;
  const pgid = run.start();
  if (job.trace) job.trace.spawned = monotonicMs();
  if (pgid !== undefined) {
    cx.journal.tryNote({ k: 'pgid', run_id: b.run_id, pgid, start: procStat(pgid)?.startTicks ?? '' }, cx.log);
    job.state = 'running';
    job.startedAt = Date.now();
    cx.emit(job, { type: 'started', run_id: b.run_id, pgid } satisfies Reply);
    cx.shell.notify(
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
function watchEcho(job: Job, cx: DispatchContext): void {
  const id = short(job.binding.run_id);
  job.terminal!.onEcho = (echo) => {
    if (!echo)
      cx.shell.notify(
        `tmux-run: run ${id}${byClient(job)} waits for input with echo off (a password?); to answer it yourself: tmux-run attach ${id}`,
      );
    cx.sendProgress(job);
  };
}

/** Runs the job, or settles it with a refusal; returns its run's outcome when it was started. */
export async function dispatch(job: Job, cx: DispatchContext): Promise<RunOutcome | undefined> {
  if (job.cancelled) return undefined; // settled by cancel() or shutdown()
  if (cx.ended() || !cx.alive()) {
    refuseJob(job, cx, 'shell_exited', 'the enrolled shell has exited');
    return undefined;
  }
  if (shellBusy(cx.record.shell_pid)) {
    refuseJob(
      job,
      cx,
      'shell_busy',
      'the shell is running a command in the foreground (retry when its prompt is back)',
    );
    return undefined;
  }
  const asking = askShell(job, cx);
  // While the shell answers, the walls the pane's last sandboxed run had are decided again (the
  // run takes them when its own plan is the same: helper/walls/sandbox.ts guessAhead).
  sandboxCode?.guessAhead(cx.record, cx.audit.path);
  const answer = await asking;
  if (goneMeanwhile(job, cx)) return undefined;
  const snapshot = admit(job, cx, answer);
  if (!snapshot) return undefined;
  try {
    if (!statSync(cwdPath(snapshot)).isDirectory()) throw new Error('not a directory');
  } catch {
    const where = JSON.stringify(snapshot.cwd);
    refuseJob(job, cx, 'cwd_unavailable', `the shell's current directory ${where} is not available`);
    return undefined;
  }
  const tooBig = envRefusal(snapshot.bytes?.env ?? snapshot.env, snapshot.bytes !== undefined);
  if (tooBig) {
    refuseJob(job, cx, 'spawn_failed', `/bin/sh could not be started: ${tooBig}`);
    return undefined;
  }
  const walls = await decideSandbox(snapshot, cx, job);
  if (goneMeanwhile(job, cx)) return undefined;
  if (!walls.ok) {
    // The trail says which walls were asked for and why they could not be built, as the reply does.
    const asked = snapshot.shell?.TMUX_RUN_SANDBOX ?? '';
    refuseJob(job, cx, 'sandbox_unavailable', walls.message, { sandbox: asked.slice(0, 64), reason: walls.message });
    return undefined;
  }
  job.sandbox = walls.value;
  if (!noteStart(job, cx, snapshot.cwd, walls.value)) return undefined;
  return startRun(job, cx, snapshot, walls.launcher);
}
