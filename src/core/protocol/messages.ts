// The broker-helper protocol: message types, and validation against schemas/wire/*.json
// (who sends what, in what order: docs/protocol-helper.md).
import type * as WireValidators from '../../../generated/wire-validators.cjs';
import { loadGenerated } from './generated.js';
import type { Binding, HeldAuthFields } from './token.js';
import type { ErrorCode } from './errors.js';
import type { Stamps } from './trace.js';

// Generated from schemas/wire/*.json by the build (loaded with require: see loadGenerated).
const validators = loadGenerated<typeof WireValidators>('wire-validators');

export type Completion =
  { state: 'exited'; exit_status: number; signal: null } | { state: 'signaled'; exit_status: null; signal: number };

/** Where a run is: waiting its turn, waiting for the person's answer (ask mode), executing, or done. */
export type RunState = 'queued' | 'awaiting_approval' | 'running' | 'finished';
export type LiveState = Exclude<RunState, 'finished'>;

/** What a run reads: /dev/null (tmux_run, and the default), a pipe the agent writes, or a terminal of its own. */
export type InputMode = 'closed' | 'pipe' | 'terminal';

/** A terminal run's size. */
export interface TerminalSize {
  cols: number;
  rows: number;
}

/** The signature of a request about held runs, with what it is bound to. */
export type HeldAuth = HeldAuthFields & { token: string };

/** One held run as a helper lists it (times in ms since the epoch). */
export interface HeldRunInfo {
  run_id: string;
  script_digest: string;
  state: RunState;
  queued_at: number;
  started_at: number | null;
  finished_at: number | null;
  held_until: number | null;
  stdout_bytes: number;
  stderr_bytes: number;
  outcome: { ok: boolean; code: string | null; exit_status: number | null; signal: number | null } | null;
  background: boolean;
  /** pipe or terminal runs: what they read, the bytes given so far, whether the person has taken it over. */
  input?: InputMode;
  input_bytes?: number;
  attached?: boolean;
  /** Who asked (src/core/protocol/client.ts), when the client named itself. */
  client?: string;
}

/** When the helper stops taking a request (CLOCK_MONOTONIC ms): one read later is refused, unread (limits.ts HELPER_TAKE_MS). */
type TakeBy = { take_by?: number };

export type Request =
  | { type: 'ping' }
  | ({
      type: 'run';
      binding: Binding;
      token: string;
      script: string;
      progress: boolean;
      trace?: boolean;
      /** Who asked: the MCP client's `name version` (src/core/protocol/client.ts); a label, not an identity. */
      client?: string;
    } & TakeBy)
  /** Like run, but the helper holds the run: closing the link does not cancel it. */
  | ({
      type: 'start';
      binding: Binding;
      token: string;
      script: string;
      progress: boolean;
      wait_ms: number;
      /** stop (the default): a stream over its limit stops the run; tail: its last bytes are kept. */
      overflow?: Overflow;
      /** Once spawned, the run gives up the pane's queue (overflow is then tail). */
      background?: boolean;
      /** What the run reads (absent: /dev/null, as tmux_run). */
      input?: Exclude<InputMode, 'closed'>;
      terminal_size?: TerminalSize;
      client?: string;
    } & TakeBy)
  | { type: 'cancel'; run_id: string; reason?: string }
  | ({
      type: 'wait' | 'cancel_held';
      run_id: string;
      wait_ms: number;
      progress: boolean;
      auth: HeldAuth;
      /** cancel_held from the person's `tmux-run stop` (the audit trail and the result say so). */
      by?: 'person';
    } & TakeBy)
  | ({ type: 'list'; auth: HeldAuth } & TakeBy)
  /** tmux_run_output: up to max_bytes of one stream of a held run, from absolute offset `from`. */
  | ({ type: 'output'; run_id: string; stream: StreamName; from: number; max_bytes: number; auth: HeldAuth } & TakeBy)
  /** tmux_run_input: bytes for a held run's stdin, in call order; eof closes a pipe. */
  | ({ type: 'input'; run_id: string; data: Buffer; eof: boolean; auth: HeldAuth } & TakeBy)
  /** tmux_run_screen: a terminal run's screen. */
  | ({ type: 'screen'; run_id: string; auth: HeldAuth } & TakeBy)
  /** tmux-run attach: the person's terminal joined to a terminal run until the link closes. */
  | { type: 'attach'; run_id: string; auth: HeldAuth }
  /** Keys the attached person typed (on a link that attached). */
  | { type: 'keys'; data: Buffer }
  | { type: 'revoke'; enrollment_generation: string; issued_at: number; token: string }
  /** tmux-run watch: this pane's runs as they happen (or one run, `run` a run id or its first 8+ hex digits). */
  | { type: 'watch'; run?: string; auth: HeldAuth };

