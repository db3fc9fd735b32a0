// One run: /bin/sh -c SCRIPT in its own session, output captured and bounded, ended exactly once.
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { Completion, Overflow } from '../../src/protocol/messages.js';
import { groupAlive } from '../../src/os/proc.js';
import { KILL_GRACE_MS, terminateGroup } from '../../src/os/process-group.js';
import { monotonicMs } from '../../src/protocol/trace.js';
import type { Duplex } from 'node:stream';
import { StreamStore } from '../output/stream-store.js';
import type { WallsEnd, WallsRunEvents } from '../sandbox/walls.js';
import type { SnapshotFields } from '../shell/snapshot.js';
import { e2bigDetail, EXACT_EXEC, exactFailure, exactSpec, PERL } from './exact-exec.js';

export interface RunSpec {
  script: string;
  cwd: string;
  env: Record<string, string>;
  umask: number | undefined;
  /** The cwd and env byte for byte (one character per byte), when some byte is not UTF-8 (helper/run/exact-exec.ts). */
  bytes?: Pick<SnapshotFields, 'cwd' | 'env'>;
  stdoutLimit: number;
  stderrLimit: number;
  /** tail: a stream over its limit keeps its last bytes and the run goes on (default stop). */
  overflow?: Overflow;
  /** Run inside the pane's walls (helper/sandbox/walls.ts) rather than as a /bin/sh of its own. */
  launcher?: RunLauncher;
}

/** Where a sandboxed run goes: the pane's kept-alive walls, which start /bin/sh and report its end. */
export interface RunLauncher {
  /** The walls' process group: what the broker stops should this helper die. */
  pgid: number | undefined;
  launch(script: string, umask: number | undefined, events: WallsRunEvents): void;
}

/** Why a run ended; the first reason wins and every flag of the result derives from it. */
export type EndReason = 'completed' | 'output_limit_exceeded' | 'cancelled' | 'spawn_failed' | 'sandbox_unavailable';

export interface RunOutcome {
  reason: EndReason;
  completion?: Completion;
  stdout: Buffer;
  stderr: Buffer;
  stdoutBytes: number;
  stderrBytes: number;
  overflow?: 'stdout' | 'stderr';
  durationMs: number;
  error?: string;
}

/** How long output is still collected after /bin/sh exits. */
export const DRAIN_MS = 50;
const signalNumber = (name: NodeJS.Signals): number => (osConstants.signals as Record<string, number>)[name] ?? 255;

export class Run {
  readonly done: Promise<RunOutcome>;
  pgid: number | undefined;
  private child: ChildProcess | undefined;
  /** What the run keeps of each stream (at most its limit), and how many bytes it produced. */
  readonly stdout: StreamStore;
  readonly stderr: StreamStore;
  private reason: EndReason | undefined;
  private overflow: 'stdout' | 'stderr' | undefined;
  private completion: Completion | undefined;
  private startedAt = 0;
  private resolve!: (o: RunOutcome) => void;
  private finished = false;
  /** A run in the walls: its /bin/sh's group once known (where a stop goes), and whether the stop is due. */
  private group: number | undefined;
  /** What the exact-bytes exec wrapper reported (nothing: /bin/sh was exec'd). */
  private exactReport = '';
  /** When /bin/sh exited and when the run ended (output drained), on the trace's clock. */
  exitedAt: number | undefined;
  endedAt: number | undefined;

  constructor(private readonly spec: RunSpec) {
    this.done = new Promise((r) => (this.resolve = r));
    this.stdout = new StreamStore(spec.stdoutLimit);
    this.stderr = new StreamStore(spec.stderrLimit);
  }

  get stdoutBytes(): number {
    return this.stdout.total;
  }

  get stderrBytes(): number {
    return this.stderr.total;
  }

  /** Starts the script; returns its process group id, or undefined when it could not start. */
  start(): number | undefined {
    this.startedAt = performance.now();
    if (this.spec.launcher) return this.launch(this.spec.launcher);
    const { bytes } = this.spec;
    const previous = this.spec.umask === undefined ? undefined : process.umask(this.spec.umask);
    let child: ChildProcess;
    try {
      const exact = bytes !== undefined;
      const sh = ['/bin/sh', '-c', this.spec.script];
      child = spawn(exact ? PERL : '/bin/sh', exact ? ['-e', EXACT_EXEC, ...sh] : sh.slice(1), {
        cwd: exact ? '/' : this.spec.cwd,
        env: exact ? {} : this.spec.env,
        detached: true,
        stdio: exact ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'],
      });
      if (exact) this.sendExact(child, bytes);
    } catch (e) {
      const message = (e as Error).message;
      this.end('spawn_failed', message.includes('E2BIG') ? e2bigDetail(this.spec.env) : message);
      return undefined;
    } finally {
      if (previous !== undefined) process.umask(previous);
    }
    this.child = child;
    if (child.pid === undefined) {
      child.once('error', (e) =>
        this.end('spawn_failed', e.message.includes('E2BIG') ? e2bigDetail(this.spec.env) : e.message),
      );
      return undefined;
    }
    this.pgid = child.pid;
    child.stdout!.on('data', (c: Buffer) => this.collect('stdout', c));
    child.stderr!.on('data', (c: Buffer) => this.collect('stderr', c));
    let closed = false;
    child.once('close', () => {
      closed = true;
      if (this.completion) this.end('completed');
    });
    child.once('exit', (code, signal) => {
      this.exitedAt = monotonicMs();
      this.completion =
        signal !== null
          ? { state: 'signaled', exit_status: null, signal: signalNumber(signal) }
          : { state: 'exited', exit_status: code ?? 0, signal: null };
      if (closed) this.end('completed');
      else setTimeout(() => this.end('completed'), DRAIN_MS);
    });
    return this.pgid;
  }

