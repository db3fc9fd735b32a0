// The kept pair's protocol (issue 23): a run's reaper and child, forked ahead by the walls' waiter
// (a spare), connect to the walls' socket three times (status, stdout, stderr), each naming the
// spare by its one-time token; what each connection says before the spare has a run and once it
// has one, and when a run in a spare has ended. The walls' lifecycle, which keeps the spares and
// queues the runs, is helper/walls/walls.ts.
import type { Socket } from 'node:net';
import { completionOfStatus } from '../../src/core/os/bwrap.js';
import { ACK, parseReaper } from './waiter.js';
import { hostPid } from './host-pid.js';
import type { WallsEnd, WallsRunEvents } from '../run/run-spec.js';

/** Connections that have not named their run yet: at most so many, each for at most HEAD_MS. */
const MAX_UNNAMED = 32;
const HEAD_MS = 5000;

export type Stream = 'o' | 'e';

/**
 * A run's reaper and child, forked ahead (PREFORK), named by a one-time token, and their three
 * connections; a run once one is handed to it. Ready to take a run once all three are up and the
 * reaper said the child's pid.
 */
export interface Spare {
  token: string;
  status?: Socket;
  o?: Socket;
  e?: Socket;
  /** A pipe run's stdin connection (made by its child once it has its request). */
  i?: Socket;
  /** The child's pid inside the walls (its reaper's `S`), and as this helper numbers it. */
  pid?: number;
  pgid?: number;
  report: string;
  timer: NodeJS.Timeout;
  run?: Pending;
}

/** A run: waiting for a spare, then in one. */
export interface Pending {
  events: WallsRunEvents;
  request: Buffer;
  timer: NodeJS.Timeout;
  spare?: Spare;
  /** The child said it took the request (ACK): only from then can anything of the run have run. */
  took: boolean;
  /** What must close (or come: `t`, a terminal run's master) before the run's end is said. */
  open: Set<Stream | 't'>;
  masterWait?: NodeJS.Timeout;
  ended: boolean;
  /** Spares that were gone before they took this run (it went to the next one). */
  retries: number;
  /** What the run's stdin is (the request says it too). */
  input?: 'pipe' | 'terminal';
}

/** Closes a spare's three connections (its child, waiting on one, ends at that). */
export const hangUp = (sp: Spare): void => {
  for (const s of [sp.status, sp.o, sp.e, sp.i]) s?.destroy();
};

/** What a spare's connections ask of the walls that keep it. */
export interface SpareHost {
  /** The spare named by `token`, while it is kept. */
  spare(token: string): Spare | undefined;
  /** A spare that ended or failed before it took a run: gone, and a run waiting gets another. */
  lose(sp: Spare): void;
  /** A run whose spare ended before its child took the request: nothing ran, the next spare. */
  again(run: Pending): void;
  finish(run: Pending, end: WallsEnd): void;
  /** Gives waiting runs the ready spares. */
  dispatch(): void;
  /** Ends the walls, and every run in them. */
  close(): void;
  /** The waiter's pid (bwrap's child, pid 1 of the walls). */
  waiterPid(): number | undefined;
}

/** The walls' socket's door: a connection names its spare and kind at once, and only so many may try. */
export class SpareDoor {
  private unnamed = 0;

  constructor(private readonly host: SpareHost) {}

