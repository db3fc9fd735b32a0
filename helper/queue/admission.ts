// A run or start request's admission: the checks before it may wait its turn (the service still
// running, the token, a fresh run id, the shell alive), then its job; a held one is noted in the run
// journal and the audit trail at once. A refusal is audited, answered and shown to watchers.
import type { Transport } from '../../src/core/protocol/transport.js';
import type { Request } from '../../src/core/protocol/messages.js';
import type { ErrorCode } from '../../src/core/protocol/errors.js';
import { monotonicMs } from '../../src/core/protocol/trace.js';
import { checkRun, lateRefusal } from './authorize.js';
import type { ServiceDeps } from './service-deps.js';
import type { RunQueue } from './run-queue.js';
import { runMode } from './background.js';
import { clientEntry, err, type Job } from './job.js';
import { InputFeed } from '../run/input-feed.js';
import { RunTerminal } from '../run/terminal.js';
import { DEFAULT_TERMINAL_SIZE } from '../../src/core/protocol/limits.js';

/**
 * A start request's input: a feed for pipe and terminal runs (input given before the run starts
 * waits there), and a terminal run's terminal (its screen exists, blank, from the start; the
 * emulator loads with a helper's first terminal run).
 */
function inputOf(req: Extract<Request, { type: 'run' | 'start' }>): Pick<Job, 'input' | 'terminal'> {
  if (req.type !== 'start' || req.input === undefined) return {};
  const input = new InputFeed(req.input);
  return req.input === 'terminal'
    ? { input, terminal: new RunTerminal(req.terminal_size ?? { ...DEFAULT_TERMINAL_SIZE }) }
    : { input };
}

/** The job for an admitted request, or undefined once a refusal has been sent. */
export function admit(
  req: Extract<Request, { type: 'run' | 'start' }>,
  t: Transport,
  received: number,
  d: Pick<ServiceDeps, 'record' | 'secret' | 'audit' | 'journal' | 'log' | 'alive'>,
  queue: RunQueue,
): Job | undefined {
  const b = req.binding;
  const rec = d.record;
  const refuse = (code: ErrorCode, message: string): undefined => {
    d.audit.tryAppend({
      event: 'refused',
      run_id: b.run_id,
      pane_id: rec.pane_id,
      script_digest: b.script_digest,
      ...clientEntry(req),
      outcome: code,
    });
    t.send(err(code, message, b.run_id));
    queue.watch.refused(b, req.client, code, message);
    return undefined;
  };
  if (queue.ended) return refuse('shell_exited', 'the enrolled shell has exited');
  const now = Date.now();
  const refusal = lateRefusal(req.take_by, received) ?? checkRun(req, rec, d.secret, now);
  if (refusal) return refuse(refusal.code, refusal.message);
  if (!queue.used.use(b.run_id, now)) return refuse('replayed', 'this run id was already used');
  if (!d.alive()) return refuse('shell_exited', 'the enrolled shell has exited');
  const held = req.type === 'start';
  const job: Job = {
    binding: b,
    script: req.script,
    queuedAt: now,
    cancelled: false,
    held,
    ...runMode(req),
    ...inputOf(req),
    state: 'queued',
    waiters: new Set(),
    ...clientEntry(req),
    ...(req.type === 'run' && req.trace ? { trace: { received, verified: monotonicMs() } } : {}),
  };
  const feed = job.input;
  if (feed) feed.onInput = (chunk, from) => queue.watch.input(job, chunk, from);
  if (held) {
    queue.held.add(job);
    // Noted so that a helper killed before the run starts still leaves its outcome to the audit trail.
    d.journal.tryNote({ k: 'held', run_id: b.run_id, digest: b.script_digest, at: now }, d.log);
    job.journaled = true;
    d.audit.tryAppend({
      event: 'held',
      run_id: b.run_id,
      pane_id: rec.pane_id,
      script_digest: b.script_digest,
      ...clientEntry(job),
      outcome: 'queued',
      wait_ms: req.wait_ms,
    });
  }
  return job;
}
