// The server's one-file bundle, dist/generated/server.cjs, and V8's code cache of it,
// dist/generated/server.code-cache (both made by scripts/build-helper.mjs, as the helper's):
// src/mcp/serve.ts and everything it imports (the MCP SDK, zod, the broker) in one script, loaded
// when the server's start (src/mcp/front.ts) hands the client to the SDK's server, at the first
// message the start does not answer itself (figures: `npm run bench`,
// scripts/bench/bench-initialize.ts). When it is trusted: src/core/os/script-bundle.ts. Otherwise
// the server loads from its modules, the same code, and says why on stderr.
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { BUILD_ID } from '../core/protocol/build.js';
import { loadScriptBundle, makeScriptBundleCache, type ScriptBundle } from '../core/os/script-bundle.js';

export { MODULE_URL_FUNCTION } from '../core/os/script-bundle.js';

/**
 * What src/mcp/front.ts hands the SDK's server: the client's bytes from the first one it leaves to
 * the SDK on, after the client's initialize again (under `replayed.id`; `replayed.answer` the line
 * it was answered) and its notifications/initialized, when the front answered them.
 */
export interface Handover {
  stdin: Readable;
  replayed?: { id: string; answer: string };
}

/** What src/mcp/serve.ts exports, from the bundle (src/mcp/bundle-entry.ts) or from its module. */
export interface ServeModule {
  serve(enabled: Set<string>, log: (message: string) => void, handover: Handover): Promise<void>;
}

interface BundleExports extends ServeModule {
  warmUp(): Promise<void>;
}

/** The bundle and its cache beside the other generated files (dist/generated/ from dist/src/mcp/). */
export const BUNDLE_PATH = fileURLToPath(new URL('../../generated/server.cjs', import.meta.url));
export const CODE_CACHE_PATH = fileURLToPath(new URL('../../generated/server.code-cache', import.meta.url));

/** The bundle's first line: which build it was made from. */
export const bundleHeader = (buildId: string): string => `// tmux-run server bundle, build ${buildId}\n`;

const SERVER_BUNDLE: ScriptBundle = {
  name: 'the server',
  path: BUNDLE_PATH,
  cachePath: CODE_CACHE_PATH,
  header: bundleHeader(BUILD_ID),
};

/**
 * The server's V8 flags, set before anything big is allocated (and before the code cache is
 * made: V8 takes a cache only under the flags it was made with). V8 grows the young generation
 * from 2 MB to 32 MB under a steady stream of calls (the broker was 65 MB at start and 108 MB
 * after 1000 runs); kept at its initial size, a run's garbage is still collected young, for a
 * few scavenges more.
 */
export function setServerFlags(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}

/** The bundle's server, or undefined: load it from its modules. */
export function loadBundled(log: (message: string) => void): ServeModule | undefined {
  return loadScriptBundle<BundleExports>(SERVER_BUNDLE, log);
}

/** The code cache for the bundle, for the build: its top level run, then its warm-up (src/mcp/serve.ts). */
export function makeCodeCache(): Promise<Buffer> {
  setServerFlags();
  return makeScriptBundleCache<BundleExports>(SERVER_BUNDLE, (b) => b.warmUp());
}
