// One tmux_run's exchange with the pane's helper, once the run is authorized and the link taken:
// the run goes out, the helper's frames become the call's result, a cancel is passed on (and
// enforced if the helper does not confirm it), a link that breaks becomes helper_lost with the
// run's process group stopped. Also what the held runs' conversations (held-link.ts) share with
// it: what a final reply stands for, progress forwarding, an unexpected frame, a lost helper.
import { listedHost, localGroup } from '../core/enrollment/remote-listing.js';
import { FAR_STOPS, hostWords, sessionEnded } from './session-ended.js';
import type { EnrollmentRecord } from '../core/enrollment/record.js';
import type { Reply, Request } from '../core/protocol/messages.js';
import type { Transport } from '../core/protocol/transport.js';
import { nothingRan } from '../core/protocol/errors.js';
import { HELPER_TAKE_MS } from '../core/protocol/limits.js';
import { terminateGroup } from '../core/os/process-group.js';
import { exchange, type Exchange } from './helper-client.js';
import type { LinkPool } from './link-pool.js';
import { failure, encodeStream, type Authorization, type Target, type ToolResult } from './result.js';
import { cancelReason } from './authorize.js';
import { helperAlive, reapDeadHelper, type Reaped } from './orphans.js';
import type { RunContext } from './run-context.js';
import { HelperWatch, takeBy, type Silence } from './helper-watch.js';

/** After a cancel, how long the broker waits for the helper to report before it stops the group itself. */
const CANCEL_WAIT_MS = 5000;

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

/** One authorized run and the link it goes over. */
export interface RunCall {
  ctx: RunContext;
  rec: EnrollmentRecord;
  target: Target;
  runId: string;
  digest: string;
  auth: Authorization;
  /** The link, taken from `links` for `socket`: given back after a final reply, closed otherwise. */
  t: Transport;
  links: LinkPool;
  socket: string;
}

/** Sends the run request `req` over the call's link; resolves with the call's one result. */
export function exchangeRun(call: RunCall, req: Request): Promise<ToolResult> {
  return new Promise<ToolResult>((resolve) => {
    new RunExchange(call, resolve).start(req);
  });
}

/** What one run's exchange with its helper knows so far, and how each event moves it on. */
class RunExchange {
  /** The helper sent something (so the run reached it). */
  private answered = false;
  /** The run's process group, once the helper said it started. */
  private pgid: number | undefined;
  private settled = false;
  /** The helper sent this run's final reply: the link owes nothing more and serves the next run. */
  private final = false;
  private cancelTimer: NodeJS.Timeout | undefined;
  /** Whether the helper took the run and keeps answering (helper-watch.ts). */
  private watch: HelperWatch | undefined;
  private readonly x: Exchange;
  private readonly tag: string;
  private readonly onAbort = (): void => this.cancel();

  constructor(
    private readonly call: RunCall,
    private readonly resolve: (r: ToolResult) => void,
  ) {
    this.x = exchange(call.t);
    this.tag = `run ${call.runId.slice(0, 8)} (sha256 ${call.digest.slice(0, 12)}) on ${call.rec.pane_id}`;
  }

  start(req: Request): void {
    const { ctx } = this.call;
    ctx.signal?.addEventListener('abort', this.onAbort, { once: true });
    this.x.onreply = (r: Reply) => this.reply(r);
    this.x.onclose = (e) => {
      void this.linkLost(e);
    };
    ctx.trace?.mark('sent');
    const by = takeBy();
    this.watch = new HelperWatch(this.call.rec, this.call.socket, by, (s) => this.silent(s));
    this.x.send({ ...req, take_by: by } as Request);
  }

