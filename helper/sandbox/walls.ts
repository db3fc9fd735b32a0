// A pane's walls, kept alive (issue 23): one bwrap per pane and sandbox policy, its waiter as the
// namespaces' pid 1 (helper/sandbox/waiter.ts), each run a request to it. The runs' streams come
// back on a unix socket of the helper (a 0700 directory beside its own socket, bound read-only into
// the walls' private /tmp), each connection naming its run by a one-time token. New walls only when
// the policy changes; the old ones end once their last run has ended, idle walls after WALLS_IDLE_MS.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { completionOfStatus, WAITER_GO, WAITER_READY } from '../../src/os/bwrap.js';
import type { Completion } from '../../src/protocol/messages.js';
import { childrenOf } from '../../src/os/proc.js';
import {
  encodeRequest,
  INNER_DIR,
  parseReaper,
  PREFORK,
  waiterCommand,
  type WaiterProgram,
  type WaiterRequest,
} from './waiter.js';
import { hostPid } from './host-pid.js';

/** How long walls with no run stay up (they cost no CPU meanwhile, only a few MB of memory). */
export const WALLS_IDLE_MS = 10 * 60 * 1000;
/**
 * How long after a run's end the waiter is asked to fork the next run's processes (PREFORK): long
 * enough for the run's result to be on its way to the client (about 2 ms from the helper to the
 * client here), so the forks do not slow it down.
 */
const PREFORK_DELAY_MS = 5;
/** How long after a run's reported end a stream that never connected is waited for. */
const STREAMS_GRACE_MS = 2000;
/** How long a run's reaper has to connect once its request was sent (it forks at once). */
const CONNECT_MS = 10_000;
/** Connections that have not named their run yet: at most so many, each for at most HEAD_MS. */
const MAX_UNNAMED = 32;
const HEAD_MS = 5000;
/** The socket's directory beside the helper's own: `.walls-PID-XXXXXX`, PID the helper's. */
const DIR_PREFIX = '.walls-';

/** Removes the socket directories of helpers that are gone (a helper SIGKILLed could not). */
function sweepDirs(home: string): void {
  let names: string[];
  try {
    names = readdirSync(home).filter((n) => n.startsWith(DIR_PREFIX));
  } catch {
    return;
  }
  for (const n of names) {
    const pid = Number(/^\.walls-(\d+)-/.exec(n)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ESRCH') rmSync(`${home}/${n}`, { recursive: true, force: true });
    }
  }
}

/** What a run in the walls hears of its progress. */
export interface WallsRunEvents {
  output(which: 'stdout' | 'stderr', chunk: Buffer): void;
  /** The run's /bin/sh started: its process group, as this helper's pid namespace numbers it. */
  started(pgid: number): void;
  /** Everything the run started is gone: its raw wait status, or why it has none. */
  ended(end: WallsEnd): void;
}

/** A run's end: its raw wait status, or why it has none (`ran`: it may have run; `sandbox`: the walls failed, not the run's exec). */
export type WallsEnd = { completion: Completion } | { failed: string; ran: boolean; sandbox: boolean };

