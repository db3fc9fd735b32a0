// tmux_run_start, tmux_run_wait and tmux_run_cancel in the broker. A started run is held by the
// pane's helper, not by this call: the call returns after wait_ms (or when the run finishes) and
// the run goes on; wait and cancel find it again by run_id, from any broker. The conversation
// with the helper is src/broker/held-link.ts; tmux_runs' listing is src/broker/held-runs.ts.
import { scriptDigest } from '../core/enrollment/generation.js';
import type { InputMode, Overflow, Request, TerminalSize } from '../core/protocol/messages.js';
import type { ErrorCode } from '../core/protocol/errors.js';
import { failure, type LongResult, type Target, type ToolResult } from './result.js';
import { validateCancelInput, validateStartInput, validateWaitInput } from './contract.js';
import { authorizeHeld, authorizeRun, isRecord, scriptProblem } from './authorize.js';
import { resolveAwake } from './wake.js';
import { auditedOutcome } from './held-outcome.js';
import { escapeControls } from './escape.js';
import { converse } from './held-link.js';
import { auditRefusal, brokerRefusal, type RunArgs, type RunContext } from './run-tool.js';

/** wait_ms when a call gives none. */
export const START_WAIT_MS = 0;
export const WAIT_MS = 10_000;

export interface StartArgs extends RunArgs {
  wait_ms?: number;
  overflow?: Overflow;
  background?: boolean;
  input?: InputMode;
  terminal_size?: TerminalSize;
}

export interface HeldArgs {
  target: Target;
  run_id: string;
  wait_ms?: number;
}

/**
 * A start's input as the helper is asked for it: pipe or terminal (which imply overflow tail unless
 * the call says stop, so a stop is said explicitly), the terminal's size.
 */
function inputRequest(args: StartArgs): Partial<Extract<Request, { type: 'start' }>> {
  if (args.input === undefined || args.input === 'closed') return {};
  return {
    input: args.input,
    ...(args.overflow === 'stop' ? { overflow: 'stop' as const } : {}),
    ...(args.input === 'terminal' && args.terminal_size ? { terminal_size: args.terminal_size } : {}),
  };
}

/** tmux_run_start: authorize and queue like tmux_run, then return after wait_ms or when the run ends. */
export async function startTool(raw: unknown, ctx: RunContext): Promise<LongResult> {
  const v = validateStartInput(raw);
  if (!v.ok) return failure('invalid_arguments', `invalid tmux_run_start arguments: ${v.message}`, 'not_sent');
  const args = raw as StartArgs;
  if (args.background === true && args.overflow === 'stop')
    return failure(
      'invalid_arguments',
      'invalid tmux_run_start arguments: a background run keeps the tail of its output (overflow tail); overflow stop is not allowed with background: true',
      'not_sent',
    );
  const bad = scriptProblem(args.script, 'tmux_run_start');
  if (bad) return bad;
  const digest = scriptDigest(args.script);
  const resolved = await resolveAwake(
    ctx.dir,
    args.target,
    brokerRefusal(ctx, {
      pane_id: args.target.id,
      script_digest: digest,
      tag: `start (sha256 ${digest.slice(0, 12)})`,
    }),
  );
  if (!isRecord(resolved)) return resolved;
  const { binding, token, auth } = authorizeRun(resolved, args.script, args);
  const tag = `start ${binding.run_id.slice(0, 8)} (sha256 ${digest.slice(0, 12)})`;
  const refuse = brokerRefusal(ctx, { run_id: binding.run_id, pane_id: args.target.id, script_digest: digest, tag });
  if (ctx.signal?.aborted) return refuse('cancelled', 'the call was cancelled before it was sent');
  const r = await converse(
    ctx,
    resolved,
    args.target,
    {
      type: 'start',
      binding,
      token,
      script: args.script,
      progress: ctx.onProgress !== undefined,
      wait_ms: args.wait_ms ?? START_WAIT_MS,
      ...(args.overflow === 'tail' || args.background === true ? { overflow: 'tail' as const } : {}),
      ...(args.background === true ? { background: true } : {}),
      ...inputRequest(args),
      ...(ctx.client ? { client: ctx.client } : {}),
    },
    binding.run_id,
    auth,
    'tmux_run_start',
    refuse,
  );
  // The helper was never reached: the refusal is the broker's, as for tmux_run.
  if (!('pending' in r) && !r.ok && r.error.code === 'helper_unreachable' && r.error.effects?.state === 'none') {
    auditRefusal(
      ctx,
      { run_id: binding.run_id, pane_id: args.target.id, script_digest: digest, tag },
      'helper_unreachable',
    );
  }
  return r;
}

/** tmux_run_wait and tmux_run_cancel: find the held run on the target's helper and wait for it (cancelling it first). */
export async function heldTool(
  raw: unknown,
  ctx: RunContext,
  op: 'wait' | 'cancel_held',
  opts: { by?: 'person' } = {},
): Promise<LongResult> {
  const name = op === 'wait' ? 'tmux_run_wait' : 'tmux_run_cancel';
  const v = op === 'wait' ? validateWaitInput(raw) : validateCancelInput(raw);
  if (!v.ok) return failure('invalid_arguments', `invalid ${name} arguments: ${v.message}`, 'not_sent');
  const args = raw as HeldArgs;
  const refuse = (code: ErrorCode, message: string): ToolResult => {
    // The enrollment is gone, and the request with it; the run may have run all the same.
    const known =
      code === 'not_enrolled' || code === 'stale_generation'
        ? auditedOutcome(ctx.audit.path, args.run_id, args.target)
        : undefined;
    if (!known) return failure(code, message, 'not_sent');
    const text = `${message}. The ${name} request was not sent; ${known.said}`;
    return {
      ok: false,
      error: { code, message: escapeControls(text), delivery: 'not_sent', effects: known.effects },
    };
  };
  const resolved = await resolveAwake(
    ctx.dir,
    args.target,
    refuse,
    `; runs held by a pane's helper end with its enrollment, and the audit trail keeps their outcomes (tmux-run log --run ${args.run_id.slice(0, 8)})`,
  );
  if (!isRecord(resolved)) return resolved;
  return converse(
    ctx,
    resolved,
    args.target,
    {
      type: op,
      run_id: args.run_id,
      wait_ms: args.wait_ms ?? WAIT_MS,
      progress: ctx.onProgress !== undefined,
      auth: authorizeHeld(resolved, op, args.run_id),
      ...(opts.by ? { by: opts.by } : {}),
    },
    args.run_id,
    undefined,
    name,
    refuse,
  );
}

export type { ToolResult };
