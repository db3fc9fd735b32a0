// One run: /bin/sh -c SCRIPT in its own session, output captured and bounded, ended exactly once.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import type { Completion } from '../../src/core/protocol/messages.js';
import { groupAlive } from '../../src/core/os/proc.js';
import { KILL_GRACE_MS, terminateGroup } from '../../src/core/os/process-group.js';
import { monotonicMs } from '../../src/core/protocol/trace.js';
import { Socket } from 'node:net';
import type { Duplex, Readable, Writable } from 'node:stream';
import { StreamStore } from '../output/stream-store.js';
import type { SnapshotFields } from '../shell/snapshot.js';
import { nativeSpawn, spawnKind, type SpawnKind } from '../../src/core/os/native-spawn.js';
import { e2bigDetail, EXACT_EXEC, exactFailure, exactSpec, PERL } from './exact-exec.js';
import type { RunTerminal } from './terminal.js';
import type { EndReason, RunLauncher, RunOutcome, RunSpec, WallsEnd, WallsInput, WallsRunEvents } from './run-spec.js';

/** A started plain run: its pid, the streams the helper reads, and where its input goes (if any). */
interface Started {
  pid: number | undefined;
  outputs: Readable[];
  stdin?: Writable;
}

/** How long output is still collected after /bin/sh exits. */
export const DRAIN_MS = 50;
/**
 * A terminal run's drain: its master reports the end of output (EIO) only once every holder of
 * the terminal has closed it, which can come later than /bin/sh's exit on a busy machine.
 */
export const TERMINAL_DRAIN_MS = 500;
const signalNumber = (name: NodeJS.Signals): number => (osConstants.signals as Record<string, number>)[name] ?? 255;

let chosen: SpawnKind | undefined;
/** The helper's spawn for plain runs, decided once per process (src/core/os/native-spawn.ts). */
const helperSpawn = (): SpawnKind => (chosen ??= spawnKind().kind);

export class Run {
  readonly done: Promise<RunOutcome>;
  pgid: number | undefined;
  /** The plain run's stdout and stderr pipes, once started. */
  private streams: Readable[] = [];
  /** Where the run's input is written (a pipe's write end, or the terminal's master), once started. */
  private stdin: Writable | undefined;
  /** Takes the plain run's exit (from Node's child process or the native spawn's watch). */
  private exitHandler: ((c: Completion) => void) | undefined;
  /** How this run is spawned when plain (tests choose; the helper takes src/core/os/native-spawn.ts's choice). */
  private readonly spawn: SpawnKind;
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
  /** A terminal run in the walls: its master's stream has closed (everything it printed was read). */
  private masterClosed = false;
  /** What the exact-bytes exec wrapper reported (nothing: /bin/sh was exec'd). */
  private exactReport = '';
  /** When /bin/sh exited and when the run ended (output drained), on the trace's clock. */
  exitedAt: number | undefined;
  endedAt: number | undefined;

  constructor(
    private readonly spec: RunSpec,
    spawnWith: SpawnKind = helperSpawn(),
  ) {
    this.spawn = spawnWith;
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
    const previous = this.spec.umask === undefined ? undefined : process.umask(this.spec.umask);
    let started: Started | undefined;
    try {
      started = this.spawn === 'native' ? this.spawnNative() : this.spawnNode();
    } catch (e) {
      const message = (e as Error).message;
      this.end('spawn_failed', message.includes('E2BIG') ? e2bigDetail(this.spec.env) : message);
      return undefined;
    } finally {
      if (previous !== undefined) process.umask(previous);
    }
    if (started.pid === undefined) return undefined;
    this.pgid = started.pid;
    this.streams = started.outputs;
    const [out, err] = started.outputs;
    out?.on('data', (c: Buffer) => this.collect('stdout', c));
    err?.on('data', (c: Buffer) => this.collect('stderr', c));
    if (started.stdin) this.connectInput(started.stdin);
    let open = this.streams.length;
    const closed = (): void => {
      if (--open === 0 && this.completion) this.end('completed');
    };
    for (const s of this.streams) {
      s.once('close', closed);
      s.on('error', () => undefined); // a read error ends the stream; what was read is kept
    }
    this.exitHandler = (completion) => {
      this.exitedAt = monotonicMs();
      this.completion = completion;
      if (open === 0) this.end('completed');
      else setTimeout(() => this.end('completed'), this.spec.terminal ? TERMINAL_DRAIN_MS : DRAIN_MS);
    };
    return this.pgid;
  }

