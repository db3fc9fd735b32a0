// The path every call about a pane shares (tmux_run, tmux_run_start, wait, cancel): check the
// script, find the target's live enrollment in the registry, and sign what the helper will check.
import { RegistryDirError } from '../core/enrollment/layout.js';
import { freshId, scriptDigest } from '../core/enrollment/generation.js';
import type { EnrollmentRecord } from '../core/enrollment/record.js';
import { signBinding, signHeld, type Binding, type HeldOp } from '../core/protocol/token.js';
import type { HeldAuth } from '../core/protocol/messages.js';
import type { ErrorCode } from '../core/protocol/errors.js';
import { DEFAULT_OUTPUT_LIMIT, MAX_SCRIPT_BYTES } from '../core/protocol/limits.js';
import { recordProblem, recordsFor } from './registry.js';
import { BUILD_ID } from '../core/protocol/build.js';
import { authorizationOf, failure, type Authorization, type Target, type ToolResult } from './result.js';
import { escapeControls } from './escape.js';
import { readStatus } from '../core/enrollment/pane-status.js';
import { isDormant } from '../core/enrollment/dormant.js';
import { sessionOver } from '../core/enrollment/remote-listing.js';
import { endedTarget, endedWords, noteRemote } from './session-ended.js';

/** A refusal made before anything was sent: audited and logged by the caller's `refuse`. */
export type Refuse = (code: ErrorCode, message: string) => ToolResult;

/** The script's own problems the schema cannot see (bytes over the limit, unpaired surrogates), or undefined. */
export function scriptProblem(script: string, tool: string): ToolResult | undefined {
  const bytes = Buffer.byteLength(script, 'utf8');
  if (bytes > MAX_SCRIPT_BYTES) {
    return failure(
      'invalid_arguments',
      `${tool}: the script is ${bytes} bytes of UTF-8; the limit is ${MAX_SCRIPT_BYTES} bytes`,
      'not_sent',
    );
  }
  // An unpaired surrogate has no UTF-8 form: it would run (and be digested) as U+FFFD, not as sent.
  if (/[\uD800-\uDFFF]/u.test(script)) {
    return failure(
      'invalid_arguments',
      `${tool}: the script is not valid Unicode text (it holds an unpaired UTF-16 surrogate, which has no UTF-8 form)`,
      'not_sent',
    );
  }
  return undefined;
}

/**
 * The live, trustworthy enrollment `target` names, or the refusal. `after` is added to the
 * not_enrolled and stale_generation messages (what became of the runs that pane's helper held).
 */
export function resolveTarget(dir: string, target: Target, refuse: Refuse, after = ''): EnrollmentRecord | ToolResult {
  let records;
  try {
    records = recordsFor(dir, target.id, target.generation); // checks the directory first
  } catch (e) {
    if (e instanceof RegistryDirError && e.reason === 'missing') {
      return refuse('not_enrolled', `pane ${target.id} is not enrolled (no pane is)${after}`);
    }
    return refuse(e instanceof RegistryDirError ? e.code : 'internal_error', (e as Error).message);
  }
  const forPane = records.filter((r) => r.pane_id === target.id);
  const rec = forPane.find((r) => r.generation === target.generation);
  const ended = rec ? undefined : endedTarget(target);
  if (ended) return refuse('session_ended', `${ended}${after}`);
  if (!rec) {
    if (forPane.length === 0) {
      return refuse(
        'not_enrolled',
        `pane ${target.id} is not enrolled (source shell/tmux-run.zsh in it, then list panes with tmux_enrolled_panes)${after}`,
      );
    }
    return refuse(
      'stale_generation',
      `pane ${target.id} has no enrollment with generation ${target.generation}: its shell, enrollment or tmux server changed since it was listed; list panes again with tmux_enrolled_panes${after}`,
    );
  }
  let problem = recordProblem(rec, 'read');
  // A dormant pane's record names a helper that is gone: its pid may be another process's by now.
  if (problem && isDormant(readStatus(dir, rec))) problem = recordProblem(rec, undefined);
  if (rec.remote) noteRemote(rec);
  const over = problem && rec.remote ? sessionOver(rec.remote) : undefined;
  if (over) return refuse('session_ended', `${endedWords(target.id, rec.remote!, over)}${after}`);
  if (problem) {
    return refuse(
      'not_enrolled',
      `pane ${target.id} has no valid enrollment with generation ${target.generation}: its record in the registry is not trustworthy (${problem}); list panes again with tmux_enrolled_panes`,
    );
  }
  if (rec.build !== BUILD_ID) {
    return refuse(
      'helper_outdated',
      `pane ${target.id}'s helper was started by another build of tmux-run (${rec.build ? `build ${rec.build}` : 'an older one'}; this server is build ${BUILD_ID}), which may not speak its protocol: the person can enroll the pane again (tmux_run_unenroll, then source shell/tmux-run.zsh, in it: sourcing it alone says the pane is already enrolled) or open a new pane, then list panes again with tmux_enrolled_panes${after}`,
    );
  }
  return rec;
}

