// The requests about runs held for tmux_run_start: wait (tmux_run_wait), cancel_held
// (tmux_run_cancel), list (tmux_runs) and output (tmux_run_output). Each is authorized on its own
// (authorize.ts); wait and cancel are audited: what they found, and what they answered with (list
// and output only read).
import type { Transport } from '../../src/core/protocol/transport.js';
import type { Reply, Request } from '../../src/core/protocol/messages.js';
import type { HeldOp } from '../../src/core/protocol/token.js';
import type { Enrollment, ServiceDeps } from './service-deps.js';
import { HELD_FOR_MS, HELD_MAX_FINISHED, type HeldRuns } from './held-runs.js';
import { checkHeld, lateRefusal } from './authorize.js';
import { monotonicMs } from '../../src/core/protocol/trace.js';
import { err, info, type Job } from './job.js';
import { chunkWindow } from '../output/stream-window.js';
import type { RunQueue } from './run-queue.js';

const HELD_MINUTES = HELD_FOR_MS / 60_000;

/**
 * Checks a request about held runs, as it is read (`takeBy`: its take-by time, when it has one: a
 * request read later was given up by its caller and is refused unread); on failure replies with the
 * error (nothing changes) and returns false.
 */
export function authorized(
  e: Enrollment,
  op: HeldOp,
  runId: string,
  a: Extract<Request, { type: 'list' }>['auth'],
  t: Transport,
  takeBy?: number,
): boolean {
  const refusal = lateRefusal(takeBy, monotonicMs()) ?? checkHeld(op, runId, a, e.record, e.secret, Date.now());
  if (refusal) t.send(err(refusal.code, refusal.message, runId || undefined));
  return refusal === undefined;
}

/** tmux_run_list: every held run. */
export function list(req: Extract<Request, { type: 'list' }>, t: Transport, e: Enrollment, held: HeldRuns<Job>): void {
  if (!authorized(e, 'list', '', req.auth, t, req.take_by)) return;
  t.send({ type: 'runs', runs: held.list().map(info) } satisfies Reply);
}

/** The refusal of a request for a run this helper does not hold. */
export function unknownRun(e: Pick<Enrollment, 'record'>, runId: string): Reply {
  return err(
    'unknown_run',
    `pane ${e.record.pane_id}'s helper holds no run ${runId} (it never existed here, was not started with tmux_run_start, or its result was dropped: results are held for ${HELD_MINUTES} minutes, at most ${HELD_MAX_FINISHED} per pane; the audit trail keeps every outcome)`,
    runId,
  );
}

/** tmux_run_output: up to max_bytes of one stream from an absolute offset; answers at once. */
export function output(
  req: Extract<Request, { type: 'output' }>,
  t: Transport,
  e: Enrollment,
  held: HeldRuns<Job>,
): void {
  if (!authorized(e, 'output', req.run_id, req.auth, t, req.take_by)) return;
  const job = held.get(req.run_id);
  if (!job) {
    t.send(unknownRun(e, req.run_id));
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
  d: Pick<ServiceDeps, 'record' | 'secret' | 'audit'>,
  queue: RunQueue,
): void {
  if (!authorized(d, req.type, req.run_id, req.auth, t, req.take_by)) return;
  const rec = d.record;
  const event = req.type === 'wait' ? 'wait' : 'cancel';
  const job = queue.held.get(req.run_id);
  if (!job) {
    d.audit.tryAppend({ event, run_id: req.run_id, pane_id: rec.pane_id, outcome: 'unknown_run' });
    t.send(unknownRun(d, req.run_id));
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
  if (req.type === 'cancel_held' && before !== 'finished')
    queue.cancel(job, byPerson ? 'stopped_by_person' : 'cancel_requested');
  queue.waiters.add(
    job,
    {
      t,
      progress: req.progress,
      owner: false,
      onEnd: (how) =>
        d.audit.tryAppend({
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