export type Reply =
  | {
      type: 'pong';
      pid: number;
      shell_pid: number;
      state: 'idle' | 'busy' | 'running' | 'awaiting_approval';
      cwd: string | null;
      queued: number;
      generation: string;
      /** TMUX_RUN_APPROVE as of the shell's last prompt (`unknown` before its first one). */
      mode: 'ask' | 'auto' | 'unknown';
      /** TMUX_RUN_SANDBOX as of the shell's last prompt (`invalid`: a value that refuses every run). */
      sandbox?: 'off' | 'workspace' | 'workspace+net' | 'read-only' | 'invalid' | 'unknown';
      /** Why the screen check cannot serve the shell's prompt (every run refused editor_not_empty), once found. */
      prompt_refused?: string;
    }
  | { type: 'queued'; run_id: string; position: number }
  | { type: 'started'; run_id: string; pgid: number }
  | {
      type: 'progress';
      run_id: string;
      phase: LiveState;
      elapsed_ms: number;
      stdout_bytes: number;
      stderr_bytes: number;
      /** The last whole line of stdout so far (at most 200 characters), when there is one. */
      last_line?: string;
    }
  /** A wait or cancel found the run it names (sent before the final reply or the pending one). */
  | { type: 'held'; run_id: string; script_digest: string; state: RunState }
  /** The run was not finished when the request's wait_ms passed. */
  | PendingReply
  | { type: 'runs'; runs: HeldRunInfo[] }
  | OutputReply
  | {
      type: 'done';
      run_id: string;
      completion: Completion;
      stdout: Buffer;
      stderr: Buffer;
      duration_ms: number;
      /** The streams that passed their limit (overflow tail): `stdout`/`stderr` then hold their last bytes. */
      truncated?: { stdout?: Truncation; stderr?: Truncation };
      /** The helper's stamps (src/core/protocol/trace.ts), when the request asked for them. */
      trace?: Stamps;
    }
  | ErrorReply
  /** An input request's bytes were all taken. */
  | {
      type: 'input_taken';
      run_id: string;
      accepted_bytes: number;
      input_bytes: number;
      state: LiveState;
      closed?: boolean;
    }
  | ScreenReply
  /** The first reply to an attach: bytes that redraw the run's screen on the person's terminal. */
  | { type: 'attached'; run_id: string; redraw: Buffer }
  /** What the attached run printed; `ended` once it is over. */
  | { type: 'attach_output'; data: Buffer; ended?: boolean }
  | { type: 'revoked' }
  /** The first reply to a watch; `found` (a watch of one run): whether this helper knows it. */
  | { type: 'watching'; pane_id: string; found?: boolean }
  | WatchEvent;

/** What the approval was of a run that started (helper/shell/shell.ts, Approval). */
export type WatchApproval = 'auto' | 'yes' | 'always' | 'remembered';

/** One event of the watch feed (helper/watch/events.ts builds them; times in ms since the epoch). */
export type WatchEvent = { type: 'watch_event'; run_id: string; at: number } & (
  | {
      ev: 'start';
      client?: string;
      script_digest: string;
      approval: WatchApproval;
      sandbox: string;
      background: boolean;
      /** pipe or terminal (absent: closed). */
      input?: InputMode;
      script_bytes: number;
      script_lines: number;
      /** The script's first lines, escaped and cut as in the ask question. */
      preview: string[];
    }
  /** A chunk of one stream from offset `from` (every chunk a watcher is sent, in order; stdin: the input given). */
  | { ev: 'output'; stream: WatchStream; from: number; data: Buffer }
  /** Bytes of a stream this watcher was not sent: it did not keep up. */
  | { ev: 'missed'; stream: WatchStream; bytes: number }
  | {
      ev: 'end';
      ok: boolean;
      code?: string;
      completion?: Completion;
      duration_ms: number;
      stdout_bytes: number;
      stderr_bytes: number;
    }
  /** A run refused before its script started (by the helper, the shell or the person), or stopped while queued. */
  | { ev: 'refused'; client?: string; script_digest?: string; code: string; message: string }
);

