// A run's input (tmux_start's `input: pipe` or `terminal`): the bytes the agent (or the attached
// person) gives it, in order. Bytes given before the run starts wait here and are written once it
// has its stdin; at most INPUT_BACKLOG_BYTES may wait undelivered (here and in the stream's own
// buffer), past that a call is refused whole. The audit trail gets the count and the bytes, the
// watch feed each chunk as it is taken; the newest INPUT_REPLAY_BYTES are kept in memory for a
// watcher of this one run who comes later (`tmux-run watch --run ID`), never written anywhere.
import type { Writable } from 'node:stream';
import type { ErrorCode } from '../../src/core/protocol/errors.js';
import type { InputMode } from '../../src/core/protocol/messages.js';
import { INPUT_BACKLOG_BYTES, INPUT_REPLAY_BYTES } from '../../src/core/protocol/limits.js';
import { StreamStore } from '../output/stream-store.js';

export interface InputRefusal {
  code: Extract<ErrorCode, 'input_closed' | 'input_backlog' | 'run_attached' | 'invalid_arguments'>;
  message: string;
}

export class InputFeed {
  /** Every byte taken so far, and how many calls gave them. */
  given = 0;
  calls = 0;
  /** No more input is taken: eof was given, or the run ended. */
  closed = false;
  /** The person has the terminal (tmux-run attach): the agent's input is refused. */
  attached = false;
  /** The newest bytes taken (at most INPUT_REPLAY_BYTES), replayed to a later watcher of the run. */
  readonly kept = new StreamStore(INPUT_REPLAY_BYTES);
  /** Each chunk taken, with its offset in the input (the watch feed shows it). */
  onInput: ((chunk: Buffer, from: number) => void) | undefined;
  private waiting: Buffer[] = [];
  private waitingBytes = 0;
  private eof = false;
  private sink: Writable | undefined;

  constructor(readonly mode: Exclude<InputMode, 'closed'>) {}

  /** Bytes taken but not yet delivered to the run: waiting for its start, or in its stream's buffer. */
  backlog(): number {
    return this.waitingBytes + (this.sink?.writableLength ?? 0);
  }

  /** Why this input is refused, or undefined: nothing is taken when it is refused. */
  refusal(data: Buffer, eof: boolean, byPerson = false): InputRefusal | undefined {
    if (this.closed)
      return {
        code: 'input_closed',
        message: this.eof
          ? "the run's stdin was closed (eof was given); nothing more can be written to it"
          : 'the run has ended; its input is closed',
      };
    if (eof && this.mode === 'terminal')
      return {
        code: 'invalid_arguments',
        message:
          "eof closes an input pipe; a terminal run has no pipe to close: send the terminal's EOF character (\\u0004) as data instead",
      };
    if (this.attached && !byPerson)
      return {
        code: 'run_attached',
        message:
          "the person has taken this run's terminal over (tmux-run attach); input is refused until they detach, so that nothing mixes with what they type",
      };
    if (this.backlog() + data.length > INPUT_BACKLOG_BYTES)
      return {
        code: 'input_backlog',
        message: `the run has not read the input it was given: ${this.backlog()} bytes wait undelivered, and at most ${INPUT_BACKLOG_BYTES} may; none of these ${data.length} bytes were taken (retry once it reads)`,
      };
    return undefined;
  }

  /** Takes the bytes (refusal() said yes): written now when the run has its stdin, else once it does. */
  take(data: Buffer, eof: boolean): void {
    const from = this.given;
    this.given += data.length;
    this.calls++;
    if (data.length > 0) {
      this.onInput?.(data, from);
      this.kept.append(data);
      if (this.sink) this.sink.write(data);
      else {
        this.waiting.push(data);
        this.waitingBytes += data.length;
      }
    }
    if (eof) {
      this.eof = true;
      this.closed = true;
      this.sink?.end();
    }
  }

  /** The run started: what waited is written, in order (and stdin closed, when eof was given). */
  connect(sink: Writable): void {
    if (this.closed && !this.eof) return;
    sink.on('error', () => undefined); // a program that exits unread: its input is lost with it
    this.sink = sink;
    for (const chunk of this.waiting.splice(0)) sink.write(chunk);
    this.waitingBytes = 0;
    if (this.eof) sink.end();
  }

  /** The run ended (or never started): nothing more is taken. */
  end(): void {
    this.closed = true;
    this.waiting = [];
    this.waitingBytes = 0;
    this.sink = undefined;
  }
}
