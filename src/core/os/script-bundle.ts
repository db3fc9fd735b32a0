// A one-file bundle of a process's code and V8's code cache of it, loaded instead of its modules
// (the helper: helper/bundle.ts; the MCP server: src/mcp/bundle.ts; both made by `npm run build`,
// scripts/build-helper.mjs): a start then reads and compiles one file instead of resolving and
// loading dozens of modules, and takes its compiled code from the cache rather than compiling it.
// Code is taken from either only when it is safe to, the rule bash's builtin follows
// (shell/tmux-run.bash): the file and its directory real ones (no symlink), the person's or
// root's, writable by nobody else, and of this build (the bundle's first line names the build
// id; the cache holds the bundle's very text, this Node and these flags, which V8 does not check
// itself beyond its own version and flags and the source's length: compared byte for byte, which
// costs a start a fraction of a millisecond where a digest cost it node:crypto's load and the
// hash, some 8 ms of CPU for the server's bundle). Otherwise (missing, unsafe,
// stale, or TMUX_RUN_BUNDLE=off) the caller loads from its modules, the same code; a cache that is
// missing or of another Node or flags is only not used.
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

/** One bundle: its file, its cache's file, and the first line that says which build made it. */
export interface ScriptBundle {
  /** What it holds, for the log ('the helper'). */
  name: string;
  path: string;
  cachePath: string;
  header: string;
}

/** The name under which a bundled module finds its own file's URL (import.meta.url before bundling). */
export const MODULE_URL_FUNCTION = '__tmuxRunModuleUrl';

/** The bundle's exports, or undefined (said why through `log`): load from the modules. */
export function loadScriptBundle<T>(b: ScriptBundle, log: (message: string) => void): T | undefined {
  if (process.env.TMUX_RUN_BUNDLE === 'off') return undefined;
  let bytes: Buffer;
  let source: string;
  try {
    bytes = trustedFile(b.path);
    source = bytes.toString('utf8');
    if (!source.startsWith(b.header)) throw new Error(`${b.path} is of another build`);
  } catch (e) {
    log(`loading ${b.name} from its modules: ${(e as Error).message}; run 'npm run build'`);
    return undefined;
  }
  try {
    return evaluate<T>(b, compile(b, source, cachedData(b, bytes, log))).exports;
  } catch (e) {
    // A bundle's top level only defines: the modules, the same code, would say the same if it is
    // theirs, and start if it is the bundle's.
    log(`loading ${b.name} from its modules: its bundle failed to load: ${(e as Error).stack ?? String(e)}`);
    return undefined;
  }
}

/**
 * The code cache for the bundle, for the build: its top level run, then `warm` (what a start and
 * a first call run), so that what they compile is in it.
 */
export async function makeScriptBundleCache<T>(b: ScriptBundle, warm: (exports: T) => unknown): Promise<Buffer> {
  const bytes = readFileSync(b.path);
  const script = compile(b, bytes.toString('utf8'), undefined);
  await warm(evaluate<T>(b, script).exports);
  return Buffer.concat([cacheKey(bytes), bytes, script.createCachedData()]);
}

/** The bundle as CommonJS would wrap it, compiled as one script (with its cache when given). */
function compile(b: ScriptBundle, source: string, cachedData: Buffer | undefined): Script {
  return new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: b.path,
    ...(cachedData ? { cachedData } : {}),
  });
}

function evaluate<T>(b: ScriptBundle, script: Script): { exports: T } {
  const module = { exports: {} as T };
  (script.runInThisContext() as (...args: unknown[]) => void)(
    module.exports,
    createRequire(b.path),
    module,
    b.path,
    dirname(b.path),
  );
  return module;
}

/** What a cache is for, before the bundle's text it holds: the text's length, this Node, these flags. */
function cacheKey(bytes: Buffer): Buffer {
  return Buffer.from(`${bytes.length}\0${process.version}\0${process.arch}\0${process.execArgv.join(' ')}\0`);
}

/** The cache's code when it is a safe file made for this bundle (`bytes`), Node and flags. */
function cachedData(b: ScriptBundle, bytes: Buffer, log: (message: string) => void): Buffer | undefined {
  let file: Buffer;
  try {
    file = trustedFile(b.cachePath);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') log(`not using the code cache: ${(e as Error).message}`);
    return undefined;
  }
  const key = cacheKey(bytes);
  const code = key.length + bytes.length;
  return file.length > code && file.subarray(0, key.length).equals(key) && file.subarray(key.length, code).equals(bytes)
    ? file.subarray(code)
    : undefined;
}

/**
 * A file's content when it may be run: a regular file (opened without following a symlink) in a
 * real directory, both the person's or root's and writable by nobody else.
 */
function trustedFile(path: string): Buffer {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    for (const [name, st] of [
      [path, fstatSync(fd)],
      [dirname(path), lstatSync(dirname(path))],
    ] as const) {
      if (!(name === path ? st.isFile() : st.isDirectory())) throw new Error(`${name} is not a real file or directory`);
      if ((st.uid !== 0 && st.uid !== process.geteuid?.()) || (st.mode & 0o022) !== 0)
        throw new Error(
          `${name} is not safe to load from (owner uid ${st.uid}, mode ${(st.mode & 0o7777).toString(8)}: it must be yours or root's and writable by nobody else)`,
        );
    }
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}
