// A pane's walls, kept alive (issue 23): one bwrap per pane and sandbox policy, its waiter as the
// namespaces' pid 1 (helper/walls/waiter.ts), forking each run's processes ahead of it (a spare),
// whose three connections come to a unix socket of the helper (a 0700 directory beside its own
// socket, bound read-only into the walls' private /tmp), named by the spare's one-time token; a run
// is its request written on the spare child's stdout connection. New walls only when the policy
// changes; the old ones end once their last run has, idle walls after WALLS_IDLE_MS.
// Here: the walls' lifecycle and queue of runs; what a spare's connections say is spare.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import { WAITER_GO, WAITER_READY } from '../../src/core/os/bwrap.js';
import { childrenOf } from '../../src/core/os/proc.js';
import { encodeRequest, INNER_DIR, prefork, waiterCommand, type WaiterProgram, type WaiterRequest } from './waiter.js';
import { hangUp, settleRun, SpareDoor, type Pending, type Spare, type SpareHost } from './spare.js';
import type { WallsEnd, WallsRunEvents } from '../run/run-spec.js';
import { wallsDir } from './walls-dir.js';
import { afterLastWords } from './last-words.js';
import { channelFor, expectMaster, forgetMaster } from './channel.js';

/** How long walls with no run stay up (they cost no CPU meanwhile, and under 1 MB of PSS with the C waiter, 5 with perl). */
export const WALLS_IDLE_MS = 10 * 60 * 1000;
/**
 * How long after a run's end the waiter is asked to fork the next run's processes (PREFORK): long
 * enough for the run's result to be on its way to the client (about 2 ms from the helper to the
 * client here), so the forks do not slow it down.
 */
const PREFORK_DELAY_MS = 5;
/** How long after a run's start the spare for the next one is asked for, should it still run. */
const LONG_RUN_MS = 50;
/** How long a spare has to connect, and a run to get one (the waiter forks at once). */
const CONNECT_MS = 10_000;
/** Spares that may end before a run takes them (another run killed them) before none is kept ahead until a run comes. */
const MAX_LOST = 5;
/** Spares gone before they took it that a run is given another after, before it is said not to have started. */
const MAX_RETRIES = 3;
/** Walls not yet ended: SIGKILLed when the helper exits (bwrap's parent-death signal covers a SIGKILL). */
const live = new Set<Walls>();
const endAll = (): void => {
  for (const w of [...live]) w.close();
};

export class Walls {
  private readonly child: ChildProcess;
  private readonly ctrl: Duplex;
  private readonly server: Server;
  private readonly dir: string;
  /** Spares not yet given a run, oldest first (a Map keeps its order). */
  private readonly spares = new Map<string, Spare>();
  /** Runs waiting for a spare, and runs in one. */
  private readonly waiting: Pending[] = [];
  private readonly running = new Set<Pending>();
  /** Whether the waiter took the helper's go (PREFORKs asked before it wait in `unsent`). */
  private up = false;
  private unsent = '';
  private stderr = '';
  private idle: NodeJS.Timeout | undefined;
  private prefork: NodeJS.Timeout | undefined;
  private preforkAt = 0;
  /** Spares that ended before any run took them, since a run last came: past MAX_LOST none is kept ahead. */
  private lost = 0;
  private retired = false;
  closed = false;
  /** Whether terminal runs can be walled here (the C waiter, and the terminal channel: helper/walls/channel.ts), or why not. */
  readonly terminals: true | string;
  /** What the spares' connections ask of these walls (helper/walls/spare.ts). */
  private readonly host: SpareHost = {
    // A spare with a run is asked for too: a pipe run's child connects its stdin once it has its request.
    spare: (token) => this.spares.get(token) ?? [...this.running].find((r) => r.spare?.token === token)?.spare,
    lose: (sp) => this.lose(sp),
    again: (run) => this.again(run),
    finish: (run, end) => this.finish(run, end),
    dispatch: () => this.dispatch(),
    close: () => this.close(),
    waiterPid: () => this.waiterPid(),
  };
  private readonly door = new SpareDoor(this.host);

