// The tool's structured results: the success and error variants of the contract's output schema.
import { isUtf8 } from 'node:buffer';
import type { Completion } from '../protocol/messages.js';
import { nothingRan, type ErrorCode } from '../protocol/errors.js';

export type Delivery = 'not_sent' | 'possibly_sent' | 'observed';

export interface Authorization {
  state: 'authorized';
  run_id: string;
  script_digest: string;
  server_generation: string;
  pane_id: string;
  enrollment_generation: string;
  process_generation: string;
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
  truncated: false;
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

/** Output as UTF-8 when it is valid UTF-8, else base64; `bytes` is the raw count. */
export function encodeStream(buf: Buffer): Stream {
  return isUtf8(buf)
    ? { encoding: 'utf-8', data: buf.toString('utf8'), bytes: buf.length, truncated: false }
    : { encoding: 'base64', data: buf.toString('base64'), bytes: buf.length, truncated: false };
}

/**
 * `text` with every control character a terminal could act on (C0 but tab and newline, DEL, C1)
 * shown as `\xHH`: messages and listings name outside things (directories, tmux names).
 */
export function visible(text: string): string {
  return text.replace(
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
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
  return { ok: false, error: { code, message: visible(text), delivery, ...(fx ? { effects: fx } : {}) } };
}

const describeCompletion = (c: Completion | { state: 'unobserved' }): string =>
  c.state === 'exited'
    ? `exit status ${c.exit_status}`
    : c.state === 'signaled'
      ? `killed by signal ${c.signal}`
      : 'end not observed';

/** A short text rendering of a result for clients that show text. */
export function renderText(r: ToolResult): string {
  if (!r.ok) {
    const fx = r.error.effects;
    return `tmux_run failed: ${r.error.code}: ${r.error.message} [delivery: ${r.error.delivery}${fx ? `; effects: ${fx.state}, ${describeCompletion(fx.completion)}` : ''}]`;
  }
  const d = r.data;
  const show = (name: string, s: Stream): string =>
    s.bytes === 0
      ? `${name}: (empty)`
      : `${name} (${s.bytes} bytes${s.encoding === 'base64' ? ', base64' : ''}):\n${s.data}`;
  return [
    `run ${d.authorization.run_id.slice(0, 8)} in pane ${d.target.id}: ${describeCompletion(d.completion)}`,
    show('stdout', d.stdout),
    show('stderr', d.stderr),
  ].join('\n');
}
