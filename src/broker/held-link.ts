// One conversation with a pane's helper about a held run (tmux_run_start, tmux_run_wait,
// tmux_run_cancel): the request goes out, and the helper's frames become the call's result (the
// final result, a pending snapshot or a refusal); a link that breaks, or a helper that is gone,
// becomes helper_lost or helper_unreachable, with what it left running stopped.
import { localGroup } from '../core/enrollment/remote-listing.js';
import type { EnrollmentRecord } from '../core/enrollment/record.js';
import type { Reply, Request } from '../core/protocol/messages.js';
import type { Transport } from '../core/protocol/transport.js';
import { terminateGroup } from '../core/os/process-group.js';
import { ConnectError, connectHelper, exchange } from './helper-client.js';
import { HELPER_TAKE_MS } from '../core/protocol/limits.js';
import { failure, type Authorization, type LongResult, type Target, type ToolResult } from './result.js';
import { heldAuthorization, type Refuse } from './authorize.js';
import { connectAwake } from './wake.js';
import { afterHelperLoss, forwardProgress, resultFromReply, unexpectedReply } from './run-exchange.js';
import type { RunContext } from './run-context.js';
import { recordSocket } from './registry.js';
import { HelperWatch, takeBy, type Silence } from './helper-watch.js';
import { FAR_STOPS, hostWords, sessionEnded } from './session-ended.js';

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

/** What one conversation about a held run knows so far. */
interface Talk {
  ctx: RunContext;
  rec: EnrollmentRecord;
  target: Target;
  runId: string;
  what: string;
  /** Known for a start; a wait or cancel learns the script's digest from the helper's `held` frame. */
  auth: Authorization | undefined;
  /** The helper sent something (so the request reached it). */
  answered: boolean;
  /** The run's process group, once the helper said it started. */
  pgid: number | undefined;
  settled: boolean;
  /** The request's wait_ms: the helper owes a pending reply by then once it took it. */
  waitMs?: number;
}

/**
 * Sends one request about a held run and turns the helper's answer into the call's result: the
 * final result, a pending snapshot, or a refusal. `known` is the authorization of a start; a wait
 * or cancel learns the script's digest from the helper's `held` frame. A link that breaks first
 * means the helper died: what it left running is stopped (its journal), and the result says so.
 */
export function converse(
  ctx: RunContext,
  rec: EnrollmentRecord,
  target: Target,
  req: Request,
  runId: string,
  known: Authorization | undefined,
  what: string,
  refuse: Refuse = (code, message) => failure(code, message, 'not_sent'),
): Promise<LongResult> {
  // (A pane that went dormant since it was resolved is woken, once: `refuse` answers a wake refused.)
  return connectAwake(ctx.dir, rec, refuse, connectHelper).then(
    (linked) =>
      'link' in linked
        ? talk(linked.link, req, {
            ctx,
            rec: linked.rec,
            target,
            runId,
            what,
            auth: known,
            answered: false,
            pgid: undefined,
            settled: false,
            ...('wait_ms' in req ? { waitMs: req.wait_ms } : {}),
          })
        : linked,
    (e: unknown) => noHelper(ctx, rec, runId, e),
  );
}

/** Sends `req` over `t` and settles with the first frame (or loss) that decides the call. */
function talk(t: Transport, req: Request, s: Talk): Promise<LongResult> {
  return new Promise<LongResult>((resolve) => {
    const x = exchange(t);
    const by = takeBy();
    const watch = new HelperWatch(s.rec, recordSocket(s.ctx.dir, s.rec), by, (why) => settle(silentHelper(s, why)));
    const settle = (r: LongResult): void => {
      if (s.settled) return;
      s.settled = true;
      watch.stop();
      s.ctx.signal?.removeEventListener('abort', onAbort);
      x.close();
      resolve(r);
    };
    // A cancelled call (start or wait) lets go of the run; the helper holds it. No result is sent.
    const onAbort = (): void => {
      s.ctx.log(`${s.what}: the client cancelled the call; run ${s.runId.slice(0, 8)} is left to its helper`);
      settle(failure('cancelled', 'the call was cancelled; the run goes on, held by its helper', 'observed'));
    };
    s.ctx.signal?.addEventListener('abort', onAbort, { once: true });
    x.onreply = (r: Reply) => {
      if (!s.answered && s.waitMs !== undefined) watch.expect(s.waitMs);
      s.answered = true;
      watch.frame();
      const decided = heldReply(s, r);
      if (decided) settle(decided);
    };
    x.onclose = (e) => {
      void linkLost(s, settle, e);
    };
    x.send({ ...req, take_by: by } as Request);
  });
}

