// tmux_run in the broker: validate, resolve the target to its live enrollment, authorize (digest,
// run id, HMAC over the generations), hand the run to the pane's helper, and report what happened.
import type { AuditLog } from '../audit/audit-log.js';
import type { LiveState, Reply } from '../protocol/messages.js';
import type { EnrollmentRecord } from '../enrollment/record.js';
import { scriptDigest } from '../enrollment/generation.js';
import { terminateGroup } from '../os/process-group.js';
import { recordSocket } from './registry.js';
import { ConnectError, exchange } from './helper-client.js';
import { helperLinks, type LinkPool } from './link-pool.js';
import type { Transport } from '../protocol/transport.js';
import type { Trace } from '../protocol/trace.js';
import { failure, encodeStream, type Authorization, type Target, type ToolResult } from './result.js';
import { nothingRan, type ErrorCode } from '../protocol/errors.js';
import { validateRunInput } from './contract.js';
import { authorizeRun, cancelReason, isRecord, resolveTarget, scriptProblem } from './authorize.js';
import { helperAlive, reapDeadHelper, type Reaped } from './orphans.js';

/** After a cancel, how long the broker waits for the helper to report before it stops the group itself. */
const CANCEL_WAIT_MS = 5000;

export interface RunArgs {
  target: Target;
  script: string;
  stdout_limit?: number;
  stderr_limit?: number;
}

export interface Progress {
  phase: LiveState;
  elapsed_ms: number;
  stdout_bytes: number;
  stderr_bytes: number;
  /** The last whole line of stdout so far (raw: escape before showing). */
  last_line?: string;
}

export interface RunContext {
  dir: string;
  audit: AuditLog;
  log: (message: string) => void;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
  /** Stamps of this run's stages (TMUX_RUN_TRACE); the helper is asked for its own. */
  trace?: Trace;
  /** Links to helpers kept between runs (the broker's pool unless given). */
  links?: LinkPool;
  /** Who asked: the MCP client's `name version` (src/protocol/client.ts), when it named itself. */
  client?: string;
}

/** A refusal before anything was sent, audited and logged as the broker's. */
type RefusedRun = { run_id?: string; pane_id: string; script_digest?: string; tag: string };

/** Records a refusal the broker made (nothing was sent) in the audit trail and the server's log. */
export function auditRefusal(ctx: RunContext, run: RefusedRun, code: ErrorCode): void {
  ctx.audit.tryAppend({
    event: 'refused',
    run_id: run.run_id ?? '',
    pane_id: run.pane_id,
    ...(run.script_digest ? { script_digest: run.script_digest } : {}),
    outcome: code,
    by: 'broker',
    ...(ctx.client ? { client: ctx.client } : {}),
  });
  ctx.log(`${run.tag} refused: ${code}`);
}

/** A refuser for one call: audits the refusal and returns its not_sent result. */
export function brokerRefusal(ctx: RunContext, run: RefusedRun): (code: ErrorCode, message: string) => ToolResult {
  return (code, message) => {
    auditRefusal(ctx, run, code);
    return failure(code, message, 'not_sent');
  };
}

/** The result a helper's final reply (done or error) stands for, for a run authorized as `auth`. */
export function resultFromReply(
  r: Extract<Reply, { type: 'done' | 'error' }>,
  target: Target,
  auth: Authorization,
): ToolResult {
  if (r.type === 'done')
    return {
      ok: true,
      data: {
        target,
        authorization: auth,
        completion: r.completion,
        stdout: encodeStream(r.stdout),
        stderr: encodeStream(r.stderr),
      },
    };
  return failure(
    r.code,
    r.ran ? r.message : nothingRan(r.message),
    'observed',
    r.ran
      ? {
          state: r.completion ? 'known' : 'unknown',
          authorization: auth,
          completion: r.completion ?? { state: 'unobserved' },
        }
      : { state: 'none', authorization: auth, completion: { state: 'unobserved' } },
  );
}

/** A helper's report of a run's way (queued, progress) goes to the caller; true when `r` was one. */
export function forwardProgress(r: Reply, ctx: Pick<RunContext, 'onProgress'>): boolean {
  if (r.type === 'queued') ctx.onProgress?.({ phase: 'queued', elapsed_ms: 0, stdout_bytes: 0, stderr_bytes: 0 });
  else if (r.type === 'progress') ctx.onProgress?.(r);
  else return false;
  return true;
}

