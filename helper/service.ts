// The helper's service, the coordinator: it takes each request off its link and hands it to the
// module named for it. Runs and starts are admitted (queue/admission.ts) into the pane's queue
// (queue/run-queue.ts: one run at a time, in arrival order, each job settled once and recorded);
// requests about held runs, the watch feed and running programs are served in queue/ beside it.
import type { Transport } from '../src/core/protocol/transport.js';
import { checkRequest, type Reply, type Request } from '../src/core/protocol/messages.js';
import { monotonicMs } from '../src/core/protocol/trace.js';
import { pongOf } from './pong.js';
import { GcHint } from './gc-hint.js';
import type { ServiceDeps } from './queue/service-deps.js';
import { err } from './queue/job.js';
import { revokeAuthorized } from './queue/authorize.js';
import { RunQueue } from './queue/run-queue.js';
import { admit } from './queue/admission.js';
import { list, output, waitOrCancel } from './queue/held-requests.js';
import { serveWatch } from './queue/watch-request.js';
import { TerminalRequests } from './queue/input-requests.js';

export class HelperService {
  /** The pane's jobs: waiting, current, background, held; each settled once. */
  private readonly queue: RunQueue;
  /** Input, screen and attach requests for held runs. */
  private readonly terminal: TerminalRequests;

  constructor(private readonly d: ServiceDeps) {
    this.queue = new RunQueue(d, new GcHint());
    this.terminal = new TerminalRequests(d, this.queue.held);
  }

  /** Serves one connection: every request gets exactly one final reply. */
  attach(t: Transport): void {
    this.queue.open(t);
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
      this.queue.drop(t);
      this.terminal.detach(t);
    };
  }

  /** Any job at all: queued, current, in the background, or a result still held (helper/dormancy.ts). */
  hasWork = (): boolean => this.queue.all().length > 0;

  state(): 'idle' | 'busy' | 'running' | 'awaiting_approval' {
    return this.queue.state();
  }

  private handle(req: Request, t: Transport, received: number): void {
    switch (req.type) {
      case 'ping':
        return t.send(pongOf(this.d.record, this.d.shell, this.state(), this.queue.length));
      case 'revoke':
        return this.revoke(req, t);
      case 'cancel':
        return this.queue.cancelOwned(req, t);
      case 'run':
      case 'start': {
        const job = admit(req, t, received, this.d, this.queue);
        if (job) this.queue.enqueue(job, req, t);
        return;
      }
      case 'wait':
      case 'cancel_held':
        return waitOrCancel(req, t, this.d, this.queue);
      case 'list':
        return list(req, t, this.d, this.queue.held);
      case 'output':
        return output(req, t, this.d, this.queue.held);
      case 'watch':
        return serveWatch(req, t, this.d, this.queue);
      case 'input':
      case 'screen':
      case 'attach':
      case 'keys':
        return this.terminal.serve(req, t);
    }
  }

  private revoke(req: Extract<Request, { type: 'revoke' }>, t: Transport): void {
    if (!revokeAuthorized(req, this.d.record, this.d.secret, Date.now())) {
      t.send(err('unauthorized', 'the revocation is not signed for this enrollment'));
      return;
    }
    t.send({ type: 'revoked' } satisfies Reply);
    this.d.shell.revoked();
    this.d.onRevoke();
  }

  /** Ends the service: queued work is refused with shell_exited, running work is stopped and reported. */
  shutdown(reason: string, why: 'shell_exited' | 'revoked' = 'shell_exited'): void {
    this.queue.shutdown(reason, why);
  }

  /** Waits for the current run and the background runs (if any) to report. */
  idle(): Promise<void> {
    return this.queue.idle();
  }
}
