// The broker-helper protocol: message types, and validation against schemas/wire/*.json.
import type * as WireValidators from '../../generated/wire-validators.cjs';
import { loadGenerated } from './generated.js';
import type { Binding } from './token.js';
import type { ErrorCode } from './errors.js';

// Generated from schemas/wire/*.json by the build (loaded with require: see loadGenerated).
const validators = loadGenerated<typeof WireValidators>('wire-validators');

export type Completion =
  { state: 'exited'; exit_status: number; signal: null } | { state: 'signaled'; exit_status: null; signal: number };

export type Request =
  | { type: 'ping' }
  | { type: 'run'; binding: Binding; token: string; script: string; progress: boolean }
  | { type: 'cancel'; run_id: string }
  | { type: 'revoke'; enrollment_generation: string; issued_at: number; token: string };

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
    }
  | { type: 'queued'; run_id: string; position: number }
  | { type: 'started'; run_id: string; pgid: number }
  | {
      type: 'progress';
      run_id: string;
      phase: 'queued' | 'awaiting_approval' | 'running';
      elapsed_ms: number;
      stdout_bytes: number;
      stderr_bytes: number;
    }
  | { type: 'done'; run_id: string; completion: Completion; stdout: Buffer; stderr: Buffer; duration_ms: number }
  | ErrorReply
  | { type: 'revoked' };

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
}

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

function describe(v: { errors?: Array<{ instancePath: string; message?: string }> | null }): string {
  const e = v.errors?.[0];
  return e ? `${e.instancePath || '(message)'} ${e.message ?? 'is invalid'}` : 'is invalid';
}

/** Validates a decoded frame as a request; the error names the field, never its content. */
export function checkRequest(value: unknown): Checked<Request> {
  return validators.validateRequest(value)
    ? { ok: true, value: value as Request }
    : { ok: false, error: describe(validators.validateRequest) };
}

/** Validates a decoded frame as a reply; `done` must also carry its output as bytes. */
export function checkReply(value: unknown): Checked<Reply> {
  if (!validators.validateReply(value)) return { ok: false, error: describe(validators.validateReply) };
  const r = value as Reply;
  if (r.type === 'done' && !(Buffer.isBuffer(r.stdout) && Buffer.isBuffer(r.stderr))) {
    return { ok: false, error: '/stdout and /stderr must be bytes' };
  }
  return { ok: true, value: r };
}