  /** One frame from the helper: progress goes on to the caller, a final reply decides the call. */
  private reply(r: Reply): void {
    const { ctx, target, auth } = this.call;
    this.answered = true;
    this.watch?.frame();
    if (forwardProgress(r, ctx)) return;
    switch (r.type) {
      case 'started':
        this.pgid = localGroup(this.call.rec, r.pgid);
        return;
      case 'done':
      case 'error': {
        this.final = true;
        const trace = ctx.trace;
        if (trace) {
          trace.mark('reply');
          trace.merge(r.trace);
          if (r.type === 'done') {
            trace.info.stdout_bytes = r.stdout.length;
            trace.info.stderr_bytes = r.stderr.length;
          }
        }
        this.settle(resultFromReply(r, target, auth));
        return;
      }
      default:
        this.settle(unexpectedReply('a run', r.type, auth));
    }
  }

  /** The caller cancelled: the helper stops the group and reports; if it does not in time, the broker stops it. */
  private cancel(): void {
    const { ctx, runId, auth } = this.call;
    const reason = cancelReason(ctx.signal?.reason);
    this.x.send({ type: 'cancel', run_id: runId, ...(reason ? { reason } : {}) });
    this.cancelTimer = setTimeout(() => {
      if (this.pgid !== undefined) terminateGroup(this.pgid);
      this.auditEnd(
        'cancelled',
        `the caller cancelled it${reason ? ` (reason given: ${reason})` : ''}; the helper did not confirm the cancellation within ${CANCEL_WAIT_MS} ms${this.pgid !== undefined ? '; the broker stopped the process group' : ''}`,
      );
      this.settle(
        failure(
          'cancelled',
          "the call was cancelled; the helper did not confirm the stop in time, so tmux-run stopped the run's process group itself",
          'observed',
          { state: 'unknown', authorization: auth, completion: { state: 'unobserved' } },
        ),
      );
    }, CANCEL_WAIT_MS);
  }

  /**
   * The helper is gone mid-run: it cannot clean up after SIGKILL, so the broker stops the group it
   * was told about, and whatever else its run journal names (a run spawned before it could say so, held runs).
   */
  private async linkLost(e?: Error): Promise<void> {
    if (this.settled) return;
    const { ctx, rec, runId, auth } = this.call;
    if (this.pgid !== undefined) terminateGroup(this.pgid);
    const reaped = (await afterHelperLoss(ctx, rec)).find((y) => y.run_id === runId);
    if (this.settled) return;
    if (reaped?.pgid !== undefined) this.pgid ??= reaped.pgid;
    const { pgid, answered } = this;
    const why = e ? ` (${e.message})` : '';
    // A pane on another host whose ssh session ended (afterHelperLoss waited for it to show).
    const ended = sessionEnded(rec);
    if (ended) return this.sessionEnded(ended);
    if (!reaped)
      this.auditEnd(
        'helper_lost',
        `the link to the helper broke${why}${pgid !== undefined ? '; the broker stopped the process group' : answered ? ' after it accepted the run' : ' after the run was sent'}`,
      );
    this.settle(
      failure(
        'helper_lost',
        `the link to the helper of pane ${rec.pane_id} broke${why} ${pgid !== undefined ? `while the run was executing; tmux-run stopped its process group ${pgid}, but what the script did before is unknown` : answered ? 'after it accepted the run; whether the script started is unknown' : 'after the run was sent; whether it arrived is unknown'}`,
        answered ? 'observed' : 'possibly_sent',
        { state: 'unknown', authorization: auth, completion: { state: 'unobserved' } },
      ),
    );
  }

  /** The link broke because the pane's ssh session ended: said as session_ended, with what is known. */
  private sessionEnded(over: string): void {
    const { rec, auth } = this.call;
    const { answered } = this;
    this.auditEnd('session_ended', `the ssh session ended (${over})`);
    this.settle(
      failure(
        'session_ended',
        `the ssh session to ${hostWords(rec.remote!)} that carried pane ${rec.pane_id} ended (${over}) ${answered ? 'after the far end accepted the run' : 'after the run was sent; whether it arrived is unknown'}; ${FAR_STOPS}, but what the script did before is unknown. List panes again: a new session is a new pane generation`,
        answered ? 'observed' : 'possibly_sent',
        { state: 'unknown', authorization: auth, completion: { state: 'unobserved' } },
      ),
    );
  }