export type StreamName = 'stdout' | 'stderr';
/** The streams a watcher sees: the output, and the input given to a pipe or terminal run. */
export type WatchStream = StreamName | 'stdin';

/** A terminal run's screen (tmux_run_screen's data without the target). */
export interface ScreenReply {
  type: 'screen';
  run_id: string;
  cols: number;
  rows: number;
  lines: string[];
  cursor: { x: number; y: number; visible: boolean };
  alternate: boolean;
  title?: string;
  echo: boolean;
  attached: boolean;
  finished: boolean;
  stdout_bytes: number;
}

/** A chunk of one stream of a held run (tmux_run_output), with where the stream stands. */
export interface OutputReply {
  type: 'output';
  run_id: string;
  state: RunState;
  stream: StreamName;
  /** Offsets in the stream: `from` of the first byte in data, `to` just past the last. */
  from: number;
  to: number;
  encoding: 'utf-8' | 'base64';
  data: string;
  total_bytes: number;
  kept_from: number;
  finished: boolean;
}

/** What a run does with a stream over its limit. */
export type Overflow = 'stop' | 'tail';

/** A stream that passed its limit: every byte it produced, and the offset of the first one kept. */
export interface Truncation {
  bytes: number;
  kept_from: number;
}

/** A stream's last bytes so far (at most TAIL_BYTES), from offset `from` on. */
export interface StreamTail {
  from: number;
  encoding: 'utf-8' | 'base64';
  data: string;
}

export interface PendingReply {
  type: 'pending';
  run_id: string;
  state: LiveState;
  elapsed_ms: number;
  stdout_bytes: number;
  stderr_bytes: number;
  stdout_tail: StreamTail;
  stderr_tail: StreamTail;
  background: boolean;
  /** pipe or terminal runs: what they read, the bytes given so far; terminal: taken over, echo. */
  input?: InputMode;
  input_bytes?: number;
  attached?: boolean;
  echo?: boolean;
}

export interface ErrorReply {
  type: 'error';
  run_id?: string;
  code: ErrorCode;
  message: string;
  /** True when the script was started (effects are then known or unknown, never none). */
  ran: boolean;
  completion?: Completion;
  stdout_bytes?: number;
  stderr_bytes?: number;
  trace?: Stamps;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

function describe(v: { errors?: Array<{ instancePath: string; message?: string }> | null }): string {
  const e = v.errors?.[0];
  return e ? `${e.instancePath || '(message)'} ${e.message ?? 'is invalid'}` : 'is invalid';
}

/** Validates a decoded frame as a request; the error names the field, never its content. */
export function checkRequest(value: unknown): Checked<Request> {
  if (!validators.validateRequest(value)) return { ok: false, error: describe(validators.validateRequest) };
  const r = value as Request;
  if ((r.type === 'input' || r.type === 'keys') && !Buffer.isBuffer(r.data)) {
    return { ok: false, error: '/data must be bytes' };
  }
  return { ok: true, value: r };
}

/** Validates a decoded frame as a reply; `done` must also carry its output as bytes. */
export function checkReply(value: unknown): Checked<Reply> {
  if (!validators.validateReply(value)) return { ok: false, error: describe(validators.validateReply) };
  const r = value as Reply;
  if (r.type === 'done' && !(Buffer.isBuffer(r.stdout) && Buffer.isBuffer(r.stderr))) {
    return { ok: false, error: '/stdout and /stderr must be bytes' };
  }
  if (
    (r.type === 'watch_event' && r.ev === 'output' && !Buffer.isBuffer(r.data)) ||
    (r.type === 'attach_output' && !Buffer.isBuffer(r.data)) ||
    (r.type === 'attached' && !Buffer.isBuffer(r.redraw))
  ) {
    return { ok: false, error: '/data must be bytes' };
  }
  return { ok: true, value: r };
}
