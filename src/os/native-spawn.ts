// The helper's spawn of a plain run without forking itself (helper/native/spawn.c, built by
// `npm run build` when a C compiler and Node's headers are there). Node 20's spawn forks the
// whole helper (page tables of its heap, then copy-on-write faults: most of a plain run's cost,
// BENCHMARKS.md); posix_spawn shares the helper's memory until the exec. Absent (no compiler at
// build time, or `TMUX_RUN_SPAWN=node` in the enrolled shell's environment), runs use Node's spawn,
// with the same semantics: a session of its own, stdin /dev/null, two pipes, default signals.
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** What the addon exports (helper/native/spawn.c). */
interface Addon {
  /** argv, env, cwd: NUL-terminated strings; onExit(code, signal): code -1 when signaled, both -1 when unknown. */
  spawn(
    argv: Buffer,
    env: Buffer,
    cwd: Buffer,
    onExit: (code: number, signal: number) => void,
  ): [number, number, number];
}

/** A started process: its pid (also its session and group) and the read ends of its stdout and stderr. */
export interface Spawned {
  pid: number;
  stdoutFd: number;
  stderrFd: number;
}

/** How a plain run is spawned: this addon, or Node's child_process. */
export type SpawnKind = 'native' | 'node';

let addon: Addon | null | undefined;
let loadError: string | undefined;

function load(): Addon | null {
  if (addon !== undefined) return addon;
  try {
    // From src/os/ and from dist/src/os/ alike, generated/ is two levels up.
    addon = createRequire(import.meta.url)('../../generated/spawn.node') as Addon;
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

/** The walls' waiter in C as built (helper/native/walls-waiter.c): generated/ two levels up, from src/os/ and dist/src/os/ alike. */
export const NATIVE_WAITER = fileURLToPath(new URL('../../generated/walls-waiter', import.meta.url));

/** The waiter a sandbox's walls run (helper/sandbox/waiter.ts): the C one, or perl and why (`unbuilt`: not chosen, it is missing). */
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
): Spawned {
  const a = load();
  if (!a) throw new Error(`the native spawn is not built (${loadError})`);
  const entries = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  if ([...argv, ...entries, cwd].some((s) => s.includes('\0'))) {
    throw Object.assign(new Error('an argument, the environment or the cwd holds a NUL byte'), { code: 'EINVAL' });
  }
  const [pid, stdoutFd, stderrFd] = a.spawn(nul(argv), nul(entries, encoding), nul([cwd], encoding), (code, signal) =>
    onExit(code >= 0 ? code : null, signal >= 0 ? signal : null),
  );
  return { pid, stdoutFd, stderrFd };
}
