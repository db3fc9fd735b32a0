// A terminal run's own pseudo-terminal, on the helper's side: its master (what the run prints is
// read from it, its input written to it), the emulator that renders the screen (emulator.ts),
// whether the program has echo off (read through the master, polled while it runs), and the
// person's terminal while they are attached (tmux-run attach).
import { closeSync, readSync } from 'node:fs';
import tty from 'node:tty';
import type { TerminalSize } from '../../src/core/protocol/messages.js';
import { dupFd, terminalEcho } from '../../src/core/os/native-spawn.js';
import { Emulator, type ScreenView } from './emulator.js';

/** The TERM a terminal run gets: what its emulator (@xterm/headless, xterm.js) speaks. */
export const TERMINAL_TERM = 'xterm-256color';

/** A terminal run's environment: TERM the emulator speaks; COLUMNS and LINES left to the terminal's size. */
export function terminalEnv(env: Record<string, string>): Record<string, string> {
  const { COLUMNS: _c, LINES: _l, ...rest } = env;
  return { ...rest, TERM: TERMINAL_TERM };
}

/** How often a running terminal's echo flag is read (a password prompt shows within this). */
export const ECHO_POLL_MS = 200;

export class RunTerminal {
  /** The program has echo on (false: a password prompt, say). */
  echo = true;
  /** Called when echo turns off or on again (the dispatch sets it once the run starts). */
  onEcho: ((echo: boolean) => void) | undefined;
  /** The run has ended: its output is complete. */
  ended = false;
  /** Where the run's output goes while the person is attached, and who is told of its end. */
  private person: { out: (chunk: Buffer) => void; end: () => void } | undefined;
  private readonly emulator: Emulator;
  private poll: NodeJS.Timeout | undefined;
  private fd = -1;
  /**
   * A second descriptor of the master, held until the run has ended (finish): the master's stream
   * closes its own at the end of output (EIO once the run closed the terminal), and the last close
   * of a master hangs the terminal up, which SIGHUPs its session: a program that closes its
   * descriptors before it exits (cat, at ^D) would die of it. Echo is read through it too.
   */
  private hold = -1;

  constructor(readonly size: TerminalSize) {
    this.emulator = new Emulator(size);
  }

  /**
   * The run started on this master: its stream (read and written), and the echo watch. `late` gets
   * what is read after the stream's end: libuv ends a stream at a hang-up once a read came back
   * short, and the kernel may not have moved the run's last bytes into the master by then.
   */
  open(masterFd: number, late: (chunk: Buffer) => void): tty.ReadStream {
    this.hold = dupFd(masterFd);
    this.fd = this.hold >= 0 ? this.hold : masterFd;
    const master = new tty.ReadStream(masterFd);
    master.once('end', () => this.drain(late));
    this.poll = setInterval(() => this.checkEcho(), ECHO_POLL_MS);
    this.poll.unref();
    return master;
  }

  /** Reads what is left on the master (until EIO: the run's terminal is closed, all of it read); at most 4 MiB. */
  private drain(late: (chunk: Buffer) => void): void {
    if (this.hold < 0) return;
    const buf = Buffer.allocUnsafe(65536);
    for (let i = 0; i < 64; i++) {
      let n: number;
      try {
        n = readSync(this.hold, buf, 0, buf.length, null);
      } catch {
        return; // EIO: nothing more; EAGAIN: the terminal is still open, and its stream was read to the end
      }
      if (n <= 0) return;
      late(Buffer.from(buf.subarray(0, n)));
    }
  }

  /** Reads the echo flag now (also before a screen or a pending result is answered). */
  checkEcho(): void {
    if (this.fd < 0) return;
    const on = terminalEcho(this.fd);
    if (on === null || on === this.echo) return;
    this.echo = on;
    this.onEcho?.(on);
  }

  /** What the run printed: to the emulator, and to the person when attached. */
  output(chunk: Buffer): void {
    this.emulator.write(chunk);
    this.person?.out(chunk);
  }

  get attached(): boolean {
    return this.person !== undefined;
  }

  /**
   * The person takes the terminal over: the redraw of its screen now, then `out` gets what the
   * run prints and `end` is called when it ends. Undefined when someone already has it.
   */
  attach(person: { out: (chunk: Buffer) => void; end: () => void }): Promise<Buffer> | undefined {
    if (this.person) return undefined;
    this.person = person;
    return this.emulator.redraw();
  }

  detach(person: object): void {
    if (this.person === person) this.person = undefined;
  }

  view(): Promise<ScreenView> {
    this.checkEcho();
    return this.emulator.view();
  }

  /** The master's stream closed: without a held descriptor, no more echo watch (its own is closed). */
  closed(): void {
    if (this.hold < 0) this.release();
  }

  /** No more echo watch, and the held master closed (the run has ended); the screen stays readable. */
  private release(): void {
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
    this.fd = -1;
    if (this.hold >= 0) closeSync(this.hold);
    this.hold = -1;
  }

  /** The run is over (its output drained): the attached person is told. */
  finish(): void {
    this.release();
    if (this.ended) return;
    this.ended = true;
    const person = this.person;
    this.person = undefined;
    // Parsed output first: the person's last frame comes after everything the run printed.
    person?.end();
  }
}
