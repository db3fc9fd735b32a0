// The helper's one-file bundle, dist/generated/helper.cjs, and V8's code cache of it,
// dist/generated/helper.code-cache (both made by scripts/build-helper.mjs): helper/helper.ts and
// everything it imports in one script, so that a start reads and compiles one file instead of
// resolving and loading some sixty modules (most of a start's cost beyond Node's own, see
// docs/light.md), and takes its compiled code from the cache rather than compiling it. When it
// is trusted and what else it checks: src/core/os/script-bundle.ts. Otherwise (missing, unsafe, stale,
// or TMUX_RUN_BUNDLE=off in the shell) the helper loads from its modules, the same code, and its
// log says why.
import { fileURLToPath } from 'node:url';
import { BUILD_ID } from '../src/core/protocol/build.js';
import { loadScriptBundle, makeScriptBundleCache, type ScriptBundle } from '../src/core/os/script-bundle.js';
import { log } from './log/log.js';

export { MODULE_URL_FUNCTION } from '../src/core/os/script-bundle.js';

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

const HELPER_BUNDLE: ScriptBundle = {
  name: 'the helper',
  path: BUNDLE_PATH,
  cachePath: CODE_CACHE_PATH,
  header: bundleHeader(BUILD_ID),
};

/** The bundle's helper, or undefined: load it from its modules. */
export function loadBundled(): HelperModule | undefined {
  return loadScriptBundle<BundleExports>(HELPER_BUNDLE, log);
}

/**
 * The code cache for the bundle, for the build: its top level run, as a start does, and its
 * warm-up (helper/warm.ts), so that what a start and a first run compile is in it.
 */
export function makeCodeCache(): Promise<Buffer> {
  return makeScriptBundleCache<BundleExports>(HELPER_BUNDLE, (b) => b.warmUp());
}