/** One frame from the helper: the call's result when it decides the call, undefined while it goes on. */
function heldReply(s: Talk, r: Reply): LongResult | undefined {
  if (forwardProgress(r, s.ctx)) return undefined;
  switch (r.type) {
    case 'held':
      s.auth = heldAuthorization(s.rec, s.runId, r.script_digest);
      return undefined;
    case 'started':
      s.pgid = localGroup(s.rec, r.pgid);
      return undefined;
    case 'pending':
      if (!s.auth) break;
      return {
        pending: {
          run_id: s.runId,
          target: s.target,
          authorization: s.auth,
          state: r.state,
          elapsed_ms: r.elapsed_ms,
          stdout_bytes: r.stdout_bytes,
          stderr_bytes: r.stderr_bytes,
          stdout_tail: r.stdout_tail,
          stderr_tail: r.stderr_tail,
          background: r.background,
          ...(r.input ? { input: r.input } : {}),
          ...(r.input_bytes !== undefined ? { input_bytes: r.input_bytes } : {}),
          ...(r.attached !== undefined ? { attached: r.attached } : {}),
          ...(r.echo !== undefined ? { echo: r.echo } : {}),
        },
      };
    case 'done':
    case 'error':
      // Refused before the helper found the run (unknown_run, stale_generation...): nothing changed.
      if (!s.auth) {
        if (r.type === 'error') return failure(r.code, r.message, 'not_sent');
        break;
      }
      return withTruncation(resultFromReply(r, s.target, s.auth), r);
  }
  return unexpectedReply(s.what, r.type, s.auth ?? null);
}

/**
 * The helper does not answer (stopped or hung). A request it never took is refused unread by its
 * take-by time: this call changed nothing. One it took leaves the run as it was: held by the
 * helper, which goes on with it if it runs again.
 */
function silentHelper(s: Talk, silence: Silence): ToolResult {
  const { rec, runId, what } = s;
  const run = `run ${runId.slice(0, 8)}`;
  const again = `call ${what === 'tmux_run_cancel' ? 'tmux_run_cancel' : 'tmux_run_wait'} with run_id ${runId} once tmux_enrolled_panes shows pane ${rec.pane_id} other than unresponsive`;
  if (silence.phase === 'untaken')
    return failure(
      'helper_unreachable',
      `the helper of pane ${rec.pane_id} did not take the ${what} request: ${silence.why}. The request carried a take-by time ${HELPER_TAKE_MS / 1000} s ahead, and a helper refuses a request it reads after that, so ${what === 'tmux_run_start' ? 'nothing ran and nothing will' : `it changed nothing and will not; ${run}, if the helper holds it, is as it was`}`,
      'possibly_sent',
      {
        state: 'none',
        authorization: what === 'tmux_run_start' ? (s.auth ?? null) : null,
        completion: { state: 'unobserved' },
      },
    );
  const took =
    what === 'tmux_run_start'
      ? `took ${run}${s.pgid !== undefined ? ', which started,' : ''} and then stopped answering`
      : what === 'tmux_run_cancel'
        ? `took the cancel of ${run} and then stopped answering: whether the run stopped is unknown`
        : `found ${run} and then stopped answering`;
  return failure(
    'helper_unreachable',
    `the helper of pane ${rec.pane_id} ${took}: ${silence.why}. The run stays held by the helper and goes on if it runs again; ${again}`,
    'observed',
    { state: 'unknown', authorization: s.auth ?? null, completion: { state: 'unobserved' } },
  );
}

/** The link broke before the call was decided: the helper died; stop what it left running and say so. */
async function linkLost(s: Talk, settle: (r: LongResult) => void, e?: Error): Promise<void> {
  if (s.settled) return;
  const { ctx, rec, runId, what } = s;
  if (s.pgid !== undefined) terminateGroup(s.pgid);
  const reaped = (await afterHelperLoss(ctx, rec)).find((y) => y.run_id === runId);
  if (s.settled) return;
  const why = e ? ` (${e.message})` : '';
  const ended = sessionEnded(rec);
  if (ended)
    return settle(
      failure(
        'session_ended',
        `the ssh session to ${hostWords(rec.remote!)} that carried pane ${rec.pane_id} ended (${ended}) during ${what}; ${FAR_STOPS}, and the run's held result is lost with it (the audit trail has what was recorded)`,
        s.answered ? 'observed' : 'possibly_sent',
        { state: 'unknown', authorization: s.auth ?? null, completion: { state: 'unobserved' } },
      ),
    );
  settle(
    failure(
      'helper_lost',
      `the link to the helper of pane ${rec.pane_id} broke${why} during ${what}${reaped ? `; tmux-run ${reaped.detail}` : ''}; what the run did is unknown (the audit trail has what was recorded)`,
      s.answered || reaped ? 'observed' : 'possibly_sent',
      {
        state: 'unknown',
        // A wait learns the digest from the helper's `held` frame; a link that broke before
        // it came has the run's journal (what afterHelperLoss found) to tell it.
        authorization: s.auth ?? (reaped ? heldAuthorization(rec, runId, reaped.script_digest) : null),
        completion: { state: 'unobserved' },
      },
    ),
  );
}

/** No helper to talk to. If it died, stop what it left running; the run named here is lost with it. */
async function noHelper(ctx: RunContext, rec: EnrollmentRecord, runId: string, e: unknown): Promise<ToolResult> {
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
  const ended = sessionEnded(rec);
  if (ended)
    return failure(
      'session_ended',
      `the ssh session to ${hostWords(rec.remote!)} that carried pane ${rec.pane_id} ended (${ended}); ${FAR_STOPS}, and the runs it held are lost with it. Nothing was sent; list panes again`,
      'not_sent',
    );
  return failure(
    'helper_unreachable',
    `the helper of pane ${rec.pane_id} did not answer (${e instanceof ConnectError ? (e.errno ?? 'error') : 'error'}); its enrollment may have ended, and the runs it held with it; list panes again`,
    'not_sent',
  );
}
