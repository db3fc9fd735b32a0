// The tool's structured results: the success and error variants of the contract's output schema.
import { isUtf8 } from 'node:buffer';
import type { Completion, StreamTail } from '../core/protocol/messages.js';
import type { Binding } from '../core/protocol/token.js';
import { nothingRan, type ErrorCode } from '../core/protocol/errors.js';
import { escapeControls, escapeOutput } from './escape.js';

export type Delivery = 'not_sent' | 'possibly_sent' | 'observed';

/** What a result reports as authorized: the signed binding, less its output limits and time. */
export type Authorization = { state: 'authorized' } & Omit<Binding, 'stdout_limit' | 'stderr_limit' | 'issued_at'>;

export function authorizationOf(binding: Binding): Authorization {
  const { stdout_limit: _o, stderr_limit: _e, issued_at: _t, ...bound } = binding;
  return { state: 'authorized', ...bound };
}

export interface Target {
  kind: 'pane';
  id: string;
  generation: string;
}

export interface Stream {
  encoding: 'utf-8' | 'base64';
  data: string;
  bytes: number;
  /** true only for a long run with overflow tail whose stream passed its limit (never for tmux_run). */
  truncated: boolean;
  /** Where `data` starts in the stream, when truncated. */
  kept_from?: number;
}

export interface Effects {
  state: 'none' | 'known' | 'unknown';
  authorization: Authorization | null;
  completion: Completion | { state: 'unobserved' };
}

export type ToolResult =
  | {
      ok: true;
      data: { target: Target; authorization: Authorization; completion: Completion; stdout: Stream; stderr: Stream };
    }
  | { ok: false; error: { code: ErrorCode; message: string; delivery: Delivery; effects?: Effects } };

/** A held run that had not finished when the call's wait_ms passed (tmux_run_start, _wait, _cancel). */
export interface Pending {
  run_id: string;
  target: Target;
  authorization: Authorization;
  state: 'queued' | 'awaiting_approval' | 'running';
  elapsed_ms: number;
  stdout_bytes: number;
  stderr_bytes: number;
  stdout_tail: StreamTail;
  stderr_tail: StreamTail;
  background: boolean;
}

/** What tmux_run_start, tmux_run_wait and tmux_run_cancel return: tmux_run's result, or pending. */
export type LongResult = ToolResult | { pending: Pending };

export const isPending = (r: LongResult): r is { pending: Pending } => 'pending' in r;

/** Output as UTF-8 when it is valid UTF-8, else base64; `bytes` is the raw count. */
export function encodeStream(buf: Buffer): Stream {
  return isUtf8(buf)
    ? { encoding: 'utf-8', data: buf.toString('utf8'), bytes: buf.length, truncated: false }
    : { encoding: 'base64', data: buf.toString('base64'), bytes: buf.length, truncated: false };
}

/**
 * An error result; `effects` is derived from delivery unless given. A call that was not sent
 * says "nothing was run" after its message (the message itself never does).
 */
export function failure(code: ErrorCode, message: string, delivery: Delivery, effects?: Effects): ToolResult {
  const fx: Effects | undefined =
    effects ??
    (delivery === 'not_sent' ? { state: 'none', authorization: null, completion: { state: 'unobserved' } } : undefined);
  const text = delivery === 'not_sent' ? nothingRan(message) : message;
  return { ok: false, error: { code, message: escapeControls(text), delivery, ...(fx ? { effects: fx } : {}) } };
}

const describeCompletion = (c: Completion | { state: 'unobserved' }): string =>
  c.state === 'exited'
    ? `exit status ${c.exit_status}`
    : c.state === 'signaled'
      ? `killed by signal ${c.signal}`
      : 'end not observed';

/** A pending result's tail of one stream, as text ('' when the stream is still empty). */
function showTail(name: string, t: StreamTail, total: number): string {
  if (total === 0) return '';
  const at = t.from === 0 ? 'all of it' : `from byte ${t.from}`;
  return t.encoding === 'base64'
    ? `${name} so far (${at}, not UTF-8, base64): ${t.data}`
    : `${name} so far (${at}):\n${escapeOutput(t.data)}`;
}

/** For a stream cut by overflow tail: which of its bytes `data` holds (the rest were not kept). */
function keptNote(s: Stream): string {
  if (!s.truncated || s.kept_from === undefined) return '';
  const kept = s.bytes - s.kept_from;
  return kept === 0
    ? '; none kept: over its limit (overflow tail)'
    : `; only the last ${kept} kept, from byte ${s.kept_from}: over its limit (overflow tail)`;
}

/** A short text rendering of a result for clients that show text. */
export function renderText(r: LongResult, tool = 'tmux_run'): string {
  if (isPending(r)) {
    const p = r.pending;
    // A cancel that did not wait long enough for the end: the stop is under way, not just asked for.
    const stopping = tool === 'tmux_run_cancel' && p.state === 'running';
    const next = stopping
      ? 'stopping: its process group got SIGTERM (SIGKILL follows after the grace); call tmux_run_wait with this run_id for its result'
      : p.background
        ? 'read its output with tmux_run_output, stop it with tmux_run_cancel when done'
        : 'call tmux_run_wait with this run_id for its result';
    return [
      `run ${p.run_id} in pane ${p.target.id} is ${p.state.replace('_', ' ')}${p.background ? ' in the background' : ''} after ${Math.round(p.elapsed_ms / 1000)} s (${p.stdout_bytes} bytes of stdout, ${p.stderr_bytes} of stderr so far); ${next}`,
      showTail('stdout', p.stdout_tail, p.stdout_bytes),
      showTail('stderr', p.stderr_tail, p.stderr_bytes),
    ]
      .filter((line) => line !== '')
      .join('\n');
  }
  if (!r.ok) {
    const fx = r.error.effects;
    return `${tool} failed: ${r.error.code}: ${r.error.message} [delivery: ${r.error.delivery}${fx ? `; effects: ${fx.state}, ${describeCompletion(fx.completion)}` : ''}]`;
  }
  const d = r.data;
  const show = (name: string, s: Stream): string =>
    s.bytes === 0
      ? `${name}: (empty)`
      : `${name} (${s.bytes} bytes${s.encoding === 'base64' ? ', base64' : ''}${keptNote(s)}):\n${s.encoding === 'base64' ? s.data : escapeOutput(s.data)}`;
  return [
    `run ${d.authorization.run_id.slice(0, 8)} in pane ${d.target.id}: ${describeCompletion(d.completion)}`,
    show('stdout', d.stdout),
    show('stderr', d.stderr),
  ].join('\n');
}