/** The result when a helper answers with a message that has no place in the exchange. */
export const unexpectedReply = (what: string, type: string, auth: Authorization | null): ToolResult =>
  failure('internal_error', `the helper answered ${what} with an unexpected ${type} message`, 'observed', {
    state: 'unknown',
    authorization: auth,
    completion: { state: 'unobserved' },
  });

/** How long a broken link's helper gets to be seen dead: a killed process closes its sockets a moment before /proc shows it a zombie. */
const DEATH_WAIT_MS = 1000;

/**
 * When the helper of `rec` has died (or dies within a moment: the link may break first), stops
 * what it left running (its journal) and audits it; returns what was done.
 */
export async function afterHelperLoss(
  ctx: Pick<RunContext, 'dir' | 'audit'>,
  rec: EnrollmentRecord,
): Promise<Reaped[]> {
  const deadline = Date.now() + DEATH_WAIT_MS;
  while (helperAlive(rec)) {
    if (Date.now() >= deadline) return [];
    await new Promise((r) => setTimeout(r, 20));
  }
  return reapDeadHelper(ctx.dir, rec, 'broker', ctx.audit);
}

/** Runs one tmux_run call to its end; never throws, always returns one result. */
export async function runTool(raw: unknown, ctx: RunContext): Promise<ToolResult> {
  const v = validateRunInput(raw);
  if (!v.ok) return failure('invalid_arguments', `invalid tmux_run arguments: ${v.message}`, 'not_sent');
  const args = raw as RunArgs;
  const bad = scriptProblem(args.script, 'tmux_run');
  if (bad) return bad;
  const digest = scriptDigest(args.script);
  const trace = ctx.trace;
  trace?.mark('validated');
  const resolved = resolveTarget(
    ctx.dir,
    args.target,
    brokerRefusal(ctx, { pane_id: args.target.id, script_digest: digest, tag: `run (sha256 ${digest.slice(0, 12)})` }),
  );
  if (!isRecord(resolved)) return resolved;
  const rec = resolved;
  trace?.mark('resolved');
  const { binding, token, auth } = authorizeRun(rec, args.script, args);
  const runId = binding.run_id;
  if (trace) {
    trace.mark('signed');
    trace.info.run_id = runId;
    trace.info.script_bytes = Buffer.byteLength(args.script, 'utf8');
  }
  const refuse = brokerRefusal(ctx, {
    run_id: runId,
    pane_id: args.target.id,
    script_digest: digest,
    tag: `run ${runId.slice(0, 8)} (sha256 ${digest.slice(0, 12)})`,
  });
  if (ctx.signal?.aborted) return refuse('cancelled', 'the call was cancelled before it was sent');

  const links = ctx.links ?? helperLinks;
  const socket = recordSocket(ctx.dir, rec);
  let t: Transport;
  try {
    t = await links.take(socket);
  } catch (e) {
    return refuse(
      'helper_unreachable',
      `the helper of pane ${rec.pane_id} did not answer (${e instanceof ConnectError ? (e.errno ?? 'error') : 'error'}); its enrollment may have ended; list panes again`,
    );
  }
  trace?.mark('connected');
  const x = exchange(t);
  const target = args.target;
  const tag = `run ${runId.slice(0, 8)} (sha256 ${digest.slice(0, 12)}) on ${rec.pane_id}`;

  return new Promise<ToolResult>((resolve) => {
    let answered = false;
    let pgid: number | undefined;
    let settled = false;
    let cancelTimer: NodeJS.Timeout | undefined;
    /** The helper sent this run's final reply: the link owes nothing more and serves the next run. */
    let final = false;
    const settle = (r: ToolResult): void => {
      if (settled) return;
      settled = true;
      trace?.mark('encoded');
      if (cancelTimer) clearTimeout(cancelTimer);
      ctx.signal?.removeEventListener('abort', onAbort);
      if (final) links.give(socket, t);
      else x.close();
      if (ctx.signal?.aborted)
        ctx.log(
          `${tag} cancelled by the client (${cancelReason(ctx.signal.reason) ?? 'no reason given'}): ${r.ok ? 'it had completed' : r.error.code} (${r.ok ? '' : r.error.message})`,
        );
      resolve(r);
    };
    // Outcomes only the broker saw (the helper could not report them) go to the audit trail from here.
    const auditEnd = (outcome: string, detail: string): void => {
      ctx.audit.tryAppend({
        event: 'end',
        run_id: runId,
        pane_id: rec.pane_id,
        script_digest: digest,
        outcome,
        by: 'broker',
        ...(ctx.client ? { client: ctx.client } : {}),
        ran: pgid !== undefined ? true : 'unknown',
        ...(pgid !== undefined ? { pgid } : {}),
        detail,
      });
    };
    const onAbort = (): void => {
      const reason = cancelReason(ctx.signal?.reason);
      x.send({ type: 'cancel', run_id: runId, ...(reason ? { reason } : {}) });
      // The helper stops the group and reports; if it does not, drop the link (it then cancels) and stop the group here.
      cancelTimer = setTimeout(() => {
        if (pgid !== undefined) terminateGroup(pgid);
        auditEnd(
          'cancelled',
          `the caller cancelled it${reason ? ` (reason given: ${reason})` : ''}; the helper did not confirm the cancellation within ${CANCEL_WAIT_MS} ms${pgid !== undefined ? '; the broker stopped the process group' : ''}`,
        );
        settle(
          failure(
            'cancelled',
            "the call was cancelled; the helper did not confirm the stop in time, so tmux-run stopped the run's process group itself",
            'observed',
            { state: 'unknown', authorization: auth, completion: { state: 'unobserved' } },
          ),
        );
      }, CANCEL_WAIT_MS);
    };
    ctx.signal?.addEventListener('abort', onAbort, { once: true });

    x.onreply = (r: Reply) => {
      answered = true;
      if (forwardProgress(r, ctx)) return;
      switch (r.type) {
        case 'started':
          pgid = r.pgid;
          return;
        case 'done':
        case 'error':
          final = true;
          if (trace) {
            trace.mark('reply');
            trace.merge(r.trace);
            if (r.type === 'done') {
              trace.info.stdout_bytes = r.stdout.length;
              trace.info.stderr_bytes = r.stderr.length;
            }
          }
          settle(resultFromReply(r, target, auth));
          return;
        default:
          settle(unexpectedReply('a run', r.type, auth));
      }
    };
    x.onclose = (e) => {
      void linkLost(e);
    };
    const linkLost = async (e?: Error): Promise<void> => {
      if (settled) return;
      // The helper is gone mid-run: it cannot clean up after SIGKILL, so the broker stops the group it was told about,
      // and whatever else its run journal names (a run spawned before it could say so, held runs).
      if (pgid !== undefined) terminateGroup(pgid);
      const reaped = (await afterHelperLoss(ctx, rec)).find((x) => x.run_id === runId);
      if (settled) return;
      if (reaped?.pgid !== undefined) pgid ??= reaped.pgid;
      const why = e ? ` (${e.message})` : '';
      if (!reaped)
        auditEnd(
          'helper_lost',
          `the link to the helper broke${why}${pgid !== undefined ? '; the broker stopped the process group' : answered ? ' after it accepted the run' : ' after the run was sent'}`,
        );
      settle(
        failure(
          'helper_lost',
          `the link to the helper of pane ${rec.pane_id} broke${why} ${pgid !== undefined ? `while the run was executing; tmux-run stopped its process group ${pgid}, but what the script did before is unknown` : answered ? 'after it accepted the run; whether the script started is unknown' : 'after the run was sent; whether it arrived is unknown'}`,
          answered ? 'observed' : 'possibly_sent',
          { state: 'unknown', authorization: auth, completion: { state: 'unobserved' } },
        ),
      );
    };
    trace?.mark('sent');
    x.send({
      type: 'run',
      binding,
      token,
      script: args.script,
      progress: ctx.onProgress !== undefined,
      ...(trace ? { trace: true } : {}),
      ...(ctx.client ? { client: ctx.client } : {}),
    });
  });
}
