// The helper's service, the coordinator: it takes each request off its link, keeps the queue (runs
// one at a time, in arrival order, in the shell's current state), and settles every job exactly
// once, recording it. The how of each step is in helper/queue/ (the jobs) and the rooms it uses.
import type { Transport } from '../src/core/protocol/transport.js';
import { checkRequest, type Reply, type Request } from '../src/core/protocol/messages.js';
import type { RunJournal } from '../src/core/enrollment/run-journal.js';
import type { ErrorCode } from '../src/core/protocol/errors.js';
import type { AuditLog } from '../src/core/audit/audit-log.js';
import type { EnrollmentRecord } from '../src/core/enrollment/record.js';
import { monotonicMs } from '../src/core/protocol/trace.js';
import { HeldRuns } from './queue/held-runs.js';
import type { RunOutcome } from './run/run-spec.js';
import type { Shell } from './shell/shell.js';
import { err, STOP_DETAIL, stopDetail, type Job, type StopReason } from './queue/job.js';
import { finishJob, unranEnd, unstartedMessage } from './queue/ending.js';
import { revokeAuthorized, UsedRunIds } from './queue/authorize.js';
import { dispatch, refuseJob, shellBusy, type DispatchContext } from './queue/dispatch.js';
import { reportOf } from './queue/outcome.js';
import { GcHint } from './gc-hint.js';
import { Waiters } from './queue/waiters.js';
import { list, output, waitOrCancel, type HeldContext } from './queue/held-requests.js';
import { BackgroundRuns } from './queue/background.js';
import { pongOf } from './pong.js';
import { WatchFeed } from './watch/feed.js';
import { serveWatch, type WatchContext } from './queue/watch-request.js';
import { admit, type AdmissionContext } from './queue/admission.js';
import { detach, serveTerminal, type TerminalContext } from './queue/input-requests.js';
import type { RunState } from './status.js';

export interface ServiceDeps {
  record: EnrollmentRecord;
  secret: Buffer;
  shell: Pick<Shell, 'ask' | 'notify' | 'revoked' | 'mode'> & Partial<Pick<Shell, 'sandbox' | 'afterRun'>>;
  audit: AuditLog;
  /** Where the helper notes runs before and after it spawns them (src/core/enrollment/run-journal.ts). */
  journal: Pick<RunJournal, 'note' | 'tryNote'>;
  /** The helper's log (stderr). */
  log: (message: string) => void;
  /** Called when the enrollment must end (revoked). */
  onRevoke: () => void;
  /** Live check of the shell and the tmux server this enrollment belongs to. */
  alive: () => boolean;
  /** Told the pane's run state whenever it may have changed (helper/status.ts publishes it). */
  status?: (s: RunState) => void;
}

export class HelperService {
  private queue: Job[] = [];
  /** Runs admitted since this helper started (its status says so: src/broker/wake.ts orders calls by it). */
  private admitted = 0;
  private current: Job | undefined;
  /** Background runs that gave up the queue once spawned, until they end. */
  private readonly background = new BackgroundRuns<Job>();
  private readonly used = new UsedRunIds();
  private ended = false;
  private readonly held = new HeldRuns<Job>();
  private readonly waiters = new Waiters();
  private readonly gc = new GcHint();
  private readonly cx: DispatchContext;
  private readonly heldCx: HeldContext;
  /** The person's live view (tmux-run watch): every watcher of this pane. */
  private readonly watch: WatchFeed;
  private readonly watchCx: WatchContext;
  private readonly admission: AdmissionContext;
  private readonly terminalCx: TerminalContext;

  constructor(private readonly d: ServiceDeps) {
    this.cx = {
      ...d,
      ended: () => this.ended,
      settle: (job, reply) => this.settle(job, reply),
      settleUnstarted: (job, code, message, why) => this.settleUnstarted(job, code, message, why),
      emit: (job, reply) => {
        this.waiters.emit(job, reply);
        if (reply.type === 'started') this.watch.started(job);
        if (reply.type === 'started' && job.background) this.release(job);
        if (reply.type === 'started') this.publish();
      },
      sendProgress: (job) => {
        this.waiters.sendProgress(job);
        this.publish();
      },
    };
    this.heldCx = {
      ...d,
      held: this.held,
      waiters: this.waiters,
      cancel: (job, byPerson) => this.cancel(job, byPerson ? 'stopped_by_person' : 'cancel_requested'),
    };
    this.watch = new WatchFeed(d.record.pane_id);
    this.watchCx = { ...d, feed: this.watch, jobs: () => this.jobs() };
    this.admission = { ...d, ended: () => this.ended, used: this.used, held: this.held, watch: this.watch };
    this.terminalCx = { ...d, held: this.held, attached: new Map() };
  }

  /** Every job this helper knows: held ones, the current one, background ones, queued ones. */
  private jobs(): Job[] {
    return [
      ...new Set([
        ...this.held.list(),
        ...(this.current ? [this.current] : []),
        ...this.background.all(),
        ...this.queue,
      ]),
    ];
  }

