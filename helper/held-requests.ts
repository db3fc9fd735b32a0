// The requests about runs held for tmux_run_start: wait (tmux_run_wait), cancel_held
// (tmux_run_cancel) and list (tmux_run_list). Each is authorized on its own (authorize.ts) and
// audited: what it found, and what it answered with.
import type { Transport } from '../src/protocol/transport.js';
import type { Reply, Request } from '../src/protocol/messages.js';
import type { HeldOp } from '../src/protocol/token.js';
import type { EnrollmentRecord } from '../src/enrollment/record.js';
import type { AuditLog } from '../src/audit/audit-log.js';
import { HELD_FOR_MS, HELD_MAX_FINISHED, type HeldRuns } from './held-runs.js';
import { checkHeld } from './authorize.js';
import { err, info, type Job } from './job.js';
import type { Waiters } from './waiters.js';

const HELD_MINUTES = HELD_FOR_MS / 60_000;

/** What serving these requests needs of the service. */
export interface HeldContext {
  record: EnrollmentRecord;
  secret: Buffer;
  audit: AuditLog;
  held: HeldRuns<Job>;
  waiters: Waiters;
  /** Stops a held run for a tmux_run_cancel request. */
  cancel: (job: Job) => void;
}

/** Checks a wait, cancel or list request; on failure replies with the error (nothing changes) and returns false. */
function authorized(
  cx: HeldContext,
  op: HeldOp,
  runId: string,
  a: Extract<Request, { type: 'list' }>['auth'],
  t: Transport,
): boolean {
  const refusal = checkHeld(op, runId, a, cx.record, cx.secret, Date.now());
  if (refusal) t.send(err(refusal.code, refusal.message, runId || undefined));
  return refusal === undefined;
}

/** tmux_run_list: every held run. */
export function list(req: Extract<Request, { type: 'list' }>, t: Transport, cx: HeldContext): void {
  if (!authorized(cx, 'list', '', req.auth, t)) return;
  t.send({ type: 'runs', runs: cx.held.list().map(info) } satisfies Reply);
}

/** tmux_run_wait and tmux_run_cancel: answer with the final reply, or a pending snapshot after wait_ms. */
export function waitOrCancel(
  req: Extract<Request, { type: 'wait' | 'cancel_held' }>,
  t: Transport,
  cx: HeldContext,
): void {
  if (!authorized(cx, req.type, req.run_id, req.auth, t)) return;
  const rec = cx.record;
  const event = req.type === 'wait' ? 'wait' : 'cancel';
  const job = cx.held.get(req.run_id);
  if (!job) {
    cx.audit.tryAppend({ event, run_id: req.run_id, pane_id: rec.pane_id, outcome: 'unknown_run' });
    t.send(
      err(
        'unknown_run',
        `pane ${rec.pane_id}'s helper holds no run ${req.run_id} (it never existed here, was not started with tmux_run_start, or its result was dropped: results are held for ${HELD_MINUTES} minutes, at most ${HELD_MAX_FINISHED} per pane; the audit trail keeps every outcome)`,
        req.run_id,
      ),
    );
    return;
  }
  const before = job.state;
  t.send({
    type: 'held',
    run_id: req.run_id,
    script_digest: job.binding.script_digest,
    state: before,
  } satisfies Reply);
  const base = { run_id: req.run_id, pane_id: rec.pane_id, script_digest: job.binding.script_digest };
  if (req.type === 'cancel_held' && before !== 'finished') cx.cancel(job);
  cx.waiters.add(
    job,
    {
      t,
      progress: req.progress,
      owner: false,
      onEnd: (how) =>
        cx.audit.tryAppend({
          event,
          ...base,
          // What the request found, and what it answered with.
          outcome: how === 'final' ? 'finished' : how === 'pending' ? 'pending' : 'caller_gone',
          state: before,
          wait_ms: req.wait_ms,
        }),
    },
    req.wait_ms,
  );
}
