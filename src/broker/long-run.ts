// tmux_run_start, tmux_run_wait, tmux_run_cancel and tmux_runs in the broker. A started run is
// held by the pane's helper, not by this call: the call returns after wait_ms (or when the run
// finishes) and the run goes on; wait and cancel find it again by run_id, from any broker.
import { scriptDigest } from '../enrollment/generation.js';
import type { EnrollmentRecord } from '../enrollment/record.js';
import type { HeldRunInfo, Overflow, Reply, Request } from '../protocol/messages.js';
import { terminateGroup } from '../os/process-group.js';
import { askOnce, ConnectError, connectHelper, exchange } from './helper-client.js';
import { listEnrolled, recordSocket, scanRecords } from './registry.js';
import { failure, type Authorization, type LongResult, type Target, type ToolResult } from './result.js';
import { validateCancelInput, validateStartInput, validateWaitInput } from './contract.js';
import { authorizeHeld, authorizeRun, heldAuthorization, isRecord, resolveTarget, scriptProblem } from './authorize.js';
import { auditedOutcome } from './held-outcome.js';
import { escapeControls } from './escape.js';
import {
  afterHelperLoss,
  auditRefusal,
  brokerRefusal,
  forwardProgress,
  resultFromReply,
  unexpectedReply,
  type RunArgs,
  type RunContext,
} from './run-tool.js';

/** wait_ms when a call gives none. */
export const START_WAIT_MS = 0;
export const WAIT_MS = 10_000;

export interface StartArgs extends RunArgs {
  wait_ms?: number;
  overflow?: Overflow;
  background?: boolean;
}

export interface HeldArgs {
  target: Target;
  run_id: string;
  wait_ms?: number;
}