  /** Serves one connection: every request gets exactly one final reply. */
  attach(t: Transport): void {
    this.waiters.open(t);
    t.onmessage = (raw) => {
      const received = monotonicMs();
      const checked = checkRequest(raw);
      if (!checked.ok) {
        t.send(err('bad_request', `malformed request: ${checked.error}`));
        t.close();
        return;
      }
      this.handle(checked.value, t, received);
    };
    t.onclose = () => {
      // The caller is gone (cancelled, or its server died): its runs stop, queued ones never
      // start. A held run is nobody's: its waiters just stop waiting.
      this.waiters.close(t, (job) => this.cancel(job, 'caller_gone'));
      this.watch.drop(t);
      detach(t, this.terminalCx);
    };
  }

  /** Tells the status publisher the run state (it writes only what changed, once per turn). */
  private publish(): void {
    if (this.ended) return;
    const cur = this.current;
    this.d.status?.({
      run: cur ? (cur.state === 'awaiting_approval' ? 'awaiting_approval' : 'running') : null,
      queued: this.queue.length,
      admitted: this.admitted,
    });
  }

  /** Any job at all: queued, current, in the background, or a result still held (helper/dormancy.ts). */
  hasWork = (): boolean => this.jobs().length > 0;

  state(): 'idle' | 'busy' | 'running' | 'awaiting_approval' {
    if (this.current) return this.current.state === 'awaiting_approval' ? 'awaiting_approval' : 'running';
    return shellBusy(this.d.record.shell_pid) ? 'busy' : 'idle';
  }

  private handle(req: Request, t: Transport, received = monotonicMs()): Job | undefined {
    switch (req.type) {
      case 'ping':
        return void t.send(pongOf(this.d.record, this.d.shell, this.state(), this.queue.length));
      case 'revoke': {
        if (!revokeAuthorized(req, this.d.record, this.d.secret, Date.now())) {
          t.send(err('unauthorized', 'the revocation is not signed for this enrollment'));
          return undefined;
        }
        t.send({ type: 'revoked' } satisfies Reply);
        this.d.shell.revoked();
        this.d.onRevoke();
        return undefined;
      }
      case 'cancel': {
        const job = [...this.queue, ...(this.current ? [this.current] : [])].find(
          (j) => j.binding.run_id === req.run_id && [...j.waiters].some((w) => w.owner && w.t === t),
        );
        if (job) {
          if (req.reason) job.cancelReason = req.reason;
          this.cancel(job, 'cancelled');
        }
        return undefined;
      }
      case 'run':
      case 'start':
        return this.accept(req, t, received);
      case 'wait':
      case 'cancel_held':
        waitOrCancel(req, t, this.heldCx);
        return undefined;
      case 'list':
        list(req, t, this.heldCx);
        return undefined;
      case 'output':
        output(req, t, this.heldCx);
        return undefined;
      case 'watch':
        serveWatch(req, t, this.watchCx);
        return undefined;
      case 'input':
      case 'screen':
      case 'attach':
      case 'keys':
        serveTerminal(req, t, this.terminalCx);
        return undefined;
    }
  }

  private accept(req: Extract<Request, { type: 'run' | 'start' }>, t: Transport, received: number): Job | undefined {
    const job = admit(req, t, received, this.admission);
    if (!job) return undefined;
    const b = job.binding;
    this.queue.push(job);
    this.admitted++;
    t.send({
      type: 'queued',
      run_id: b.run_id,
      position: this.queue.length - 1 + (this.current ? 1 : 0),
    } satisfies Reply);
    if (job.trace) job.trace.queued = monotonicMs();
    this.waiters.add(
      job,
      { t, progress: req.progress, owner: !job.held },
      req.type === 'start' ? req.wait_ms : undefined,
    );
    void this.pump();
    this.publish();
    return job;
  }

  /** The job's final reply: sent to every waiter, kept when the run is held. */
  private settle(job: Job, reply: Reply): void {
    if (job.state === 'finished') return;
    finishJob(job, reply, this.d, this.held);
    this.waiters.finish(job, reply);
    this.watch.settled(job, reply);
    this.publish();
  }

  private cancel(job: Job, why: 'cancelled' | 'cancel_requested' | 'stopped_by_person' | 'caller_gone'): void {
    if (job.cancelled || job.state === 'finished') return;
    job.cancelled = true;
    job.stopReason = why;
    const i = this.queue.indexOf(job);
    if (i >= 0) {
      this.queue.splice(i, 1);
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

  /** Settles a job taken from the queue whose script was never started; the audit trail says why. */
  private settleUnstarted(job: Job, code: ErrorCode, message: string, why: StopReason, asked = false): void {
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

  /** Ends the service: queued work is refused with shell_exited, running work is stopped and reported. */
  shutdown(reason: string, why: 'shell_exited' | 'revoked' = 'shell_exited'): void {
    this.ended = true;
    for (const job of this.queue.splice(0)) {
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

  private async pump(): Promise<void> {
    if (this.current) return;
    const job = this.queue.shift();
    if (!job) return;
    const full = job.background ? this.background.refusal(this.d.record.pane_id) : undefined;
    if (full) {
      refuseJob(job, this.cx, full.code, full.message);
      void this.pump();
      return;
    }
    this.current = job;
    try {
      const o = await dispatch(job, this.cx);
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