  /** `args`: bwrap's walls up to `--` (latin1 strings: one character per byte); `home`: where the socket's directory goes. */
  constructor(
    bwrap: string,
    args: readonly string[],
    home: string,
    waiter: WaiterProgram,
    readonly key: string,
    private readonly idleMs: number = WALLS_IDLE_MS,
  ) {
    this.dir = wallsDir(home);
    if (live.size === 0 && !process.listeners('exit').includes(endAll)) process.on('exit', endAll);
    live.add(this);
    this.server = createServer((s) => this.door.accept(s));
    this.server.on('error', () => this.close());
    this.server.listen(`${this.dir}/s`, () => {
      try {
        chmodSync(`${this.dir}/s`, 0o600);
      } catch {
        // closed meanwhile
      }
    });
    const { binds, command } = waiterCommand(waiter);
    const chan = channelFor(waiter);
    this.terminals = typeof chan === 'number' ? true : chan;
    // The walls go through a descriptor (bwrap --args): a path that is not UTF-8 keeps its bytes.
    const walls = [...args, '--ro-bind', this.dir, INNER_DIR, ...binds];
    this.child = spawn(bwrap, ['--args', '4', ...command], {
      // Descriptor 5: the terminal channel (helper/walls/channel.ts), for the C waiter.
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe', ...(typeof chan === 'number' ? [chan] : [])],
      detached: true,
      env: { PATH: '/usr/bin:/bin' },
    });
    this.child.on('error', (e) => this.fail(`${bwrap} could not be started: ${e.message}`));
    this.child.stderr?.setEncoding('utf8').on('data', (c: string) => (this.stderr = (this.stderr + c).slice(0, 2000)));
    (this.child.stdio[4] as Duplex)
      .on('error', () => undefined)
      .end(Buffer.from(walls.map((a) => `${a}\0`).join(''), 'latin1'));
    this.ctrl = this.child.stdio[3] as Duplex;
    this.ctrl.on('error', () => undefined);
    this.ctrl.setEncoding('latin1');
    this.ctrl.on('data', (c: string) => this.onCtrl(c));
    const why = (): string => this.stderr.trim().split('\n')[0]?.slice(0, 300) || 'the sandbox ended';
    this.child.once('exit', () => afterLastWords(this.child.stderr, () => this.fail(why())));
    this.forkSpare();
    this.armIdle();
  }

  /** The walls' process group (bwrap's): what the broker stops should this helper die. */
  get pgid(): number | undefined {
    return this.child.pid;
  }

  /** Runs a script in the walls; `events` hear of it until `ended`. */
  run(req: WaiterRequest, events: WallsRunEvents): void {
    if (this.closed) return events.ended({ failed: 'the sandbox ended', ran: false, sandbox: true });
    const run: Pending = {
      events,
      request: encodeRequest(req),
      timer: this.notStarted(() => run),
      took: false,
      open: new Set(),
      ended: false,
      retries: 0,
      ...(req.input ? { input: req.input.kind } : {}),
    };
    clearTimeout(this.idle);
    this.lost = 0;
    this.waiting.push(run);
    this.dispatch();
  }

  /** No new run comes here: the walls end when their last run has (a changed policy). */
  retire(): void {
    this.retired = true;
    if (!this.busy) this.close();
  }

  get busy(): boolean {
    return this.running.size > 0 || this.waiting.length > 0;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    live.delete(this);
    clearTimeout(this.idle);
    clearTimeout(this.prefork);
    this.ctrl.destroy();
    try {
      if (this.child.pid !== undefined) process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // gone already
    }
    this.server.close();
    rmSync(this.dir, { recursive: true, force: true });
    for (const sp of [...this.spares.values()]) this.drop(sp);
    for (const run of [...this.waiting]) this.finish(run, { failed: 'the sandbox ended', ran: false, sandbox: true });
    for (const run of [...this.running])
      this.finish(run, { failed: 'the sandbox ended', ran: run.took, sandbox: true });
  }

  /** A run's timer: told it did not start should it get no spare within CONNECT_MS. */
  private notStarted(run: () => Pending): NodeJS.Timeout {
    return setTimeout(
      () => this.finish(run(), { failed: 'the sandbox did not start the run', ran: false, sandbox: true }),
      CONNECT_MS,
    );
  }

  /** Gives waiting runs the ready spares, and asks for as many more as still wait. */
  private dispatch(): void {
    if (this.closed) return;
    for (const sp of this.spares.values()) {
      if (this.waiting.length === 0) break;
      if (sp.status && sp.o && sp.e && sp.pid !== undefined) this.assign(this.waiting.shift()!, sp);
    }
    for (let n = this.spares.size; n < this.waiting.length; n++) this.forkSpare();
  }

  /** Asks the waiter for a run's reaper and child, named by a new token. */
  private forkSpare(): void {
    if (this.closed) return;
    const token = randomBytes(16).toString('hex');
    const sp: Spare = { token, report: '', timer: setTimeout(() => this.lose(sp), CONNECT_MS) };
    this.spares.set(token, sp);
    if (this.up) this.ctrl.write(prefork(token));
    else this.unsent += prefork(token);
  }

  /** A run into a ready spare: the request to its child, which starts it at once. */
  private assign(run: Pending, sp: Spare): void {
    this.spares.delete(sp.token);
    clearTimeout(sp.timer);
    clearTimeout(run.timer);
    sp.run = run;
    run.spare = sp;
    run.open = new Set(run.input === 'terminal' ? ['o', 'e', 't'] : ['o', 'e']);
    this.running.add(run);
    if (run.input === 'terminal') expectMaster(sp.token, (fd) => this.master(run, sp, fd));
    sp.o!.write(run.request);
    if (sp.pgid !== undefined) run.events.started(sp.pgid);
    // A spare for the run after, should this one run long (a short one's end asks for it instead).
    this.preforkSoon(LONG_RUN_MS);
  }

