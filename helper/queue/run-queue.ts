// The pane's queue: the jobs waiting their turn, the current one (runs go one at a time, in arrival
// order), the background ones beside it, the held ones; who waits for each; and how each job is
// settled, exactly once, and recorded. Requests reach it through the service (helper/service.ts);
// a job's turn is taken by dispatch.ts.
import type { Transport } from '../../src/core/protocol/transport.js';
import type { Reply, Request } from '../../src/core/protocol/messages.js';
import type { ErrorCode } from '../../src/core/protocol/errors.js';
import { shellBusy } from '../../src/core/os/proc.js';
import { monotonicMs } from '../../src/core/protocol/trace.js';
import type { RunOutcome } from '../run/run-spec.js';
import type { ServiceDeps } from './service-deps.js';
import { WatchFeed } from '../watch/feed.js';
import { err, STOP_DETAIL, stopDetail, type Job, type StopReason } from './job.js';
import { finishJob, unranEnd, unstartedMessage } from './ending.js';
import { UsedRunIds } from './authorize.js';
import { Dispatch, type Turns } from './dispatch.js';
import { reportOf } from './outcome.js';
import { Waiters } from './waiters.js';
import { HeldRuns } from './held-runs.js';
import { BackgroundRuns } from './background.js';

/** Why a job was stopped by a request or a link (shutdown says its own). */
type CancelReason = 'cancelled' | 'cancel_requested' | 'stopped_by_person' | 'caller_gone';

export class RunQueue implements Turns {
  /** Admitted jobs waiting their turn, in arrival order. */
  private readonly waiting: Job[] = [];
  /** The job whose turn it is (asking the shell, or running). */
  private current: Job | undefined;
  /** Runs admitted since this helper started (its status says so: src/broker/wake.ts orders calls by it). */
  private admitted = 0;
  /** Background runs that gave up the queue once spawned, until they end. */
  private readonly background = new BackgroundRuns<Job>();
  private readonly dispatch: Dispatch;
  private shutDown = false;
  /** Run ids already used: each is accepted once. */
  readonly used = new UsedRunIds();
  /** Runs started with tmux_run_start, kept for wait, output and list. */
  readonly held = new HeldRuns<Job>();
  /** Who waits for each job, on which link. */
  readonly waiters = new Waiters();
  /** The person's live view (tmux-run watch): every watcher of this pane. */
  readonly watch: WatchFeed;

  constructor(
    private readonly d: ServiceDeps,
    /** Told each run's output size as it ends (helper/gc-hint.ts collects once runs pause). */
    private readonly gc: { runEnded(outputBytes: number): void },
  ) {
    this.watch = new WatchFeed(d.record.pane_id);
    this.dispatch = new Dispatch(d, this);
  }

  /** The service has ended (shell exited or enrollment revoked): nothing more is admitted or started. */
  get ended(): boolean {
    return this.shutDown;
  }

  /** Every job this helper knows: held ones, the current one, background ones, queued ones. */
  all(): Job[] {
    return [
      ...new Set([
        ...this.held.list(),
        ...(this.current ? [this.current] : []),
        ...this.background.all(),
        ...this.waiting,
      ]),
    ];
  }

  /** Jobs waiting their turn. */
  get length(): number {
    return this.waiting.length;
  }

  state(): 'idle' | 'busy' | 'running' | 'awaiting_approval' {
    if (this.current) return this.current.state === 'awaiting_approval' ? 'awaiting_approval' : 'running';
    return shellBusy(this.d.record.shell_pid) ? 'busy' : 'idle';
  }

  /** Tells the status publisher the run state (it writes only what changed, once per turn). */
  private publish(): void {
    if (this.ended) return;
    const cur = this.current;
    this.d.status?.({
      run: cur ? (cur.state === 'awaiting_approval' ? 'awaiting_approval' : 'running') : null,
      queued: this.waiting.length,
      admitted: this.admitted,
    });
  }

  /** An admitted job waits its turn; its caller is told its place, and waits for its reply. */
  enqueue(job: Job, req: Extract<Request, { type: 'run' | 'start' }>, t: Transport): void {
    const b = job.binding;
    this.waiting.push(job);
    this.admitted++;
    t.send({
      type: 'queued',
      run_id: b.run_id,
      position: this.waiting.length - 1 + (this.current ? 1 : 0),
    } satisfies Reply);
    if (job.trace) job.trace.queued = monotonicMs();
    this.waiters.add(
      job,
      { t, progress: req.progress, owner: !job.held },
      req.type === 'start' ? req.wait_ms : undefined,
    );
    void this.pump();
    this.publish();
  }

  /** A link opened: its waiters are kept, so that its closing lets go of them. */
  open(t: Transport): void {
    this.waiters.open(t);
  }

  /** A link closed: its runs stop, queued ones never start; a held run is nobody's, its waiters just stop waiting. */
  drop(t: Transport): void {
    this.waiters.close(t, (job) => this.cancel(job, 'caller_gone'));
    this.watch.drop(t);
  }

  /** A cancel request: the queued or current run it names, if this link owns it, is stopped. */
  cancelOwned(req: Extract<Request, { type: 'cancel' }>, t: Transport): void {
    const job = [...this.waiting, ...(this.current ? [this.current] : [])].find(
      (j) => j.binding.run_id === req.run_id && [...j.waiters].some((w) => w.owner && w.t === t),
    );
    if (!job) return;
    if (req.reason) job.cancelReason = req.reason;
    this.cancel(job, 'cancelled');
  }

