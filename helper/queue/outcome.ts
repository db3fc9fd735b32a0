// How a run that started ends up reported: its final reply, the audit trail's end entry and the
// notice shown in the pane, all three derived from the run's one end reason (and, for a stop, why).
import type { InputFeed } from '../run/input-feed.js';
import type { Reply, Truncation } from '../../src/core/protocol/messages.js';
import type { Binding } from '../../src/core/protocol/token.js';
import type { AuditEntry } from '../../src/core/audit/audit-log.js';
import type { RunOutcome } from '../run/run-spec.js';
import { byClient, clientEntry, err, short, STOP_DETAIL, stopDetail, type StopReason } from './job.js';
import { characterStart } from '../output/stream-window.js';

/**
 * A stream as a final reply carries it: all of it, or for one that passed its limit (overflow
 * tail) its kept last bytes, starting up to 3 bytes later so as to start on a character when the
 * rest is UTF-8, with every byte counted.
 */
export function keptOf(kept: Buffer, total: number): { data: Buffer; truncation?: Truncation } {
  if (total <= kept.length) return { data: kept };
  const from = total - kept.length;
  const skip = characterStart(kept, from) ?? 0;
  return { data: kept.subarray(skip), truncation: { bytes: total, kept_from: from + skip } };
}

/** What the outcome needs to know of its job. */
export interface Reported {
  binding: Pick<Binding, 'run_id' | 'script_digest' | 'stdout_limit' | 'stderr_limit'>;
  /** Why the job was stopped, when it was (a run stopped without one counts as cancelled by its caller). */
  stopReason?: StopReason;
  /** The caller's own reason for cancelling, if it gave one. */
  cancelReason?: string;
  /** Started with background: true (its notice says so). */
  background?: boolean;
  /** Who asked (its notice and the end entry say so). */
  client?: string;
  /** A pipe or terminal run's input: its end entry counts the calls and bytes given, never their content. */
  input?: Pick<InputFeed, 'mode' | 'calls' | 'given'>;
}

export interface Report {
  /** The final reply (done or error). */
  reply: Reply;
  /** The audit trail's `end` entry. */
  end: AuditEntry;
  /** The line shown in the pane. */
  notice: string;
}

/** How the run ended, in the words its reply, end entry and notice share (pure). */
interface Ending {
  /** What the script did: did not start, exited N, was killed by signal S. */
  how: string;
  /** Why it was stopped, for a run that was. */
  why?: StopReason;
  /** The stop's code: a run stopped because its shell or enrollment ended was not cancelled by anyone. */
  stopCode: 'shell_exited' | 'cancelled';
  /** Who or what stopped it, as the cancelled reply's message begins. */
  stoppedBy: string;
}

function endingOf(job: Reported, o: RunOutcome): Ending {
  const c = o.completion;
  const how = !c
    ? 'did not start'
    : c.state === 'exited'
      ? `exited ${c.exit_status}`
      : `was killed by signal ${c.signal}`;
  const why = o.reason === 'cancelled' ? (job.stopReason ?? 'cancelled') : undefined;
  const stopCode = why === 'shell_exited' || why === 'revoked' ? 'shell_exited' : 'cancelled';
  const stoppedBy =
    why === 'cancel_requested'
      ? 'a tmux_run_cancel request stopped the run, so'
      : why && why !== 'cancelled'
        ? `${STOP_DETAIL[why]} while the run was executing, so`
        : 'the run was cancelled;';
  return { how, ...(why ? { why } : {}), stopCode, stoppedBy };
}