  accept(s: Socket): void {
    s.on('error', () => undefined);
    // A run in the walls can connect too: a connection must name a spare at once, and only so many may try.
    if (this.unnamed >= MAX_UNNAMED) return void s.destroy();
    this.unnamed += 1;
    let named = false;
    const unname = (): void => {
      if (!named) this.unnamed -= 1;
      named = true;
    };
    s.setTimeout(HEAD_MS, () => s.destroy());
    s.once('close', unname);
    let head = Buffer.alloc(0);
    const onHead = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      if (head.length < 34) return;
      s.off('data', onHead);
      s.setTimeout(0);
      unname();
      const sp = this.host.spare(head.toString('latin1', 0, 32));
      const kind = head.toString('latin1', 32, 34);
      if (!sp || !/^[soei]\n$/.test(kind) || sp[kind[0] === 's' ? 'status' : (kind[0] as Stream | 'i')]) {
        s.destroy();
        return;
      }
      if (kind[0] === 'i') return this.attachInput(sp, s, head.length > 34);
      this.attach(sp, kind[0] as 's' | Stream, s, head.subarray(34));
    };
    s.on('data', onHead);
  }

  /** A spare's connection, named by its token: what it says before the spare has a run and once it has. */
  private attach(sp: Spare, kind: 's' | Stream, s: Socket, rest: Buffer): void {
    if (kind === 's') return this.attachStatus(sp, s, rest);
    const host = this.host;
    sp[kind] = s;
    const which = kind === 'o' ? 'stdout' : 'stderr';
    const hear = (c: Buffer): void => {
      const run = sp.run;
      if (!run) return host.lose(sp); // a child says nothing before its run
      if (kind === 'o' && !run.took) {
        if (c[0] !== ACK.charCodeAt(0)) return host.again(run);
        run.took = true;
        c = c.subarray(1);
      }
      if (c.length > 0 && !run.ended) run.events.output(which, c);
    };
    s.on('data', hear);
    s.once('close', () => {
      const run = sp.run;
      if (!run) return host.lose(sp);
      run.open.delete(kind);
      settleRun(run, host);
    });
    if (rest.length > 0) hear(rest);
    host.dispatch();
  }

  /** A pipe run's stdin: only a spare whose run asked for one, and it says nothing (its writing is shut down). */
  private attachInput(sp: Spare, s: Socket, said: boolean): void {
    const run = sp.run;
    if (!run || run.input !== 'pipe' || run.ended || said) return void s.destroy();
    sp.i = s;
    // The child shut its writing down (its end is read only): that end is not the input's.
    s.allowHalfOpen = true;
    s.on('data', () => s.destroy());
    run.events.stdin?.(s);
  }

  private attachStatus(sp: Spare, s: Socket, rest: Buffer): void {
    const host = this.host;
    sp.status = s;
    const hear = (c: Buffer): void => {
      sp.report = (sp.report + c.toString('latin1')).slice(0, 256);
      if (sp.run) return settleRun(sp.run, host);
      const r = parseReaper(sp.report);
      if (r.status !== undefined || r.failed !== undefined) return host.lose(sp);
      if (r.pid !== undefined && sp.pid === undefined) {
        sp.pid = r.pid;
        sp.pgid = hostPid(host.waiterPid(), r.pid);
        host.dispatch();
      }
    };
    s.on('data', hear);
    s.once('close', () => {
      const run = sp.run;
      if (!run) return host.lose(sp);
      if (parseReaper(sp.report).status !== undefined || run.ended) return;
      // The child dies with its reaper: one that had not taken the request ran nothing.
      if (!run.took) return host.again(run);
      // The run's reaper was killed before it could say the run's end: only the walls' end proves
      // that nothing the run started is left, so these walls end (and every run in them).
      const failed = parseReaper(sp.report).failed ?? 'the run ended its own reaper in the sandbox';
      host.finish(run, { failed, ran: true, sandbox: true });
      host.close();
    });
    if (rest.length > 0) hear(rest);
  }
}

/**
 * How long a terminal run that has ended may still wait for its master (sent on the terminal
 * channel before the run's exec, so in practice there already), should its child have died first.
 */
const MASTER_WAIT_MS = 1000;

/** The run ends once its reaper said so and both of its streams have closed (a terminal run's master come). */
export function settleRun(run: Pending, host: Pick<SpareHost, 'again' | 'finish'>): void {
  if (run.ended || !run.spare) return;
  const r = parseReaper(run.spare.report);
  if (r.failed !== undefined) return host.finish(run, { failed: r.failed, ran: false, sandbox: false });
  if (r.status !== undefined && run.open.size === 1 && run.open.has('t') && !run.masterWait) {
    run.masterWait = setTimeout(() => {
      run.open.delete('t');
      settleRun(run, host);
    }, MASTER_WAIT_MS);
  }
  if (r.status === undefined || run.open.size > 0) return;
  // The child ended without taking the request (killed before it read it): nothing of it ran.
  if (!run.took) return host.again(run);
  host.finish(run, { completion: completionOfStatus(r.status) });
}
