// The helper's spawn of a plain run without forking itself (helper/run/spawn.c, built by
// `npm run build` when a C compiler and Node's headers are there). Node 20's spawn forks the
// whole helper (page tables of its heap, then copy-on-write faults: most of a plain run's cost,
// BENCHMARKS.md); posix_spawn shares the helper's memory until the exec. Absent (no compiler at
// build time, or `TMUX_RUN_SPAWN=node` in the enrolled shell's environment), runs use Node's spawn,
// with the same semantics: a session of its own, stdin /dev/null, two pipes, default signals.
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** What the addon exports (helper/run/spawn.c). */
interface Addon {
  /**
   * argv, env, cwd: NUL-terminated strings; onExit(code, signal): code -1 when signaled, both -1
   * when unknown; mode 0 stdin /dev/null, 1 a pipe, 2 a pseudo-terminal of cols x rows.
   */
  spawn(
    argv: Buffer,
    env: Buffer,
    cwd: Buffer,
    onExit: (code: number, signal: number) => void,
    mode?: number,
    cols?: number,
    rows?: number,
  ): [number, number, number, number];
  /** Whether a terminal's echo is on, read through its master; null when it cannot be read. */
  echo(masterFd: number): boolean | null;
  /** A second descriptor of the same open file (close-on-exec), or -1. */
  dup(fd: number): number;
  /** Swaps two paths at once (renameat2 RENAME_EXCHANGE): 0, or the errno. */
  exchange(a: Buffer, b: Buffer): number;
}

/** A started process: its pid (also its session and group) and the helper's ends of its stdio (-1: none). */
export interface Spawned {
  pid: number;
  /** stdout's read end; for a terminal, the terminal's master (also stdinFd). */
  stdoutFd: number;
  /** stderr's read end; -1 for a terminal (its stderr is the terminal). */
  stderrFd: number;
  /** stdin's write end (a pipe, or a terminal's master); -1 when stdin is /dev/null. */
  stdinFd: number;
}

/** What a run's stdin is: /dev/null, a pipe the helper writes, or a pseudo-terminal of its own. */
export type StdinSpec = { kind: 'closed' } | { kind: 'pipe' } | { kind: 'terminal'; cols: number; rows: number };

const STDIN_MODE = { closed: 0, pipe: 1, terminal: 2 } as const;

/** How a plain run is spawned: this addon, or Node's child_process. */
export type SpawnKind = 'native' | 'node';

let addon: Addon | null | undefined;
let loadError: string | undefined;

function load(): Addon | null {
  if (addon !== undefined) return addon;
  try {
    // From src/core/os/ and from dist/src/core/os/ alike, generated/ is three levels up.
    addon = createRequire(import.meta.url)('../../../generated/spawn.node') as Addon;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    loadError = err.code === 'MODULE_NOT_FOUND' ? 'generated/spawn.node is missing' : err.message.split('\n')[0];
    addon = null;
  }
  return addon;
}

/** The spawn this helper uses for plain runs, and why when it is Node's (`unbuilt`: not chosen, the addon is missing). */
export function spawnKind(env: NodeJS.ProcessEnv = process.env): { kind: SpawnKind; why?: string; unbuilt?: true } {
  if (env.TMUX_RUN_SPAWN === 'node') return { kind: 'node', why: 'TMUX_RUN_SPAWN=node' };
  return load()
    ? { kind: 'native' }
    : { kind: 'node', why: `the native spawn is not built (${loadError})`, unbuilt: true };
}

/** The walls' waiter in C as built (helper/walls/walls-waiter.c): generated/ three levels up, from src/core/os/ and dist/src/core/os/ alike. */
export const NATIVE_WAITER = fileURLToPath(new URL('../../../generated/walls-waiter', import.meta.url));

/** The waiter a sandbox's walls run (helper/walls/waiter.ts): the C one, or perl and why (`unbuilt`: not chosen, it is missing). */
export function waiterKind(
  env: NodeJS.ProcessEnv = process.env,
  path: string = NATIVE_WAITER,
): { kind: 'native' | 'perl'; why?: string; unbuilt?: true } {
  if (env.TMUX_RUN_SPAWN === 'node') return { kind: 'perl', why: 'TMUX_RUN_SPAWN=node' };
  try {
    accessSync(path, constants.X_OK);
    return { kind: 'native' };
  } catch {
    return { kind: 'perl', why: 'the native waiter is not built (generated/walls-waiter is missing)', unbuilt: true };
  }
}

const nul = (parts: readonly string[], encoding: 'utf8' | 'latin1' = 'utf8'): Buffer =>
  Buffer.from(parts.map((p) => `${p}\0`).join(''), encoding);

/**
 * Starts `argv` (argv[0] an absolute path) in `cwd` with exactly `env`, in a session of its own;
 * `onExit` is called once with its status. Throws an Error whose `code` is the errno's name
 * (ENOENT, E2BIG, ...) when it could not be started.
 */
export function nativeSpawn(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  cwd: string,
  onExit: (code: number | null, signal: number | null) => void,
  /** latin1: env and cwd hold one character per byte (a snapshot that is not UTF-8), handed on exactly. */
  encoding: 'utf8' | 'latin1' = 'utf8',
  stdin: StdinSpec = { kind: 'closed' },
): Spawned {
  const a = load();
  if (!a) throw new Error(`the native spawn is not built (${loadError})`);
  const entries = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  if ([...argv, ...entries, cwd].some((s) => s.includes('\0'))) {
    throw Object.assign(new Error('an argument, the environment or the cwd holds a NUL byte'), { code: 'EINVAL' });
  }
  const size = stdin.kind === 'terminal' ? [stdin.cols, stdin.rows] : [80, 24];
  const [pid, stdoutFd, stderrFd, stdinFd] = a.spawn(
    nul(argv),
    nul(entries, encoding),
    nul([cwd], encoding),
    (code, signal) => onExit(code >= 0 ? code : null, signal >= 0 ? signal : null),
    STDIN_MODE[stdin.kind],
    size[0],
    size[1],
  );
  return { pid, stdoutFd, stderrFd, stdinFd };
}

/** Whether the terminal behind `masterFd` has echo on (null: unknown, or no native part). */
export function terminalEcho(masterFd: number): boolean | null {
  return load()?.echo(masterFd) ?? null;
}

/** A second descriptor of the open file behind `fd` (close-on-exec), or -1 (also without the native part). */
export function dupFd(fd: number): number {
  return load()?.dup(fd) ?? -1;
}

/**
 * Swaps the files at two paths at once (renameat2 RENAME_EXCHANGE): true when done; false without
 * the addon or where the filesystem cannot (the caller renames instead).
 */
export function exchangePaths(a: string, b: string): boolean {
  const addon = load();
  if (!addon) return false;
  return addon.exchange(Buffer.from(`${a}\0`), Buffer.from(`${b}\0`)) === 0;
}