  /** Starts the script in the pane's walls; returns the walls' group (the broker's to stop should the helper die). */
  private launch(l: RunLauncher): number | undefined {
    this.pgid = l.pgid;
    l.launch(this.spec.script, this.spec.umask, {
      output: (which, chunk) => this.collect(which, chunk),
      started: (group) => {
        this.group = group;
        if (this.reason !== undefined) terminateGroup(group);
      },
      ended: (end) => this.wallsEnded(end),
    });
    return this.pgid;
  }

  /** The walls' report of the run's end: its own status, or why there is none. */
  private wallsEnded(end: WallsEnd): void {
    this.exitedAt = monotonicMs();
    if ('completion' in end) {
      this.completion = end.completion;
      return this.end('completed');
    }
    if (!end.ran) return this.end(end.sandbox ? 'sandbox_unavailable' : 'spawn_failed', end.failed);
    // The walls ended under the run (its reaper was killed): everything in them was SIGKILLed.
    this.completion = { state: 'signaled', exit_status: null, signal: 9 };
    this.end('completed', end.failed);
  }

  /** Hands the exact cwd and env to the wrapper on descriptor 3 and keeps what it reports there. */
  private sendExact(child: ChildProcess, bytes: Pick<SnapshotFields, 'cwd' | 'env'>): void {
    const link = child.stdio[3] as Duplex;
    link.on('error', () => undefined);
    link.setEncoding('latin1');
    link.on('data', (c: string) => (this.exactReport = (this.exactReport + c).slice(0, 32)));
    link.end(exactSpec(bytes));
  }

  private collect(which: 'stdout' | 'stderr', chunk: Buffer): void {
    // A run over its limit keeps nothing more; a cancelled one keeps what it prints while it stops
    // (a TERM trap's last words), within the store's bounds.
    if (this.reason === 'output_limit_exceeded') return;
    const store = this[which];
    store.append(chunk);
    if (this.reason === undefined && store.total > store.capacity && this.spec.overflow !== 'tail') {
      this.overflow = which;
      this.stop('output_limit_exceeded');
    }
  }

  /** Stops the run's process group (cancel or overflow); the outcome follows when /bin/sh exits. */
  stop(reason: 'cancelled' | 'output_limit_exceeded'): void {
    if (this.reason !== undefined || this.finished) return;
    this.reason = reason;
    if (this.spec.launcher) {
      // In the walls the stop goes to the run's own group (once its reaper has said which it is).
      if (this.group !== undefined) terminateGroup(this.group, KILL_GRACE_MS);
    } else if (this.pgid !== undefined) terminateGroup(this.pgid, KILL_GRACE_MS);
    if (this.completion) this.end(reason);
  }

  private end(reason: EndReason, error?: string): void {
    if (this.finished) return;
    this.finished = true;
    this.endedAt = monotonicMs();
    let final = this.reason ?? reason;
    const unexec = exactFailure(this.exactReport);
    if (unexec !== undefined && final === 'completed') {
      // The wrapper never became /bin/sh: nothing of the script ran.
      [final, error, this.completion] = ['spawn_failed', unexec, undefined];
    }
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    // Whatever is left in the group (a `cmd &` holding the pipes) ends with the run.
    // (In the walls the run's reaper has ended all of it already, and the group is the walls'.)
    if (!this.spec.launcher && this.pgid !== undefined && groupAlive(this.pgid)) terminateGroup(this.pgid);
    this.resolve({
      reason: final,
      completion: this.completion,
      stdout: this.stdout.contents(),
      stderr: this.stderr.contents(),
      stdoutBytes: this.stdout.total,
      stderrBytes: this.stderr.total,
      overflow: this.overflow,
      durationMs: Math.round(performance.now() - this.startedAt),
      error,
    });
  }
}