  /**
   * The helper does not answer (stopped or hung). A run it never took was refused unread by its
   * take-by time: nothing ran, nor will. One it took is given up: a started run's process group is
   * stopped here (the call that owned it ends), and the link closes, which tells the helper, when it
   * runs again, that the caller went away (a queued run is then dropped, a running one stopped).
   */
  private silent(s: Silence): void {
    if (this.settled) return;
    const { rec, auth } = this.call;
    const pane = `pane ${rec.pane_id}`;
    if (s.phase === 'untaken') {
      this.audit(
        'refused',
        'helper_unreachable',
        `the helper did not take the run within its take-by time (${s.why}); it refuses the run if it reads it later`,
      );
      this.settle(
        failure(
          'helper_unreachable',
          `the helper of ${pane} did not take the run: ${s.why}. The request carried a take-by time ${HELPER_TAKE_MS / 1000} s ahead, and a helper refuses a request it reads after that, so nothing ran and nothing will; retry once tmux_enrolled_panes shows the pane other than unresponsive`,
          'possibly_sent',
          { state: 'none', authorization: auth, completion: { state: 'unobserved' } },
        ),
      );
      return;
    }
    const { pgid } = this;
    if (pgid !== undefined) terminateGroup(pgid);
    this.auditEnd(
      'helper_unreachable',
      `the helper stopped answering during the run (${s.why})${pgid !== undefined ? '; the broker stopped the process group' : '; it had not reported the run started'}`,
    );
    this.settle(
      failure(
        'helper_unreachable',
        pgid !== undefined
          ? `the helper of ${pane} stopped answering while the run was executing: ${s.why}. tmux-run stopped the run's process group ${pgid}; what the script did before is unknown`
          : `the helper of ${pane} took the run but stopped answering before it reported the run started: ${s.why}. The call has given it up, and its closed link tells the helper to drop the run (or stop it) once it runs again; whether it started is unknown`,
        'observed',
        { state: 'unknown', authorization: auth, completion: { state: 'unobserved' } },
      ),
    );
  }

  /** Outcomes only the broker saw (the helper could not report them) go to the audit trail from here. */
  private auditEnd(outcome: string, detail: string): void {
    this.audit('end', outcome, detail);
  }

  private audit(event: 'end' | 'refused', outcome: string, detail: string): void {
    const { ctx, rec, runId, digest } = this.call;
    ctx.audit.tryAppend({
      event,
      run_id: runId,
      pane_id: rec.pane_id,
      ...(rec.remote ? { host: listedHost(rec) } : {}),
      script_digest: digest,
      outcome,
      by: 'broker',
      ...(ctx.client ? { client: ctx.client } : {}),
      ...(event === 'end' ? { ran: this.pgid !== undefined ? true : 'unknown' } : {}),
      ...(this.pgid !== undefined ? { pgid: this.pgid } : {}),
      detail,
    });
  }

  /** The call's one result: the first decision wins; the link goes back to the pool only after a final reply. */
  private settle(r: ToolResult): void {
    if (this.settled) return;
    this.settled = true;
    const { ctx, links, socket, t } = this.call;
    ctx.trace?.mark('encoded');
    this.watch?.stop();
    if (this.cancelTimer) clearTimeout(this.cancelTimer);
    ctx.signal?.removeEventListener('abort', this.onAbort);
    if (this.final) links.give(socket, t);
    else this.x.close();
    if (ctx.signal?.aborted)
      ctx.log(
        `${this.tag} cancelled by the client (${cancelReason(ctx.signal.reason) ?? 'no reason given'}): ${r.ok ? 'it had completed' : r.error.code} (${r.ok ? '' : r.error.message})`,
      );
    this.resolve(r);
  }
}
