// A terminal run's own pseudo-terminal, on the helper's side: its master (what the run prints is
// read from it, its input written to it), the emulator that renders the screen (emulator.ts),
// whether the program has echo off (read through the master, polled while it runs), and the
// person's terminal while they are attached (tmux-run attach).
import tty from 'node:tty';
import type { TerminalSize } from '../../src/protocol/messages.js';
import { terminalEcho } from '../../src/os/native-spawn.js';
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

  constructor(readonly size: TerminalSize) {
    this.emulator = new Emulator(size);
  }

  /** The run started on this master: its stream (read and written), and the echo watch. */
  open(masterFd: number): tty.ReadStream {
    this.fd = masterFd;
    const master = new tty.ReadStream(masterFd);
    this.poll = setInterval(() => this.checkEcho(), ECHO_POLL_MS);
    this.poll.unref();
    return master;
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

  /** The run ended: no more echo watch (the master is closed with the run); the screen stays readable. */
  closed(): void {
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
    this.fd = -1;
  }

  /** The run is over (its output drained): the attached person is told. */
  finish(): void {
    this.closed();
    if (this.ended) return;
    this.ended = true;
    const person = this.person;
    this.person = undefined;
    // Parsed output first: the person's last frame comes after everything the run printed.
    person?.end();
  }
}