  /** /bin/sh through Node's spawn (a fork of the helper); a snapshot that is not UTF-8 through the exact-bytes wrapper (exact-exec.ts). */
  private spawnNode(): Started {
    const { bytes } = this.spec;
    if (this.spec.terminal)
      throw new Error('a terminal run needs the native spawn (generated/spawn.node), which is not in use here');
    const stdin = this.spec.input ? 'pipe' : 'ignore';
    const exact = bytes !== undefined;
    const sh = ['/bin/sh', '-c', this.spec.script];
    const child = spawn(exact ? PERL : '/bin/sh', exact ? ['-e', EXACT_EXEC, ...sh] : sh.slice(1), {
      cwd: exact ? '/' : this.spec.cwd,
      env: exact ? {} : this.spec.env,
      detached: true,
      stdio: exact ? [stdin, 'pipe', 'pipe', 'pipe'] : [stdin, 'pipe', 'pipe'],
    });
    if (exact) this.sendExact(child, bytes);
    if (child.pid === undefined) {
      child.once('error', (e) =>
        this.end('spawn_failed', e.message.includes('E2BIG') ? e2bigDetail(this.spec.env) : e.message),
      );
    }
    child.once('exit', (code, signal) =>
      this.exitHandler?.(
        signal !== null
          ? { state: 'signaled', exit_status: null, signal: signalNumber(signal) }
          : { state: 'exited', exit_status: code ?? 0, signal: null },
      ),
    );
    return { pid: child.pid, outputs: [child.stdout!, child.stderr!], ...(child.stdin ? { stdin: child.stdin } : {}) };
  }

  /**
   * /bin/sh through the native vfork (src/core/os/native-spawn.ts): no fork of the helper. A snapshot
   * that is not UTF-8 goes as its bytes, with no exec wrapper.
   */
  private spawnNative(): Started {
    const { bytes, terminal } = this.spec;
    const s = nativeSpawn(
      ['/bin/sh', '-c', this.spec.script],
      bytes?.env ?? this.spec.env,
      bytes?.cwd ?? this.spec.cwd,
      (code, signal) =>
        this.exitHandler?.(
          signal !== null
            ? { state: 'signaled', exit_status: null, signal }
            : // Both unknown (the wait itself failed; nothing else reaps the helper's runs): say 255.
              { state: 'exited', exit_status: code ?? 255, signal: null },
        ),
      bytes ? 'latin1' : 'utf8',
      terminal ? { kind: 'terminal', ...terminal.size } : this.spec.input ? { kind: 'pipe' } : { kind: 'closed' },
    );
    if (terminal) {
      // One stream for all of it: the master is read (everything the run printed) and written (its input).
      const master = terminal.open(s.stdoutFd, (c) => this.collect('stdout', c));
      master.once('close', () => terminal.closed());
      return { pid: s.pid, outputs: [master], stdin: master };
    }
    const pipe = (fd: number): Readable => new Socket({ fd, readable: true, writable: false });
    const stdin = s.stdinFd >= 0 ? new Socket({ fd: s.stdinFd, readable: false, writable: true }) : undefined;
    return { pid: s.pid, outputs: [pipe(s.stdoutFd), pipe(s.stderrFd)], ...(stdin ? { stdin } : {}) };
  }

  /** Where the run's input goes from now on (a pipe's write end, a connection, or the terminal's master). */
  private connectInput(sink: Writable): void {
    this.stdin = sink;
    this.spec.input?.connect(sink);
  }

  /** Starts the script in the pane's walls; returns the walls' group (the broker's to stop should the helper die). */
  private launch(l: RunLauncher): number | undefined {
    this.pgid = l.pgid;
    const { input, terminal } = this.spec;
    const events: WallsRunEvents = {
      output: (which, chunk) => this.collect(which, chunk),
      started: (group) => {
        this.group = group;
        if (this.reason !== undefined) terminateGroup(group);
      },
      ended: (end) => this.wallsEnded(end),
      wanted: () => this.reason === undefined,
    };
    if (terminal) events.terminal = (fd) => this.wallsTerminal(terminal, fd);
    else if (input) events.stdin = (sink) => this.connectInput(sink);
    const stdin: WallsInput | undefined = terminal
      ? { kind: 'terminal', ...terminal.size }
      : input
        ? { kind: 'pipe' }
        : undefined;
    l.launch(this.spec.script, this.spec.umask, events, stdin);
    return this.pgid;
  }

  /** A walled terminal run's master (made in the walls): read as a plain terminal run's is, its input written to it. */
  private wallsTerminal(terminal: RunTerminal, fd: number): void {
    if (this.finished) return closeSync(fd);
    const collect = (c: Buffer): void => this.collect('stdout', c);
    const master = terminal.open(fd, collect);
    this.streams.push(master);
    master.on('data', collect);
    master.on('error', () => undefined); // EIO once every holder of the terminal has closed it
    master.once('close', () => {
      terminal.closed();
      this.masterClosed = true;
      if (this.completion) this.end('completed');
    });
    this.connectInput(master);
  }

  /** The walls' report of the run's end: its own status, or why there is none. */
  private wallsEnded(end: WallsEnd): void {
    this.exitedAt = monotonicMs();
    if ('completion' in end) {
      this.completion = end.completion;
      // A terminal's output is read from its master until the end of it (as for a plain terminal run).
      if (this.spec.terminal && this.streams.length > 0 && !this.masterClosed)
        return void setTimeout(() => this.end('completed'), TERMINAL_DRAIN_MS);
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
    this.spec.terminal?.output(chunk);
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
    this.spec.terminal?.finish();
    this.spec.input?.end();
    for (const s of this.streams) s.destroy();
    this.stdin?.destroy();
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
