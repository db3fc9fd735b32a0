// The requests that talk to a running program: input (tmux_run_input: bytes for a held run's stdin
// or terminal), screen (tmux_run_screen: a terminal run's screen), attach (tmux-run attach: the
// person's terminal joined to a terminal run) and keys (what the attached person types). Each is
// authorized on its own like a wait (authorize.ts); a refused input takes nothing of the call.
import type { Transport } from '../../src/core/protocol/transport.js';
import type { LiveState, Reply, Request } from '../../src/core/protocol/messages.js';
import { authorized, unknownRun } from './held-requests.js';
import type { Enrollment } from './service-deps.js';
import type { HeldRuns } from './held-runs.js';
import { err, type Job } from './job.js';

type TerminalRequest = Extract<Request, { type: 'input' | 'screen' | 'attach' | 'keys' }>;

const notATerminal = (runId: string): Reply =>
  err(
    'not_a_terminal',
    `run ${runId.slice(0, 8)} was not started with input terminal: it has no terminal to show or take over`,
    runId,
  );

/** Serves these requests for the held runs; keeps who is attached on which link. */
export class TerminalRequests {
  private readonly attached = new Map<Transport, { job: Job; person: object }>();

  constructor(
    private readonly e: Enrollment,
    private readonly held: HeldRuns<Job>,
  ) {}

  /** The held run a request names, or undefined once its refusal was sent. */
  private heldRun(req: Extract<TerminalRequest, { run_id: string }>, t: Transport): Job | undefined {
    if (!authorized(this.e, req.type, req.run_id, req.auth, t, 'take_by' in req ? req.take_by : undefined))
      return undefined;
    const job = this.held.get(req.run_id);
    if (!job) t.send(unknownRun(this.e, req.run_id));
    return job;
  }

  serve(req: TerminalRequest, t: Transport): void {
    if (req.type === 'keys') return this.keys(req.data, t);
    const job = this.heldRun(req, t);
    if (!job) return;
    if (req.type === 'input') return this.input(req, job, t);
    if (!job.terminal) return t.send(notATerminal(job.binding.run_id));
    if (req.type === 'screen') return void this.screen(job, t);
    return void this.attach(job, t);
  }

  private input(req: Extract<TerminalRequest, { type: 'input' }>, job: Job, t: Transport): void {
    const id = job.binding.run_id;
    if (!job.input)
      return t.send(
        err(
          'input_closed',
          `run ${id.slice(0, 8)} was started without input (its stdin is /dev/null); nothing was written`,
          id,
        ),
      );
    const refusal = job.input.refusal(req.data, req.eof);
    if (refusal) return t.send(err(refusal.code, `${refusal.message}; nothing was written`, id));
    job.input.take(req.data, req.eof);
    t.send({
      type: 'input_taken',
      run_id: id,
      accepted_bytes: req.data.length,
      input_bytes: job.input.given,
      state: job.state as LiveState,
      ...(req.eof ? { closed: true } : {}),
    } satisfies Reply);
  }

  private async screen(job: Job, t: Transport): Promise<void> {
    const term = job.terminal!;
    const view = await term.view();
    t.send({
      type: 'screen',
      run_id: job.binding.run_id,
      ...view,
      echo: term.echo,
      attached: term.attached,
      finished: job.state === 'finished',
      stdout_bytes: job.run?.stdoutBytes ?? 0,
    } satisfies Reply);
  }

  /** The person takes the terminal over: its screen redrawn, then its output, until the link closes or the run ends. */
  private async attach(job: Job, t: Transport): Promise<void> {
    const id = job.binding.run_id;
    const term = job.terminal!;
    if (job.state === 'finished' || term.ended)
      return t.send(err('input_closed', `run ${id.slice(0, 8)} has ended; there is nothing to take over`, id));
    if (this.attached.has(t)) return t.send(err('bad_request', 'this link is attached to a run already', id));
    const person = {
      out: (chunk: Buffer) => t.send({ type: 'attach_output', data: chunk } satisfies Reply),
      end: () => {
        t.send({ type: 'attach_output', data: Buffer.alloc(0), ended: true } satisfies Reply);
        t.close();
      },
    };
    const redraw = term.attach(person);
    if (!redraw)
      return t.send(err('run_attached', `run ${id.slice(0, 8)} is already taken over by another tmux-run attach`, id));
    this.attached.set(t, { job, person });
    if (job.input) job.input.attached = true;
    t.send({ type: 'attached', run_id: id, redraw: await redraw } satisfies Reply);
  }

  /** What the attached person typed, for the run's terminal (a link that did not attach is refused). */
  private keys(data: Buffer, t: Transport): void {
    const a = this.attached.get(t);
    if (!a?.job.input) return t.send(err('bad_request', 'keys come only on a link attached to a terminal run'));
    if (a.job.input.refusal(data, false, true) === undefined) a.job.input.take(data, false);
  }

  /** A link closed: the person it attached lets the terminal go, and the agent's input is taken again. */
  detach(t: Transport): void {
    const a = this.attached.get(t);
    if (!a) return;
    this.attached.delete(t);
    a.job.terminal?.detach(a.person);
    if (a.job.input) a.job.input.attached = false;
  }
}
