// How a job ends, the parts that are the job's own: what settling does to it (finished, its input
// and terminal closed, its journal entry, a held run's reply kept, its trace stamped), what the
// audit trail says of a run that never ran, and the words for one cancelled before it started.
// The service (helper/service.ts) says when, and tells the waiters and the watch feed.
import type { Reply } from '../../src/core/protocol/messages.js';
import type { ErrorCode } from '../../src/core/protocol/errors.js';
import type { AuditEntry } from '../../src/core/audit/audit-log.js';
import type { RunJournal } from '../../src/core/enrollment/run-journal.js';
import { monotonicMs, type Stamps } from '../../src/core/protocol/trace.js';
import type { HeldRuns } from './held-runs.js';
import { clientEntry, type Job, type StopReason } from './job.js';

/** Marks the job finished with its final reply (called once, before the reply goes out). */
export function finishJob(
  job: Job,
  reply: Reply,
  d: { journal: Pick<RunJournal, 'tryNote'>; log: (message: string) => void },
  held: HeldRuns<Job>,
): void {
  job.state = 'finished';
  job.finishedAt = Date.now();
  job.input?.end(); // also for one refused or stopped before it started
  job.terminal?.finish();
  if (job.journaled) d.journal.tryNote({ k: 'end', run_id: job.binding.run_id }, d.log);
  if (job.held) {
    job.final = reply;
    held.finished(job);
  }
  if (job.trace) {
    job.trace.replied = monotonicMs();
    (reply as { trace?: Stamps }).trace = job.trace;
  }
}

/** The audit trail's end entry for a job whose script never ran: `detail` says why. */
export function unranEnd(job: Job, paneId: string, code: ErrorCode, detail: string): AuditEntry {
  const b = job.binding;
  return {
    event: 'end',
    run_id: b.run_id,
    pane_id: paneId,
    script_digest: b.script_digest,
    ...clientEntry(job),
    outcome: code,
    ran: false,
    detail,
  };
}

/** The message of a run cancelled (or whose caller went away) before it started. */
export function unstartedMessage(why: StopReason, asked: boolean): string {
  const withdrawn = asked ? ' (the question to the person was withdrawn)' : '';
  return why === 'caller_gone'
    ? `the caller went away before the run started${withdrawn}`
    : `the run was cancelled before it started${withdrawn}`;
}
