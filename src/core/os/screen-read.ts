// The screen check's one tmux call, made without forking the caller (a helper, or the relay of a
// `tmux-run ssh` session): tmux started through the native vfork spawn (helper/run/spawn.c, as
// plain runs are) and its output read from the pipes, so no page table of the caller is copied
// for it. Read-only questions only (the same allow-list as every tmux call: src/core/os/tmux.ts).
// Where the addon is not built, Node's execFile.
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

/** Reads a pipe's read end to its end (bounded), then closes it. */
export function drain(fd: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const s = new Socket({ fd, readable: true, writable: false });
    s.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_OUT) chunks.push(c);
    });
    s.on('error', reject);
    s.on('close', () => resolve(Buffer.concat(chunks)));
  });
}

/** How tmux ended: what it printed (status 0), or an Error with its first line of complaint. */
export function outcome(out: Buffer, err: Buffer, status: { code: number | null; signal: number | null }): string {
  if (status.code === 0) return out.toString('utf8');
  const said = err.toString('utf8').trim().split('\n')[0];
  throw new Error(
    said || `tmux ended with ${status.signal !== null ? `signal ${status.signal}` : `status ${status.code}`}`,
  );
}

/** `tmux -S SOCKET ARGS...` (read-only questions) through the native spawn; resolves stdout. */
export async function screenQuery(socket: string, args: string[]): Promise<string> {
  const bin = tmuxBinary();
  if (!bin || spawnKind().kind !== 'native') return tmuxQuery(socket, args);
  assertReadOnly(args);
  const env = screenEnv();
  let exited!: (v: { code: number | null; signal: number | null }) => void;
  const end = new Promise<{ code: number | null; signal: number | null }>((r) => (exited = r));
  const s = nativeSpawn([bin, '-S', socket, ...args], env, '/', (code, signal) => exited({ code, signal }));
  const timer = setTimeout(() => process.kill(s.pid, 'SIGKILL'), TIMEOUT_MS);
  try {
    return outcome(...(await Promise.all([drain(s.stdoutFd), drain(s.stderrFd), end])));
  } finally {
    clearTimeout(timer);
  }
}

/** For the bench: which way the call goes. */
export const screenQueryKind = (): 'native' | 'node' =>
  tmuxBinary() && spawnKind().kind === 'native' ? 'native' : 'node';
