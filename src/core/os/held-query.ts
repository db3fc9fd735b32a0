// The screen check's tmux call, started before its read: `tmux -S SOCKET source-file -`, through
// the native spawn, with its stdin a pipe of the caller's. Started when a request goes out to the
// shell, the client execs, loads, connects and introduces itself to the server while the shell's
// handler answers (about 2-3 ms of a 3-5 ms call), and its read-only questions are written to its
// stdin at once (the allow-list of every tmux call, src/core/os/tmux.ts; each argument
// single-quoted, which tmux's parser takes as it is: no formats, variables or `~` expanded in it,
// `#` no comment). tmux's source-file runs nothing of a file before it has read it to its end
// (tmux 3.3a, checked), so the pipe is closed only when the read is to begin: tmux reads the pane
// when it runs them, after that moment, exactly as a client started then would, and the only step
// left on the read's way is the end of stdin. Its answer is taken as soon as it is all there
// (src/core/os/screen-read.ts). A held client not asked is let go by killing it before its stdin
// ends: tmux then runs nothing of it. Where a held call fails and a direct one then works (a tmux
// whose source-file cannot read stdin), no client is held again (stopHolding). Two callers: a
// local pane's helper (helper/shell/screen/pane-screen.ts) and the relay of a `tmux-run ssh`
// session, which reads its pane for the far end (src/remote/relay-screen.ts).
import { closeSync, writeSync } from 'node:fs';
import { nativeSpawn, spawnKind } from './native-spawn.js';
import { assertReadOnly } from './tmux.js';
import { screenAnswered } from './screen-questions.js';
import {
  answerOf,
  killClient,
  screenEnv,
  screenQuery,
  TIMEOUT_MS,
  tmuxBinary,
  type Ended,
  type WholeAnswer,
} from './screen-read.js';

/** A client held for one read, its questions written. */
export interface HeldQuery {
  /** Still waiting for its read (not asked, not let go, not timed out). */
  readonly waiting: boolean;
  /**
   * The read begins: stdin ends, tmux runs the questions, and what it printed is resolved, as soon
   * as `whole` says it is all there when given, else once the client ended.
   */
  ask(whole?: WholeAnswer): Promise<string>;
  /** Lets the client go unasked (killed: nothing runs); nothing when it was asked already. */
  drop(): void;
}

/** How long a held client waits for its question before it is let go. */
export const HOLD_MS = TIMEOUT_MS;

/** How long a spare client (started after a read, for the next request) waits before it is let go. */
export const SPARE_MS = 60_000;

/**
 * A far end's pane (docs/remote.md): its relay holds the client, told by the far end. A client
 * held this long is taken as soon let go: told again, the relay starts a fresh one, and the far
 * end tells it again only after this long (helper/remote/far-screen.ts, src/remote/relay-screen.ts).
 */
export const SCREEN_HOLD_RENEW_MS = SPARE_MS / 2;

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

/**
 * Starts a held client of the tmux server at `socket` with the read-only questions `args` (`;`
 * between commands) written, let go unasked after `holdMs`; undefined where none can be held (or
 * `args` are not read-only questions: asked directly, the call then says why).
 */
export function holdQuery(socket: string, args: readonly string[], holdMs: number = HOLD_MS): HeldQuery | undefined {
  let text: string;
  try {
    text = asCommandLines(args);
  } catch {
    return undefined; // asked directly, the call says why
  }
  const bin = tmuxBinary();
  if (unsupported || !bin || spawnKind().kind !== 'native') return undefined;
  let exited!: (v: Ended) => void;
  let ended = false;
  const end = new Promise<Ended>((r) => (exited = r));
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
  let whole: WholeAnswer | undefined;
  const output = answerOf(s.stdoutFd, s.stderrFd, end, () => whole);
  let stdin = s.stdinFd;
  let failed: Error | undefined;
  try {
    writeSync(stdin, text);
  } catch (e) {
    // The client is gone already (EPIPE): the read is made directly.
    failed = e instanceof Error ? e : new Error(String(e));
  }
  const close = (): void => {
    if (stdin < 0) return;
    closeSync(stdin);
    stdin = -1;
  };
  const kill = (): void => {
    if (!ended) killClient(s.pid);
  };
  let timer = setTimeout(() => held.drop(), holdMs);
  timer.unref();
  // The bound on an asked client holds until it ended, also when its answer came before.
  void end.then(() => {
    ended = true;
    clearTimeout(timer);
  });
  const held: HeldQuery = {
    get waiting() {
      return stdin >= 0 && !ended && !failed;
    },
    ask(test) {
      whole = test;
      close(); // the read begins before this call's bookkeeping
      clearTimeout(timer);
      timer = setTimeout(kill, TIMEOUT_MS);
      return failed ? Promise.reject(failed) : output;
    },
    drop() {
      if (stdin < 0) return;
      clearTimeout(timer);
      // Before stdin ends: tmux runs nothing of what it read of it.
      kill();
      close();
    },
  };
  return held;
}

/**
 * Asks the read-only questions `args` of the tmux server at `socket`: through `held` (holding them
 * already) when there is one, else directly; the answer taken once `whole` says it is all there
 * (the screen check's questions by default: screenAnswered). A held call that fails is made again directly (later: after the same moment);
 * when that works, this tmux cannot serve a held client, and none is held from now on (`log` says so).
 */
export async function askHeld(
  held: HeldQuery | undefined,
  socket: string,
  args: readonly string[],
  log: (line: string) => void,
  asked: () => void = () => undefined,
  whole: WholeAnswer = screenAnswered,
): Promise<string> {
  if (!held) return screenQuery(socket, [...args], whole);
  try {
    const out = held.ask(whole);
    asked();
    return await out;
  } catch (e) {
    const out = await screenQuery(socket, [...args], whole);
    stopHolding();
    log(`the screen check holds no tmux client from now on: ${(e as Error).message}`);
    return out;
  }
}
