// One run: /bin/sh -c SCRIPT in its own session, output captured and bounded, ended exactly once.
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { Completion, Overflow } from '../../src/protocol/messages.js';
import { groupAlive } from '../../src/os/proc.js';
import { KILL_GRACE_MS, terminateGroup } from '../../src/os/process-group.js';
import { monotonicMs } from '../../src/protocol/trace.js';
import type { Duplex } from 'node:stream';
import { StreamStore } from '../output/stream-store.js';
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
  /** Run inside a sandbox (helper/sandbox.ts): `file args... /bin/sh -c SCRIPT`, its waiter reporting on fd 3. */
  wrap?: RunWrap;
}

/** A command that wraps /bin/sh (bwrap and its waiter), and how its report becomes the completion. */
export interface RunWrap {
  file: string;
  args: string[];
  /** The completion from what fd 3 carried and the wrapper's own end; undefined: the script never started. */
  completion: (status: string, code: number | null, signal: number | null) => Completion | undefined;
  /** The waiter's first byte on fd 3 and the helper's answer to it, before the script may start. */
  handshake: { ready: string; go: string };
  /**
   * Where a stop's SIGTERM goes, given the wrapper's pid: the waiter, which passes it on to the
   * script's group (the wrapper would die of it, and the sandbox's end SIGKILLs the script).
   */
  termPid?: (wrapperPid: number) => number | undefined;
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
  /** What a wrapped run's waiter reported, and the wrapper's own end. */
  private wrapStatus = '';
  private wrapEnd: { code: number | null; signal: number | null } | undefined;
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
    const { bytes, wrap } = this.spec;
    const previous = this.spec.umask === undefined ? undefined : process.umask(this.spec.umask);
    let child: ChildProcess;
    try {
      const exact = bytes !== undefined && !wrap;
      const sh = ['/bin/sh', '-c', this.spec.script];
      child = spawn(
        wrap ? wrap.file : exact ? PERL : '/bin/sh',
        wrap ? [...wrap.args, ...sh] : exact ? ['-e', EXACT_EXEC, ...sh] : sh.slice(1),
        {
          cwd: exact ? '/' : this.spec.cwd,
          env: exact ? {} : this.spec.env,
          detached: true,
          stdio: wrap || exact ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'],
        },
      );
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
    if (this.spec.wrap) {
      // The waiter asks before it starts the script; the answer proves this helper alive after bwrap
      // set its parent-death signal (src/os/bwrap.ts, WAITER_READY).
      const { ready, go } = this.spec.wrap.handshake;
      const status = child.stdio[3] as Duplex;
      status.setEncoding('latin1');
      status.on('error', () => undefined);
      status.on('data', (c: string) => {
        if (this.wrapStatus === '' && c.startsWith(ready) && this.reason === undefined) status.write(go);
        this.wrapStatus = (this.wrapStatus + c).slice(0, 64);
      });
    }
    let closed = false;
    child.once('close', () => {
      closed = true;
      if (this.completion) this.end('completed');
    });
    child.once('exit', (code, signal) => {
      this.exitedAt = monotonicMs();
      this.wrapEnd = { code, signal: signal === null ? null : signalNumber(signal) };
      this.completion =
        signal !== null
          ? { state: 'signaled', exit_status: null, signal: signalNumber(signal) }
          : { state: 'exited', exit_status: code ?? 0, signal: null };
      if (closed) this.end('completed');
      else setTimeout(() => this.end('completed'), DRAIN_MS);
    });
    return this.pgid;
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
    if (this.pgid !== undefined) terminateGroup(this.pgid, KILL_GRACE_MS, this.spec.wrap?.termPid?.(this.pgid));
    if (this.completion) this.end(reason);
  }

  private end(reason: EndReason, error?: string): void {
    if (this.finished) return;
    this.finished = true;
    this.endedAt = monotonicMs();
    let final = this.reason ?? reason;
    if (this.spec.wrap && this.wrapEnd) {
      // The script's own end, as the waiter saw it; no start reported: the sandbox was never made.
      this.completion = this.spec.wrap.completion(this.wrapStatus, this.wrapEnd.code, this.wrapEnd.signal);
      if (!this.completion && final === 'completed') {
        final = 'sandbox_unavailable';
        error = this.stderr.contents().toString('utf8').trim().split('\n')[0]?.slice(0, 300) ?? '';
      }
    }
    const unexec = exactFailure(this.exactReport);
    if (unexec !== undefined && final === 'completed') {
      // The wrapper never became /bin/sh: nothing of the script ran.
      [final, error, this.completion] = ['spawn_failed', unexec, undefined];
    }
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    // Whatever is left in the group (a `cmd &` holding the pipes) ends with the run.
    if (this.pgid !== undefined && groupAlive(this.pgid)) terminateGroup(this.pgid);
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
