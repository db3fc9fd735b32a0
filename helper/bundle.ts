// The helper's one-file bundle, dist/generated/helper.cjs, and V8's code cache of it,
// dist/generated/helper.code-cache (both made by scripts/build-helper.mjs): helper/helper.ts and
// everything it imports in one script, so that a start reads and compiles one file instead of
// resolving and loading some sixty modules (most of a start's cost beyond Node's own, see
// docs/light.md), and takes its compiled code from the cache rather than compiling it.
// Code is taken from either only when it is safe to, the rule bash's builtin follows
// (shell/tmux-run.bash): the file and its directory real ones (no symlink), the person's or
// root's, writable by nobody else, and of this build (the bundle's first line names the build
// id; the cache names the bundle's digest, this Node and these flags, which V8 does not check
// itself beyond its own version and flags and the source's length). Otherwise (missing, unsafe,
// stale, or TMUX_RUN_BUNDLE=off in the shell) the helper loads from its modules, the same code,
// and its log says why; a cache that is missing or of another Node or flags is only not used.
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { BUILD_ID } from '../src/core/protocol/build.js';
import { log } from './log/log.js';

/** What helper/helper.ts exports, from the bundle (helper/bundle-entry.ts) or from its module. */
export interface HelperModule {
  runHelper(): void;
}

interface BundleExports extends HelperModule {
  warmUp(): void;
}

/** The bundle and its cache beside the other generated files (dist/generated/ from dist/helper/). */
export const BUNDLE_PATH = fileURLToPath(new URL('../generated/helper.cjs', import.meta.url));
export const CODE_CACHE_PATH = fileURLToPath(new URL('../generated/helper.code-cache', import.meta.url));

/** The bundle's first line: which build it was made from. */
export const bundleHeader = (buildId: string): string => `// tmux-run helper bundle, build ${buildId}\n`;

/** The name under which a bundled module finds its own file's URL (import.meta.url before bundling). */
export const MODULE_URL_FUNCTION = '__tmuxRunModuleUrl';

/** The bundle's helper, or undefined: load it from its modules. */
export function loadBundled(): HelperModule | undefined {
  if (process.env.TMUX_RUN_BUNDLE === 'off') return undefined;
  let source: string;
  try {
    source = trustedFile(BUNDLE_PATH).toString('utf8');
    if (!source.startsWith(bundleHeader(BUILD_ID))) throw new Error(`${BUNDLE_PATH} is of another build`);
  } catch (e) {
    log(`loading the helper from its modules: ${(e as Error).message}; run 'npm run build'`);
    return undefined;
  }
  try {
    return evaluate(compile(source, cachedData(source))).exports;
  } catch (e) {
    // Its top level only defines (helper/helper.ts starts nothing until runHelper): the modules,
    // the same code, would say the same if it is theirs, and start if it is the bundle's.
    log(`loading the helper from its modules: its bundle failed to load: ${(e as Error).stack ?? String(e)}`);
    return undefined;
  }
}

/**
 * The code cache for the bundle, for the build: its top level run, as a start does, and its
 * warm-up (helper/warm.ts), so that what a start and a first run compile is in it.
 */
export function makeCodeCache(): Buffer {
  const source = readFileSync(BUNDLE_PATH, 'utf8');
  const script = compile(source, undefined);
  evaluate(script).exports.warmUp();
  return Buffer.concat([cacheKey(source), script.createCachedData()]);
}

/** The bundle as CommonJS would wrap it, compiled as one script (with its cache when given). */
function compile(source: string, cachedData: Buffer | undefined): Script {
  return new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: BUNDLE_PATH,
    ...(cachedData ? { cachedData } : {}),
  });
}

function evaluate(script: Script): { exports: BundleExports } {
  const module = { exports: {} as BundleExports };
  (script.runInThisContext() as (...args: unknown[]) => void)(
    module.exports,
    createRequire(BUNDLE_PATH),
    module,
    BUNDLE_PATH,
    dirname(BUNDLE_PATH),
  );
  return module;
}

/** What a cache is for: this bundle, this Node, these flags. */
function cacheKey(source: string): Buffer {
  return createHash('sha256')
    .update(source)
    .update(`\0${process.version}\0${process.arch}\0${process.execArgv.join(' ')}`)
    .digest();
}

/** The cache's code when it is a safe file made for this bundle, Node and flags. */
function cachedData(source: string): Buffer | undefined {
  let file: Buffer;
  try {
    file = trustedFile(CODE_CACHE_PATH);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') log(`not using the code cache: ${(e as Error).message}`);
    return undefined;
  }
  const key = cacheKey(source);
  return file.length > key.length && file.subarray(0, key.length).equals(key) ? file.subarray(key.length) : undefined;
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