export const isRecord = (x: EnrollmentRecord | ToolResult): x is EnrollmentRecord => !('ok' in x);

/** What a result reports as authorized for a held run that `rec`'s helper names by id and digest. */
export function heldAuthorization(
  rec: Pick<EnrollmentRecord, 'server_generation' | 'pane_id' | 'enrollment_generation' | 'process_generation'>,
  runId: string,
  digest: string,
): Authorization {
  return {
    state: 'authorized',
    run_id: runId,
    script_digest: digest,
    server_generation: rec.server_generation,
    pane_id: rec.pane_id,
    enrollment_generation: rec.enrollment_generation,
    process_generation: rec.process_generation,
  };
}

/** A fresh run bound to `rec`'s generations, its token, and the authorization a result reports. */
export function authorizeRun(
  rec: EnrollmentRecord,
  script: string,
  limits: { stdout_limit?: number; stderr_limit?: number },
): { binding: Binding; token: string; auth: Authorization } {
  const binding: Binding = {
    run_id: freshId(),
    script_digest: scriptDigest(script),
    server_generation: rec.server_generation,
    pane_id: rec.pane_id,
    enrollment_generation: rec.enrollment_generation,
    process_generation: rec.process_generation,
    stdout_limit: limits.stdout_limit ?? DEFAULT_OUTPUT_LIMIT,
    stderr_limit: limits.stderr_limit ?? DEFAULT_OUTPUT_LIMIT,
    issued_at: Date.now(),
  };
  return {
    binding,
    token: signBinding(Buffer.from(rec.secret, 'hex'), binding),
    auth: authorizationOf(binding),
  };
}

/** Signs a wait, cancel or list request for `rec` now. */
export function authorizeHeld(rec: EnrollmentRecord, op: HeldOp, runId: string): HeldAuth {
  const fields = {
    server_generation: rec.server_generation,
    pane_id: rec.pane_id,
    enrollment_generation: rec.enrollment_generation,
    process_generation: rec.process_generation,
    issued_at: Date.now(),
  };
  return { ...fields, token: signHeld(Buffer.from(rec.secret, 'hex'), op, runId, fields) };
}

/** The client's reason for a cancellation, as the helper's audit entry may carry it: one line, escaped, at most 300 characters. */
export function cancelReason(reason: unknown): string | undefined {
  if (reason === undefined || (reason instanceof Error && reason.name === 'AbortError')) return undefined;
  const raw =
    reason instanceof Error
      ? reason.message
      : typeof reason === 'string'
        ? reason
        : typeof reason === 'number' || typeof reason === 'boolean'
          ? String(reason)
          : (JSON.stringify(reason) ?? '');
  const text = escapeControls(raw.replace(/\s+/g, ' ')).trim();
  return text ? Array.from(text).slice(0, 300).join('') : undefined;
}
