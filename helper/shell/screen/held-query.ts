// The screen check's tmux call, started before its question: `tmux -S SOCKET source-file -`,
// through the native spawn, with its stdin a pipe of the helper's. Started when a request goes
// out to the shell, the client execs, loads, connects and introduces itself to the server while
// the shell's handler answers (about 2-3 ms of a 3-5 ms call); the server then waits for the
// client's stdin. The questions are written there, and the pipe closed, only when the read is to
// begin (helper/shell/screen/pane-screen.ts): tmux reads the pane when it runs them, after that moment,
// exactly as a client started then would. Only read-only questions are written (the allow-list
// of every tmux call, src/core/os/tmux.ts), each argument single-quoted, which tmux's parser takes
// as it is (no formats, variables or `~` expanded in it, `#` no comment). A held client not
// asked is let go with nothing to run (it exits at once). Where a held call fails and a direct
// one then works (a tmux whose source-file cannot read stdin), no client is held again
// (stopHolding).
import { closeSync, writeSync } from 'node:fs';
import { nativeSpawn, spawnKind } from '../../../src/core/os/native-spawn.js';
import { assertReadOnly } from '../../../src/core/os/tmux.js';
import { drain, outcome, screenEnv, TIMEOUT_MS, tmuxBinary } from './screen-read.js';

/** A client held for one question. */
export interface HeldQuery {
  /** Still waiting for its question (not asked, not let go, not timed out). */
  readonly waiting: boolean;
  /** Writes the read-only questions `args` (`;` between commands) and resolves what tmux printed. */
  ask(args: readonly string[]): Promise<string>;
  /** Lets the client go unasked (nothing runs); nothing when it was asked already. */
  drop(): void;
}

/** How long a held client waits for its question before it is let go. */
export const HOLD_MS = TIMEOUT_MS;

let unsupported = false;

/** No client is held again by this helper (a held call failed where a direct one worked). */
export function stopHolding(): void {
  unsupported = true;
}

/** `args` as lines of tmux's command syntax, each argument single-quoted (pure); throws on what cannot be. */
export function asCommandLines(args: readonly string[]): string {
  assertReadOnly(args);
  if (args.some((a) => /['\n\r\0]/.test(a))) throw new Error('an argument cannot be quoted for tmux');
  return `${args.map((a) => (a === ';' ? '\n' : `'${a}'`)).join(' ')}\n`.replace(/ ?\n ?/g, '\n');
}

/** Starts a held client of the tmux server at `socket`, let go unasked after `holdMs`; undefined where none can be held. */
export function holdQuery(socket: string, holdMs: number = HOLD_MS): HeldQuery | undefined {
  const bin = tmuxBinary();
  if (unsupported || !bin || spawnKind().kind !== 'native') return undefined;
  let exited!: (v: { code: number | null; signal: number | null }) => void;
  let ended = false;
  const end = new Promise<{ code: number | null; signal: number | null }>((r) => (exited = r));
  void end.then(() => (ended = true));
  let s: ReturnType<typeof nativeSpawn>;
  try {
    s = nativeSpawn(
      [bin, '-S', socket, 'source-file', '-'],
      screenEnv(),
      '/',
      (code, signal) => exited({ code, signal }),
      'utf8',
      {
        kind: 'pipe',
      },
    );
  } catch {
    return undefined;
  }
  const output = Promise.all([drain(s.stdoutFd), drain(s.stderrFd), end]);
  let stdin = s.stdinFd;
  const close = (text: string): void => {
    if (stdin < 0) return;
    try {
      if (text) writeSync(stdin, text);
    } finally {
      closeSync(stdin);
      stdin = -1;
    }
  };
  let timer = setTimeout(() => held.drop(), holdMs);
  timer.unref();
  const held: HeldQuery = {
    get waiting() {
      return stdin >= 0 && !ended;
    },
    async ask(args) {
      clearTimeout(timer);
      timer = setTimeout(() => process.kill(s.pid, 'SIGKILL'), TIMEOUT_MS);
      try {
        close(asCommandLines(args));
        return outcome(...(await output));
      } finally {
        clearTimeout(timer);
      }
    },
    drop() {
      clearTimeout(timer);
      close('');
      void output.catch(() => undefined);
    },
  };
  return held;
}
