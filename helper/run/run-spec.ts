// What a run is given (RunSpec), where a walled run goes (RunLauncher, and what it hears back:
// WallsRunEvents) and what it comes to (RunOutcome): the types of helper/run/runner.ts, shared with
// the queue, the walls (which implement the launcher) and the tests.
import type { Overflow, Completion } from '../../src/core/protocol/messages.js';
import type { Socket } from 'node:net';
import type { SnapshotFields } from '../shell/snapshot.js';
import type { InputFeed } from './input-feed.js';
import type { RunTerminal } from './terminal.js';

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
  /** Run inside the pane's walls (helper/walls/walls.ts) rather than as a /bin/sh of its own. */
  launcher?: RunLauncher;
  /** input pipe or terminal: what the run is given to read (absent: stdin is /dev/null). */
  input?: InputFeed;
  /** input terminal: the run's own pseudo-terminal (its stdin, stdout and stderr). */
  terminal?: RunTerminal;
}

/** Where a sandboxed run goes: the pane's kept-alive walls, which start /bin/sh and report its end. */
export interface RunLauncher {
  /** The walls' process group: what the broker stops should this helper die. */
  pgid: number | undefined;
  /** `input`: the run's stdin (absent: /dev/null); a terminal is made in the walls, its master sent back (events.terminal). */
  launch(script: string, umask: number | undefined, events: WallsRunEvents, input?: WallsInput): void;
}

/** What a run in the walls hears of its progress. */
export interface WallsRunEvents {
  output(which: 'stdout' | 'stderr', chunk: Buffer): void;
  /** The run's /bin/sh started: its process group, as this helper's pid namespace numbers it. */
  started(pgid: number): void;
  /** Everything the run started is gone: its raw wait status, or why it has none. */
  ended(end: WallsEnd): void;
  /** Whether the run is still wanted (not stopped): one stopped before it started is not started again. */
  wanted?(): boolean;
  /** input pipe: the run's stdin, a connection its child made (written, half-closed at eof). */
  stdin?(sink: Socket): void;
  /** input terminal: the master of the run's own terminal, made in the walls (helper/walls/channel.ts). */
  terminal?(masterFd: number): void;
}

/** A run's end: its raw wait status, or why it has none (`ran`: it may have run; `sandbox`: the walls failed, not the run's exec). */
export type WallsEnd = { completion: Completion } | { failed: string; ran: boolean; sandbox: boolean };

/** What a walled run's stdin is: a pipe the helper writes, or a terminal of its own of that size. */
export type WallsInput = { kind: 'pipe' } | { kind: 'terminal'; cols: number; rows: number };

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
