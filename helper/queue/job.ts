// A job: one run request as the helper holds it, from its arrival to its final reply, with who
// waits for it, why it was stopped, and the snapshots (pending, progress, list) taken of it.
import type { Transport } from '../../src/core/protocol/transport.js';
import type {
  ErrorReply,
  HeldRunInfo,
  InputMode,
  LiveState,
  Overflow,
  PendingReply,
  Reply,
  RunState,
  StreamTail,
  WatchApproval,
  WatchEvent,
} from '../../src/core/protocol/messages.js';
import type { Binding } from '../../src/core/protocol/token.js';
import type { ErrorCode } from '../../src/core/protocol/errors.js';
import { TAIL_BYTES } from '../../src/core/protocol/limits.js';
import { shownClient } from '../../src/core/protocol/client.js';
import type { Stamps } from '../../src/core/protocol/trace.js';
import { HeldRuns } from './held-runs.js';
import type { Run } from '../run/runner.js';
import type { StreamStore } from '../output/stream-store.js';
import { lastLine, tailWindow } from '../output/stream-window.js';
import type { InputFeed } from '../run/input-feed.js';
import type { RunTerminal } from '../run/terminal.js';

/** Someone waiting for a job's outcome on a link: the `run` caller, or a start, wait or cancel request. */
export interface Waiter {
  t: Transport;
  progress: boolean;
  /** The link that sent `run`: its closing cancels the job. */
  owner: boolean;
  timer?: NodeJS.Timeout;
  /** Called once, just before the waiter gets the final reply ('final') or a pending snapshot ('pending'), or when its link closed ('gone'): the audit entry is written before the caller can see the answer. */
  onEnd?: (how: 'final' | 'pending' | 'gone') => void;
}

export interface Job {
  binding: Binding;
  script: string;
  queuedAt: number;
  cancelled: boolean;
  /** Held for tmux_run_start: not tied to any link; its final reply is kept (held-runs.ts). */
  held: boolean;
  /** What a stream over its limit does: stop the run (tmux_run, the default) or keep its last bytes. */
  overflow: Overflow;
  /** Started with background: true (it gives up the pane's queue once spawned). */
  background: boolean;
  /** input pipe or terminal: what it is given to read (input given before it starts waits here). */
  input?: InputFeed;
  /** input terminal: its own terminal (its screen; the person may attach). */
  terminal?: RunTerminal;
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
  /** Who asked: the MCP client's `name version` (src/core/protocol/client.ts), when it named itself. */
  client?: string;
  /** How the run was let through and the walls it runs in, once dispatched (the watch feed shows them). */
  approval?: WatchApproval;
  sandbox?: string;
  /** Its start as the watch feed sent it (helper/watch/feed.ts), kept to replay it. */
  watchStart?: WatchEvent;
}

export type StopReason =
  'cancelled' | 'cancel_requested' | 'stopped_by_person' | 'caller_gone' | 'shell_exited' | 'revoked';

export const STOP_DETAIL: Record<StopReason, string> = {
  cancelled: 'the caller cancelled it',
  cancel_requested: 'a tmux_run_cancel request stopped it',
  stopped_by_person: 'the person stopped it (tmux-run stop)',
  caller_gone: 'the caller went away',
  shell_exited: 'the enrolled shell exited',
  revoked: 'the enrollment was revoked',
};

/** Why a job stopped, with the caller's reason when it gave one. */
export const stopDetail = (job: Pick<Job, 'cancelReason'>, why: StopReason): string =>
  `${STOP_DETAIL[why]}${job.cancelReason && why === 'cancelled' ? ` (reason given: ${job.cancelReason})` : ''}`;

/** A run id as notices show it. */
export const short = (id: string): string => id.slice(0, 8);

/** Who asked, as a notice says it after the run id (` by NAME VERSION`, escaped), or nothing. */
export const byClient = (job: { client?: string }): string => (job.client ? ` by ${shownClient(job.client)}` : '');

/** Who asked, for an audit entry (`client`), or nothing when the client gave no name. */
export const clientEntry = (job: { client?: string }): { client?: string } =>
  job.client ? { client: job.client } : {};

/** An error reply; `ran` false (the script never started) makes the broker say "nothing was run" after the message. */
export function err(code: ErrorCode, message: string, run_id?: string, ran = false): ErrorReply {
  return { type: 'error', code, message, ran, ...(run_id ? { run_id } : {}) };
}

/** The output counts a snapshot of the job reports: every byte each stream produced so far. */
function outputBytes(job: Job): { stdout_bytes: number; stderr_bytes: number } {
  return { stdout_bytes: job.run?.stdoutBytes ?? 0, stderr_bytes: job.run?.stderrBytes ?? 0 };
}

/** A stream's last bytes so far, as a pending result shows them. */
function tailOf(store: StreamStore | undefined): StreamTail {
  if (!store) return { from: 0, encoding: 'utf-8', data: '' };
  const { from, bytes } = store.last(TAIL_BYTES);
  return tailWindow(bytes, from);
}

/** The last whole line of a stream so far, for a progress frame (looked for in its tail). */
function lineOf(store: StreamStore | undefined): { last_line?: string } {
  const line = store && store.total > 0 ? lastLine(store.last(TAIL_BYTES).bytes) : undefined;
  return line === undefined ? {} : { last_line: line };
}

/** The answer to a wait whose wait_ms passed before the job finished. */
export function pendingOf(job: Job): PendingReply {
  return {
    type: 'pending',
    run_id: job.binding.run_id,
    state: job.state === 'finished' ? 'running' : job.state,
    elapsed_ms: Date.now() - job.queuedAt,
    ...outputBytes(job),
    stdout_tail: tailOf(job.run?.stdout),
    stderr_tail: tailOf(job.run?.stderr),
    background: job.background,
    ...inputState(job),
  };
}

/** A pipe or terminal run's input as pending results and listings show it (nothing for the others). */
export function inputState(job: Job): { input?: InputMode; input_bytes?: number; attached?: boolean; echo?: boolean } {
  if (!job.input) return {};
  job.terminal?.checkEcho();
  return {
    input: job.input.mode,
    input_bytes: job.input.given,
    ...(job.input.mode === 'terminal'
      ? { attached: job.terminal?.attached ?? false, echo: job.terminal?.echo ?? true }
      : {}),
  };
}

/** A progress frame for a job that is not finished. */
export function progressOf(job: Job, phase: LiveState): Reply {
  return {
    type: 'progress',
    run_id: job.binding.run_id,
    phase,
    elapsed_ms: Date.now() - job.queuedAt,
    ...outputBytes(job),
    ...lineOf(job.run?.stdout),
  };
}

/** A held run as `list` reports it. */
export function info(job: Job): HeldRunInfo {
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
    ...outputBytes(job),
    background: job.background,
    ...(({ echo: _echo, ...rest }) => rest)(inputState(job)),
    ...clientEntry(job),
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
