// The screen check's one tmux call, made without forking the caller (a helper, or the relay of a
// `tmux-run ssh` session): tmux started through the native vfork spawn (helper/run/spawn.c, as
// plain runs are) and its output read from the pipes, so no page table of the caller is copied
// for it. Read-only questions only (the same allow-list as every tmux call: src/core/os/tmux.ts).
// Where the addon is not built, Node's execFile. The answer is taken as soon as stdout holds all
// of it, when the caller can tell (`whole`: the screen check's, src/core/os/screen-questions.ts):
// the client's exit, and its pipes' end, come about 0.4 ms after it printed (BENCHMARKS.md).
import { accessSync, constants } from 'node:fs';
import { Socket } from 'node:net';
import { delimiter, isAbsolute, join } from 'node:path';
import { nativeSpawn, spawnKind } from './native-spawn.js';
import { assertReadOnly, tmuxQuery } from './tmux.js';

/**
 * The only variables tmux's client gets: the locale (tmux wants a UTF-8 one) and TERM. A client
 * sends the server each variable of its environment, one message each, which the server parses
 * and keeps for the client's life: a few microseconds apiece on both sides, for a call that uses
 * none of them (the socket is named with -S; display-message and capture-pane read no variable).
 */
export const SCREEN_ENV_NAMES = ['LC_ALL', 'LC_CTYPE', 'LANG', 'TERM'] as const;

/** The environment of the call, from `env`: only SCREEN_ENV_NAMES (pure). */
export function screenEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of SCREEN_ENV_NAMES) {
    const v = env[name];
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** Bounds of the call: its output, and how long tmux may take. */
const MAX_OUT = 4 << 20;
export const TIMEOUT_MS = 5000;

let tmuxPath: string | null | undefined;

/** tmux's absolute path (TMUX_RUN_TMUX, else PATH), found once; null when not found. */
export function tmuxBinary(env: NodeJS.ProcessEnv = process.env): string | null {
  if (tmuxPath !== undefined) return tmuxPath;
  const name = env.TMUX_RUN_TMUX || 'tmux';
  const dirs = isAbsolute(name) ? [''] : (env.PATH ?? '').split(delimiter).filter(Boolean);
  tmuxPath = null;
  for (const dir of dirs) {
    const path = dir === '' ? name : join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      tmuxPath = path;
      break;
    } catch {
      // not here
    }
  }
  return tmuxPath;
}

/** How a client ended: its exit status, or the signal that ended it. */
export interface Ended {
  code: number | null;
  signal: number | null;
}

/** Tells whether what stdout printed so far is the whole answer. */
export type WholeAnswer = (out: Buffer) => boolean;

/** A pipe's read end, read to its end (bounded) and closed, or closed sooner by `stop`; `seen` is shown what came so far at each chunk. */
function reader(fd: number, seen?: (chunks: readonly Buffer[]) => void): { data: Promise<Buffer>; stop(): void } {
  const chunks: Buffer[] = [];
  let size = 0;
  const s = new Socket({ fd, readable: true, writable: false });
  const data = new Promise<Buffer>((resolve, reject) => {
    s.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_OUT) return;
      chunks.push(c);
      seen?.(chunks);
    });
    s.on('error', reject);
    s.on('close', () => resolve(Buffer.concat(chunks)));
  });
  return { data, stop: () => s.destroy() };
}

/** How tmux ended: what it printed (status 0), or an Error with its first line of complaint. */
export function outcome(out: Buffer, err: Buffer, status: Ended): string {
  if (status.code === 0) return out.toString('utf8');
  const said = err.toString('utf8').trim().split('\n')[0];
  throw new Error(
    said || `tmux ended with ${status.signal !== null ? `signal ${status.signal}` : `status ${status.code}`}`,
  );
}

/**
 * What a started client answers, from its pipes' read ends and its end: what it printed once it
 * ended (outcome), or sooner, as soon as `whole()` says stdout holds all of it. Then both pipes are
 * closed at once, so that the client's exit, which follows (it is still reaped), wakes this
 * process once, not at each pipe's end too: that work came while the answer crossed a far pane's
 * link, and took the CPU from its sshd. Never rejects unhandled (a client let go unasked may end
 * any way).
 */
export function answerOf(
  stdoutFd: number,
  stderrFd: number,
  end: Promise<Ended>,
  whole: () => WholeAnswer | undefined = () => undefined,
): Promise<string> {
  let early: ((out: string) => void) | undefined;
  const soon = new Promise<string>((resolve) => (early = resolve));
  const seen = (chunks: readonly Buffer[]): void => {
    const test = whole();
    // Whole only when the last chunk ends a line: most chunks are not joined to be tested.
    if (!test || !early || chunks[chunks.length - 1]!.at(-1) !== 0x0a) return;
    const out = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    if (!test(out)) return;
    early(out.toString('utf8'));
    early = undefined;
    stdout.stop();
    stderr.stop();
  };
  const stdout = reader(stdoutFd, seen);
  const stderr = reader(stderrFd);
  const ended = Promise.all([stdout.data, stderr.data, end]).then((r) => outcome(...r));
  const answer = Promise.race([soon, ended]);
  void answer.catch(() => undefined);
  return answer;
}

/** SIGKILLs a tmux client of ours; one gone already (reaped, its end not told yet) is no error. */
export function killClient(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Nothing to end.
  }
}

/**
 * `tmux -S SOCKET ARGS...` (read-only questions) through the native spawn; resolves stdout, as
 * soon as `whole` says it is all there when given. Killed after TIMEOUT_MS unless it ended.
 */
export async function screenQuery(socket: string, args: string[], whole?: WholeAnswer): Promise<string> {
  const bin = tmuxBinary();
  if (!bin || spawnKind().kind !== 'native') return tmuxQuery(socket, args);
  assertReadOnly(args);
  const env = screenEnv();
  let exited!: (v: Ended) => void;
  const end = new Promise<Ended>((r) => (exited = r));
  const s = nativeSpawn([bin, '-S', socket, ...args], env, '/', (code, signal) => exited({ code, signal }));
  const timer = setTimeout(() => killClient(s.pid), TIMEOUT_MS);
  void end.then(() => clearTimeout(timer));
  return answerOf(s.stdoutFd, s.stderrFd, end, () => whole);
}

/** For the bench: which way the call goes. */
export const screenQueryKind = (): 'native' | 'node' =>
  tmuxBinary() && spawnKind().kind === 'native' ? 'native' : 'node';