interface Pending {
  events: WallsRunEvents;
  /** The stream connections still open, and how many came. */
  streams: Set<'o' | 'e'>;
  opened: number;
  /** Every connection of the run, closed when it ends. */
  sockets: Socket[];
  status?: Socket;
  report: string;
  ended: boolean;
  timer: NodeJS.Timeout;
  /** The reaper said the end but a stream never came: no more will once STREAMS_GRACE_MS has passed. */
  late?: boolean;
}

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
  private readonly runs = new Map<string, Pending>();
  private queued: Buffer[] | undefined = [];
  private stderr = '';
  private idle: NodeJS.Timeout | undefined;
  private prefork: NodeJS.Timeout | undefined;
  private retired = false;
  private unnamed = 0;
  closed = false;

  /** `args`: bwrap's walls up to `--` (latin1 strings: one character per byte); `home`: where the socket's directory goes. */
  constructor(
    bwrap: string,
    args: readonly string[],
    home: string,
    waiter: WaiterProgram,
    readonly key: string,
    private readonly idleMs: number = WALLS_IDLE_MS,
  ) {
    sweepDirs(home);
    this.dir = mkdtempSync(`${home}/${DIR_PREFIX}${process.pid}-`);
    if (live.size === 0 && !process.listeners('exit').includes(endAll)) process.on('exit', endAll);
    live.add(this);
    this.server = createServer((s) => this.accept(s));
    this.server.on('error', () => this.close());
    this.server.listen(`${this.dir}/s`, () => {
      try {
        chmodSync(`${this.dir}/s`, 0o600);
      } catch {
        // closed meanwhile
      }
    });
    const { binds, command } = waiterCommand(waiter);
    // The walls go through a descriptor (bwrap --args): a path that is not UTF-8 keeps its bytes.
    const walls = [...args, '--ro-bind', this.dir, INNER_DIR, ...binds];
    this.child = spawn(bwrap, ['--args', '4', ...command], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
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
    this.child.once('exit', () => this.fail(this.stderr.trim().split('\n')[0]?.slice(0, 300) || 'the sandbox ended'));
    this.armIdle();
  }

  /** The walls' process group (bwrap's): what the broker stops should this helper die. */
  get pgid(): number | undefined {
    return this.child.pid;
  }

  /** Runs a script in the walls; `events` hear of it until `ended`. */
  run(req: Omit<WaiterRequest, 'token'>, events: WallsRunEvents): void {
    if (this.closed) return events.ended({ failed: 'the sandbox ended', ran: false, sandbox: true });
    const token = randomBytes(16).toString('hex');
    const timer = setTimeout(
      () => this.finish(token, { failed: 'the sandbox did not start the run', ran: false, sandbox: true }),
      CONNECT_MS,
    );
    this.runs.set(token, { events, streams: new Set(), opened: 0, sockets: [], report: '', ended: false, timer });
    clearTimeout(this.idle);
    const frame = encodeRequest({ ...req, token });
    if (this.queued) this.queued.push(frame);
    else this.ctrl.write(frame);
  }

  /** No new run comes here: the walls end when their last run has (a changed policy). */
  retire(): void {
    this.retired = true;
    if (this.runs.size === 0) this.close();
  }

  get busy(): boolean {
    return this.runs.size > 0;
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
    for (const token of [...this.runs.keys()])
      this.finish(token, { failed: 'the sandbox ended', ran: true, sandbox: true });
  }

  private onCtrl(c: string): void {
    if (this.queued && c.startsWith(WAITER_READY)) {
      // The waiter asks before it takes a request: the answer proves this helper alive after bwrap
      // set its parent-death signal (src/os/bwrap.ts, WAITER_READY).
      this.ctrl.write(WAITER_GO);
      for (const f of this.queued) this.ctrl.write(f);
      if (this.queued.length === 0) this.ctrl.write(PREFORK);
      this.queued = undefined;
      c = c.slice(1);
    }
    for (const m of c.matchAll(/F([0-9a-f]{32})\n/g))
      this.finish(m[1]!, { failed: 'the sandbox could not fork', ran: false, sandbox: true });
  }

  private fail(why: string): void {
    if (this.closed) return;
    const started = this.queued === undefined;
    for (const token of [...this.runs.keys()]) this.finish(token, { failed: why, ran: started, sandbox: true });
    this.close();
  }

  private accept(s: Socket): void {
    s.on('error', () => undefined);
    // A run in the walls can connect too: a connection must name a live run at once, and only so many may try.
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
      const token = head.subarray(0, 32).toString('latin1');
      const kind = head.toString('latin1', 32, 34);
      const run = this.runs.get(token);
      if (
        !run ||
        run.ended ||
        !/^[soe]\n$/.test(kind) ||
        (kind[0] === 's' ? run.status : run.streams.has(kind[0] as 'o'))
      ) {
        s.destroy();
        return;
      }
      run.sockets.push(s);
      const rest = head.subarray(34);
      if (kind[0] === 's') this.onStatus(token, run, s, rest);
      else this.onStream(token, run, s, kind[0] === 'o' ? 'stdout' : 'stderr', rest);
    };
    s.on('data', onHead);
  }

  private onStream(token: string, run: Pending, s: Socket, which: 'stdout' | 'stderr', rest: Buffer): void {
    const k = which === 'stdout' ? 'o' : 'e';
    run.streams.add(k);
    run.opened += 1;
    if (rest.length > 0) run.events.output(which, rest);
    s.on('data', (c: Buffer) => run.events.output(which, c));
    s.once('close', () => {
      run.streams.delete(k);
      this.settle(token, run);
    });
  }

  private onStatus(token: string, run: Pending, s: Socket, rest: Buffer): void {
    clearTimeout(run.timer);
    run.status = s;
    let reported = false;
    const hear = (c: Buffer): void => {
      run.report = (run.report + c.toString('latin1')).slice(0, 256);
      const r = parseReaper(run.report);
      if (r.pid !== undefined && !reported && r.failed === undefined) {
        reported = true;
        const pgid = hostPid(this.waiterPid(), r.pid);
        if (pgid !== undefined) run.events.started(pgid);
      }
      this.settle(token, run);
    };
    if (rest.length > 0) hear(rest);
    s.on('data', hear);
    s.once('close', () => {
      const r = parseReaper(run.report);
      if (r.status === undefined && !run.ended) {
        // The run's reaper was killed before it could say the run's end: only the walls' end proves
        // that nothing the run started is left, so these walls end (and every run in them).
        const failed = r.failed ?? 'the run ended its own reaper in the sandbox';
        this.finish(token, { failed, ran: r.failed === undefined, sandbox: r.failed === undefined });
        this.close();
      }
    });
  }

  /** The run ends once its reaper said so and both of its streams have closed. */
  private settle(token: string, run: Pending): void {
    const r = parseReaper(run.report);
    if (r.failed !== undefined) return this.finish(token, { failed: r.failed, ran: false, sandbox: false });
    if (r.status === undefined) return;
    if (run.streams.size === 0 && (run.opened === 2 || run.late))
      return this.finish(token, { completion: completionOfStatus(r.status) });
    // The run's processes are gone, yet a stream did not come (its child died between its two
    // connections): one still in the socket's backlog is accepted within the grace, then the end.
    if (run.opened < 2 && !run.late) {
      clearTimeout(run.timer);
      run.timer = setTimeout(() => {
        run.late = true;
        this.settle(token, run);
      }, STREAMS_GRACE_MS);
    }
  }

  private finish(token: string, end: WallsEnd): void {
    const run = this.runs.get(token);
    if (!run || run.ended) return;
    run.ended = true;
    clearTimeout(run.timer);
    this.runs.delete(token);
    for (const s of run.sockets) s.destroy();
    run.events.ended(end);
    this.preforkSoon();
    if (this.runs.size === 0) {
      if (this.retired) this.close();
      else this.armIdle();
    }
  }

  /** Asks the waiter for the next run's processes once this run's result is on its way. */
  private preforkSoon(): void {
    if (this.closed || this.retired || this.queued !== undefined || this.prefork) return;
    this.prefork = setTimeout(() => {
      this.prefork = undefined;
      if (!this.closed && !this.retired) this.ctrl.write(PREFORK);
    }, PREFORK_DELAY_MS);
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