/** One held run as tmux_runs and `tmux-run runs` show it. */
export interface RunListing {
  run_id: string;
  pane_id: string;
  generation: string;
  script_digest: string;
  state: HeldRunInfo['state'];
  queued_at: string;
  started_at: string | null;
  finished_at: string | null;
  outcome: HeldRunInfo['outcome'];
  stdout_bytes: number;
  stderr_bytes: number;
  held_until: string | null;
  background: boolean;
  /** Who asked (the MCP client's name and version from initialize), null when it gave none. */
  client: string | null;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** A final result whose streams passed their limits (overflow tail): each says so, with every byte counted. */
function withTruncation(result: ToolResult, r: Extract<Reply, { type: 'done' | 'error' }>): ToolResult {
  if (r.type !== 'done' || !r.truncated || !result.ok) return result;
  const d = result.data;
  const mark = (s: typeof d.stdout, t: { bytes: number; kept_from: number } | undefined): typeof d.stdout =>
    t ? { ...s, bytes: t.bytes, truncated: true, kept_from: t.kept_from } : s;
  return {
    ok: true,
    data: { ...d, stdout: mark(d.stdout, r.truncated.stdout), stderr: mark(d.stderr, r.truncated.stderr) },
  };
}

/**
 * Sends one request about a held run and turns the helper's answer into the call's result: the
 * final result, a pending snapshot, or a refusal. `auth` is known for a start; a wait or cancel
 * learns the script's digest from the helper's `held` frame. A link that breaks first means the
 * helper died: what it left running is stopped (its journal), and the result says so.
 */
function converse(
  ctx: RunContext,
  rec: EnrollmentRecord,
  target: Target,
  req: Request,
  runId: string,
  known: Authorization | undefined,
  what: string,
): Promise<LongResult> {
  return connectHelper(recordSocket(ctx.dir, rec)).then(
    (t) =>
      new Promise<LongResult>((resolve) => {
        const x = exchange(t);
        let auth = known;
        let answered = false;
        let pgid: number | undefined;
        let settled = false;
        const settle = (r: LongResult): void => {
          if (settled) return;
          settled = true;
          ctx.signal?.removeEventListener('abort', onAbort);
          x.close();
          resolve(r);
        };
        // A cancelled call (start or wait) lets go of the run; the helper holds it. No result is sent.
        const onAbort = (): void => {
          ctx.log(`${what}: the client cancelled the call; run ${runId.slice(0, 8)} is left to its helper`);
          settle(failure('cancelled', 'the call was cancelled; the run goes on, held by its helper', 'observed'));
        };
        ctx.signal?.addEventListener('abort', onAbort, { once: true });
        x.onreply = (r: Reply) => {
          answered = true;
          if (forwardProgress(r, ctx)) return;
          switch (r.type) {
            case 'held':
              auth = heldAuthorization(rec, runId, r.script_digest);
              return;
            case 'started':
              pgid = r.pgid;
              return;
            case 'pending':
              if (!auth) break;
              settle({
                pending: {
                  run_id: runId,
                  target,
                  authorization: auth,
                  state: r.state,
                  elapsed_ms: r.elapsed_ms,
                  stdout_bytes: r.stdout_bytes,
                  stderr_bytes: r.stderr_bytes,
                  stdout_tail: r.stdout_tail,
                  stderr_tail: r.stderr_tail,
                  background: r.background,
                },
              });
              return;
            case 'done':
            case 'error':
              // Refused before the helper found the run (unknown_run, stale_generation...): nothing changed.
              if (!auth) {
                if (r.type === 'error') settle(failure(r.code, r.message, 'not_sent'));
                else break;
                return;
              }
              settle(withTruncation(resultFromReply(r, target, auth), r));
              return;
          }
          settle(unexpectedReply(what, r.type, auth ?? null));
        };
        x.onclose = (e) => {
          void linkLost(e);
        };
        const linkLost = async (e?: Error): Promise<void> => {
          if (settled) return;
          if (pgid !== undefined) terminateGroup(pgid);
          const reaped = (await afterHelperLoss(ctx, rec)).find((y) => y.run_id === runId);
          if (settled) return;
          const why = e ? ` (${e.message})` : '';
          settle(
            failure(
              'helper_lost',
              `the link to the helper of pane ${rec.pane_id} broke${why} during ${what}${reaped ? `; tmux-run ${reaped.detail}` : ''}; what the run did is unknown (the audit trail has what was recorded)`,
              answered || reaped ? 'observed' : 'possibly_sent',
              {
                state: 'unknown',
                // A wait learns the digest from the helper's `held` frame; a link that broke before
                // it came has the run's journal (what afterHelperLoss found) to tell it.
                authorization: auth ?? (reaped ? heldAuthorization(rec, runId, reaped.script_digest) : null),
                completion: { state: 'unobserved' },
              },
            ),
          );
        };
        x.send(req);
      }),
    async (e: unknown) => {
      // No helper to talk to. If it died, stop what it left running; the run named here is lost with it.
      const reaped = (await afterHelperLoss(ctx, rec)).find((y) => y.run_id === runId);
      if (reaped)
        return failure(
          'helper_lost',
          `the helper of pane ${rec.pane_id} died (pid ${rec.helper_pid}); tmux-run ${reaped.detail}; the run's result is lost, and what it did is unknown (see tmux-run log --run ${runId.slice(0, 8)})`,
          'observed',
          {
            state: reaped.action === 'not_started' ? 'none' : 'unknown',
            authorization: heldAuthorization(rec, runId, reaped.script_digest),
            completion: { state: 'unobserved' },
          },
        );
      return failure(
        'helper_unreachable',
        `the helper of pane ${rec.pane_id} did not answer (${e instanceof ConnectError ? (e.errno ?? 'error') : 'error'}); its enrollment may have ended, and the runs it held with it; list panes again`,
        'not_sent',
      );
    },
  );
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
  const resolved = resolveTarget(
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
  if (ctx.signal?.aborted)
    return brokerRefusal(ctx, { run_id: binding.run_id, pane_id: args.target.id, script_digest: digest, tag })(
      'cancelled',
      'the call was cancelled before it was sent',
    );
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
      ...(ctx.client ? { client: ctx.client } : {}),
    },
    binding.run_id,
    auth,
    'tmux_run_start',
  );
  // The helper was never reached: the refusal is the broker's, as for tmux_run.
  if (!('pending' in r) && !r.ok && r.error.code === 'helper_unreachable') {
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
  const resolved = resolveTarget(
    ctx.dir,
    args.target,
    (code, message) => {
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
    },
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
  );
}

/** Asks one helper for the runs it holds; undefined when it does not answer within `ms`. */
async function heldRunsOf(dir: string, rec: EnrollmentRecord, ms = 2000): Promise<HeldRunInfo[] | undefined> {
  return askOnce(
    recordSocket(dir, rec),
    { type: 'list', auth: authorizeHeld(rec, 'list', '') },
    (r) => (r.type === 'runs' ? r.runs : undefined),
    ms,
  );
}

/** The runs every live helper holds (dead ones are cleaned up on the way, their runs stopped). */
export async function listHeldRuns(
  dir: string,
  opts: { by?: 'broker' | 'cli'; audit?: RunContext['audit'] } = {},
): Promise<RunListing[]> {
  const panes = await listEnrolled(dir, { cleanup: true, ...opts });
  const records = scanRecords(dir);
  const lists = await Promise.all(
    panes.map(async (p) => {
      const rec = records.find((r) => r.enrollment_generation === p.enrollment_generation);
      const runs = rec ? await heldRunsOf(dir, rec) : undefined;
      return (runs ?? []).map((r): RunListing => ({
        run_id: r.run_id,
        pane_id: p.pane_id,
        generation: p.generation,
        script_digest: r.script_digest,
        state: r.state,
        queued_at: iso(r.queued_at)!,
        started_at: iso(r.started_at),
        finished_at: iso(r.finished_at),
        outcome: r.outcome,
        stdout_bytes: r.stdout_bytes,
        stderr_bytes: r.stderr_bytes,
        held_until: iso(r.held_until),
        background: r.background,
        client: r.client ?? null,
      }));
    }),
  );
  return lists.flat().sort((a, b) => a.queued_at.localeCompare(b.queued_at));
}

export type { ToolResult };
