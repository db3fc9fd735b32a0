// The requests about runs held for tmux_run_start: wait (tmux_run_wait), cancel_held
// (tmux_run_cancel), list (tmux_runs) and output (tmux_run_output). Each is authorized on its own
// (authorize.ts); wait and cancel are audited: what they found, and what they answered with (list
// and output only read).
import type { Transport } from '../../src/core/protocol/transport.js';
import type { Reply, Request } from '../../src/core/protocol/messages.js';
import type { HeldOp } from '../../src/core/protocol/token.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';
import type { AuditLog } from '../../src/core/audit/audit-log.js';
import { HELD_FOR_MS, HELD_MAX_FINISHED, type HeldRuns } from './held-runs.js';
import { checkHeld, lateRefusal } from './authorize.js';
import { monotonicMs } from '../../src/core/protocol/trace.js';
import { err, info, type Job } from './job.js';
import { chunkWindow } from '../output/stream-window.js';
import type { Waiters } from './waiters.js';

const HELD_MINUTES = HELD_FOR_MS / 60_000;

/** What serving these requests needs of the service. */
export interface HeldContext {
  record: EnrollmentRecord;
  secret: Buffer;
  audit: AuditLog;
  held: HeldRuns<Job>;
  waiters: Waiters;
  /** Stops a held run for a tmux_run_cancel request (`byPerson`: the person's `tmux-run stop`). */
  cancel: (job: Job, byPerson: boolean) => void;
}

/**
 * Checks a request about held runs, as it is read (`takeBy`: its take-by time, when it has one: a
 * request read later was given up by its caller and is refused unread); on failure replies with the
 * error (nothing changes) and returns false.
 */
export function authorized(
  cx: Pick<HeldContext, 'record' | 'secret'>,
  op: HeldOp,
  runId: string,
  a: Extract<Request, { type: 'list' }>['auth'],
  t: Transport,
  takeBy?: number,
): boolean {
  const refusal = lateRefusal(takeBy, monotonicMs()) ?? checkHeld(op, runId, a, cx.record, cx.secret, Date.now());
  if (refusal) t.send(err(refusal.code, refusal.message, runId || undefined));
  return refusal === undefined;
}

/** tmux_run_list: every held run. */
export function list(req: Extract<Request, { type: 'list' }>, t: Transport, cx: HeldContext): void {
  if (!authorized(cx, 'list', '', req.auth, t, req.take_by)) return;
  t.send({ type: 'runs', runs: cx.held.list().map(info) } satisfies Reply);
}

/** The refusal of a request for a run this helper does not hold. */
export function unknownRun(cx: Pick<HeldContext, 'record'>, runId: string): Reply {
  return err(
    'unknown_run',
    `pane ${cx.record.pane_id}'s helper holds no run ${runId} (it never existed here, was not started with tmux_run_start, or its result was dropped: results are held for ${HELD_MINUTES} minutes, at most ${HELD_MAX_FINISHED} per pane; the audit trail keeps every outcome)`,
    runId,
  );
}

/** tmux_run_output: up to max_bytes of one stream from an absolute offset; answers at once. */
export function output(req: Extract<Request, { type: 'output' }>, t: Transport, cx: HeldContext): void {
  if (!authorized(cx, 'output', req.run_id, req.auth, t, req.take_by)) return;
  const job = cx.held.get(req.run_id);
  if (!job) {
    t.send(unknownRun(cx, req.run_id));
    return;
  }
  const store = job.run?.[req.stream];
  const got = store?.read(req.from, req.max_bytes) ?? { from: req.from, bytes: Buffer.alloc(0) };
  const chunk = chunkWindow(got.bytes, got.from);
  t.send({
    type: 'output',
    run_id: req.run_id,
    state: job.state,
    stream: req.stream,
    ...chunk,
    total_bytes: store?.total ?? 0,
    kept_from: store?.keptFrom ?? 0,
    finished: job.state === 'finished',
  } satisfies Reply);
}

/** tmux_run_wait and tmux_run_cancel: answer with the final reply, or a pending snapshot after wait_ms. */
export function waitOrCancel(
  req: Extract<Request, { type: 'wait' | 'cancel_held' }>,
  t: Transport,
  cx: HeldContext,
): void {
  if (!authorized(cx, req.type, req.run_id, req.auth, t, req.take_by)) return;
  const rec = cx.record;
  const event = req.type === 'wait' ? 'wait' : 'cancel';
  const job = cx.held.get(req.run_id);
  if (!job) {
    cx.audit.tryAppend({ event, run_id: req.run_id, pane_id: rec.pane_id, outcome: 'unknown_run' });
    t.send(unknownRun(cx, req.run_id));
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
  const byPerson = req.type === 'cancel_held' && req.by === 'person';
  if (req.type === 'cancel_held' && before !== 'finished') cx.cancel(job, byPerson);
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
          ...(byPerson ? { by: 'person' } : {}),
        }),
    },
    req.wait_ms,
  );
}