  /** A terminal run's master, sent by its child on the terminal channel: the run's now. */
  private master(run: Pending, sp: Spare, fd: number): void {
    if (run.ended || run.spare !== sp || !run.events.terminal) return closeSync(fd);
    run.events.terminal(fd);
    run.open.delete('t');
    settleRun(run, this.host);
  }

  /** A spare that ended or failed before it took a run: gone, and a run waiting gets another. */
  private lose(sp: Spare): void {
    if (sp.run || !this.spares.has(sp.token)) return;
    this.drop(sp);
    this.lost += 1;
    if (this.waiting.length > 0) this.dispatch();
    else if (this.lost <= MAX_LOST) this.preforkSoon(PREFORK_DELAY_MS);
  }

  private drop(sp: Spare): void {
    this.spares.delete(sp.token);
    clearTimeout(sp.timer);
    hangUp(sp);
  }

  /** A run whose spare ended before its child took the request (killed meanwhile): nothing ran, the next spare. */
  private again(run: Pending): void {
    if (run.ended || run.took) return;
    const sp = run.spare;
    if (sp) {
      // What that spare's connections still say (their close) is no longer this run's.
      forgetMaster(sp.token);
      sp.run = undefined;
      hangUp(sp);
    }
    this.running.delete(run);
    run.spare = undefined;
    if (run.events.wanted?.() === false)
      return this.finish(run, { failed: 'the run was stopped before it started', ran: false, sandbox: false });
    if (run.retries++ >= MAX_RETRIES || this.closed)
      return this.finish(run, { failed: 'the sandbox did not start the run', ran: false, sandbox: true });
    run.timer = this.notStarted(() => run);
    this.waiting.unshift(run);
    this.dispatch();
  }

  private onCtrl(c: string): void {
    if (!this.up && c.startsWith(WAITER_READY)) {
      // The waiter asks before it takes a request: the answer proves this helper alive after bwrap
      // set its parent-death signal (src/core/os/bwrap.ts, WAITER_READY).
      this.up = true;
      this.ctrl.write(WAITER_GO + this.unsent);
      this.unsent = '';
      c = c.slice(1);
    }
    for (const m of c.matchAll(/F([0-9a-f]{32})\n/g)) {
      const sp = this.spares.get(m[1]!);
      if (!sp) continue;
      this.drop(sp);
      // The waiter could not fork: the run that waits longest is told so rather than kept waiting.
      const run = this.waiting[0];
      if (run) this.finish(run, { failed: 'the sandbox could not fork', ran: false, sandbox: true });
    }
  }

  private fail(why: string): void {
    if (this.closed) return;
    for (const run of [...this.waiting]) this.finish(run, { failed: why, ran: false, sandbox: true });
    for (const run of [...this.running]) this.finish(run, { failed: why, ran: run.took, sandbox: true });
    this.close();
  }

  private finish(run: Pending, end: WallsEnd): void {
    if (run.ended) return;
    run.ended = true;
    clearTimeout(run.timer);
    clearTimeout(run.masterWait);
    const i = this.waiting.indexOf(run);
    if (i >= 0) this.waiting.splice(i, 1);
    this.running.delete(run);
    const sp = run.spare;
    if (sp) {
      forgetMaster(sp.token);
      hangUp(sp);
    }
    run.events.ended(end);
    if (this.spares.size === 0) this.preforkSoon(PREFORK_DELAY_MS);
    if (!this.busy) {
      if (this.retired) this.close();
      else this.armIdle();
    }
  }

  /** Asks for a spare after `ms` (a run's result on its way meanwhile), unless there is one by then. */
  private preforkSoon(ms: number): void {
    if (this.closed || this.retired) return;
    const at = performance.now() + ms;
    if (this.prefork && this.preforkAt <= at) return;
    clearTimeout(this.prefork);
    this.preforkAt = at;
    this.prefork = setTimeout(() => {
      this.prefork = undefined;
      if (!this.closed && !this.retired && this.spares.size === 0) this.forkSpare();
    }, ms);
    this.prefork.unref();
  }

  private armIdle(): void {
    clearTimeout(this.idle);
    if (this.closed) return;
    this.idle = setTimeout(() => this.close(), this.idleMs);
    this.idle.unref();
  }

  /** The waiter's pid (bwrap's child, pid 1 of the walls). */
  private waiterPid(): number | undefined {
    return this.child.pid === undefined ? undefined : childrenOf(this.child.pid)[0];
  }
}