/** The final reply, the end entry and the notice for a run that was started (pure). */
export function reportOf(job: Reported, o: RunOutcome, paneId: string): Report {
  const b = job.binding;
  const c = o.completion;
  const e = endingOf(job, o);
  const outcome =
    o.reason === 'completed' ? (c?.state ?? 'spawn_failed') : o.reason === 'cancelled' ? e.stopCode : o.reason;
  const reply = replyOf(b, o, e);
  const end: AuditEntry = {
    event: 'end',
    run_id: b.run_id,
    pane_id: paneId,
    script_digest: b.script_digest,
    ...clientEntry(job),
    outcome,
    // /bin/sh that could not be started ran nothing: the trail says what the reply says.
    ran: reply.type === 'done' || (reply.type === 'error' && reply.ran),
    ...(e.why ? { detail: stopDetail(job, e.why) } : {}),
    exit_status: c?.exit_status ?? null,
    signal: c?.signal ?? null,
    stdout_bytes: o.stdoutBytes,
    stderr_bytes: o.stderrBytes,
    ...(job.input ? { input: job.input.mode, input_count: job.input.calls, input_bytes: job.input.given } : {}),
    duration_ms: o.durationMs,
  };
  const notice = `tmux-run: run ${short(b.run_id)}${byClient(job)}${job.background ? ' (in the background)' : ''} ${o.reason === 'completed' ? e.how : `${e.how} (${o.reason.replace(/_/g, ' ')})`} after ${o.durationMs} ms`;
  return { reply, end, notice };
}

/** The run's final reply, from its end reason (pure). */
function replyOf(b: Reported['binding'], o: RunOutcome, e: Ending): Reply {
  const c = o.completion;
  const how = e.how;
  switch (o.reason) {
    case 'completed':
      if (!c) break;
      return doneOf(b, o, c);
    case 'output_limit_exceeded': {
      const which = o.overflow ?? 'stdout';
      const limit = which === 'stdout' ? b.stdout_limit : b.stderr_limit;
      const seen = which === 'stdout' ? o.stdoutBytes : o.stderrBytes;
      return {
        ...err(
          'output_limit_exceeded',
          `${which} passed its limit of ${limit} bytes (at least ${seen} bytes seen), so tmux-run stopped the run's process group (SIGTERM, then SIGKILL after a grace); ${!c ? 'its end was not observed' : c.state === 'signaled' ? `the script then ${how}, a signal sent by tmux-run` : `the script ${how} (an exit, not a signal: it ended before or despite the stop)`}`,
          b.run_id,
          true,
        ),
        ...(c ? { completion: c } : {}),
        stdout_bytes: o.stdoutBytes,
        stderr_bytes: o.stderrBytes,
      };
    }
    case 'cancelled':
      return {
        ...err(
          e.stopCode,
          `${e.stoppedBy} tmux-run stopped its process group (descendants that left the group may still run); the script ${how}`,
          b.run_id,
          true,
        ),
        ...(c ? { completion: c } : {}),
      };
    case 'spawn_failed':
      break;
    case 'sandbox_unavailable':
      return err(
        'sandbox_unavailable',
        `the sandbox could not be set up${o.error ? ` (${o.error})` : ''}, so the script was not started; run tmux-run doctor in the pane's shell, or set TMUX_RUN_SANDBOX=off there`,
        b.run_id,
      );
  }
  return err('spawn_failed', `/bin/sh could not be started${o.error ? `: ${o.error}` : ''}`, b.run_id);
}

/** A completed run's done reply: both streams, kept as the reply carries them (pure). */
function doneOf(b: Reported['binding'], o: RunOutcome, c: NonNullable<RunOutcome['completion']>): Reply {
  const [out, errs] = [keptOf(o.stdout, o.stdoutBytes), keptOf(o.stderr, o.stderrBytes)];
  const truncated = {
    ...(out.truncation ? { stdout: out.truncation } : {}),
    ...(errs.truncation ? { stderr: errs.truncation } : {}),
  };
  return {
    type: 'done',
    run_id: b.run_id,
    completion: c,
    stdout: out.data,
    stderr: errs.data,
    duration_ms: o.durationMs,
    ...(out.truncation || errs.truncation ? { truncated } : {}),
  };
}