  /** The run started: its waiters and watchers are told; a background run gives up the queue. */
  started(job: Job, reply: Reply): void {
    this.waiters.emit(job, reply);
    this.watch.started(job);
    if (job.background) this.release(job);
    this.publish();
  }

  /** Sends a progress frame to the job's waiters that asked for them. */
  progress(job: Job): void {
    this.waiters.sendProgress(job);
    this.publish();
  }

  /** The job's final reply: sent to every waiter, kept when the run is held. */
  settle(job: Job, reply: Reply): void {
    if (job.state === 'finished') return;
    finishJob(job, reply, this.d, this.held);
    this.waiters.finish(job, reply);
    this.watch.settled(job, reply);
    this.publish();
  }

  /** Settles a job taken from the queue whose script was never started; the audit trail says why. */
  settleUnstarted(job: Job, code: ErrorCode, message: string, why: StopReason, asked = false): void {
    if (job.state === 'finished') return;
    this.endUnran(
      job,
      code,
      `${stopDetail(job, why)} before the run started${asked ? ', while the person was asked to approve it' : ''}`,
      message,
    );
  }

  /** Settles a job whose script never ran: the audit trail's end entry says why (`detail`), then the reply goes. */
  private endUnran(job: Job, code: ErrorCode, detail: string, message: string): void {
    this.d.audit.tryAppend(unranEnd(job, this.d.record.pane_id, code, detail));
    this.settle(job, err(code, message, job.binding.run_id));
  }

  cancel(job: Job, why: CancelReason): void {
    if (job.cancelled || job.state === 'finished') return;
    job.cancelled = true;
    job.stopReason = why;
    const i = this.waiting.indexOf(job);
    if (i >= 0) {
      this.waiting.splice(i, 1);
      this.endUnran(
        job,
        'cancelled',
        `${stopDetail(job, why)} while the run was queued`,
        'the run was cancelled while queued',
      );
      return;
    }
    if (job.run) job.run.stop('cancelled');
    // Still asking the shell (or the person): nothing started, and nothing will (dispatch checks
    // `cancelled`); the question is withdrawn from the screen.
    else {
      const asked = job.state === 'awaiting_approval';
      job.withdraw?.abort();
      this.settleUnstarted(job, 'cancelled', unstartedMessage(why, asked), why, asked);
    }
  }

  /** Ends the queue: waiting jobs are refused with shell_exited, running ones are stopped and reported. */
  shutdown(reason: string, why: 'shell_exited' | 'revoked'): void {
    this.shutDown = true;
    for (const job of this.waiting.splice(0)) {
      this.endUnran(job, 'shell_exited', STOP_DETAIL[why], `${reason} before the queued run started`);
    }
    // The current run and every background run are stopped like any run.
    for (const cur of [...(this.current ? [this.current] : []), ...this.background.all()]) {
      if (cur.cancelled || cur.state === 'finished') continue;
      cur.cancelled = true;
      cur.stopReason = why;
      cur.withdraw?.abort();
      if (cur.run) cur.run.stop('cancelled');
      else this.settleUnstarted(cur, 'shell_exited', `${reason} before the run started`, why);
    }
  }

  /** Waits for the current run and the background runs (if any) to report. */
  async idle(): Promise<void> {
    const runs = [this.current, ...this.background.all()].flatMap((j) => (j?.run ? [j.run.done] : []));
    await Promise.all(runs);
  }

  /** The next job takes its turn, when no run holds the queue. */
  private async pump(): Promise<void> {
    if (this.current) return;
    const job = this.waiting.shift();
    if (!job) return;
    const full = job.background ? this.background.refusal(this.d.record.pane_id) : undefined;
    if (full) {
      this.dispatch.refuse(job, full.code, full.message);
      void this.pump();
      return;
    }
    this.current = job;
    try {
      const o = await this.dispatch.run(job);
      if (o) this.report(job, o);
    } catch (e) {
      this.settle(
        job,
        err('internal_error', `the helper failed: ${(e as Error).message}`, job.binding.run_id, job.run !== undefined),
      );
    } finally {
      this.background.delete(job);
      // A background run gave up the queue when it was spawned: the next run may be the current one.
      if (this.current === job) {
        this.current = undefined;
        void this.pump();
      }
      this.publish();
      this.d.shell.afterRun?.();
    }
  }

  /** A background run was spawned: it goes on beside the queue, and the next run of the pane may start. */
  private release(job: Job): void {
    if (this.current !== job) return;
    this.current = undefined;
    this.background.add(job);
    void this.pump();
    this.publish();
  }

  /** The run's final reply first; its audit end entry and notice follow in the same turn (outcome.ts). */
  private report(job: Job, o: RunOutcome): void {
    const { reply, end, notice } = reportOf(job, o, this.d.record.pane_id);
    // Queued before the reply is settled, as the reply's own delivery may be: the end entry and
    // the notice then follow at once, and the caller does not wait for them.
    queueMicrotask(() => {
      this.d.audit.tryAppend(end);
      this.d.shell.notify(notice);
    });
    this.settle(job, reply);
    this.gc.runEnded(o.stdoutBytes + o.stderrBytes);
  }
}
