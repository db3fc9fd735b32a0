// Bundles the compiled helper (dist/helper/helper.js and everything it imports, node_modules'
// msgpackr and ajv's runtime included) into one CommonJS script, dist/generated/helper.cjs, which
// helper/main.ts loads instead of some sixty modules (see helper/bundle.ts for when it is
// trusted), and makes V8's code cache of it, dist/generated/helper.code-cache: this script runs
// itself again under the helper's node flags (scripts/helper-flags.mjs; V8 takes a cache only
// under the flags it was made with), compiles the bundle and runs its top level as a start does.
// The MCP server the same way (dist/src/mcp/serve.js, the MCP SDK and zod included, into
// dist/generated/server.cjs and server.code-cache, loaded when src/mcp/front.ts hands the client
// over: src/mcp/bundle.ts), its cache made under the server's V8 flag (setServerFlags).
// Run by `npm run build` after tsc. Each bundled module still finds its own file:
// `import.meta.url` becomes the URL of its file in dist/ (the generated files, the native parts
// and node_modules are found from there, and loaded at run time as before). Optional: without
// esbuild (a devDependency) it says so and each loads from its modules (slower to start, the
// same code). `TMUX_RUN_BUNDLE=off npm run build` builds neither.
import { readFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

/**
 * Each bundle: its entry, the module that knows its paths (and makes its cache), the node flags it
 * starts under, and the generated modules (src/core/protocol/generated.ts requires them at run time)
 * bundled too so that their code comes from the cache; any other still loads from its file.
 */
const BUNDLES = {
  helper: {
    entry: join(dist, 'helper', 'bundle-entry.js'),
    module: join(dist, 'helper', 'bundle.js'),
    flags: async () => (await import('./helper-flags.mjs')).helperFlags(),
    generated: ['wire-validators', 'build-id', 'msgpackr'],
  },
  server: {
    entry: join(dist, 'src', 'mcp', 'bundle-entry.js'),
    module: join(dist, 'src', 'mcp', 'bundle.js'),
    flags: async () => [],
    // Not the contract's validators: loaded at a call's first check, not at start.
    generated: ['wire-validators', 'build-id', 'lean-schemas', 'mcp-versions', 'msgpackr'],
    zodEnglishOnly: true,
  },
  // What bin/tmux-run-mcp.js requires: src/mcp/main.ts (the arguments, then the server's start,
  // src/mcp/front.ts, which answers initialize and tools/list itself and loads the server's bundle
  // or, without it, its modules, when it hands the client over), CommonJS, so that Node starts no
  // ES module loader. No cache (about 54 KB).
  'server-main': {
    entry: join(dist, 'src', 'mcp', 'main.js'),
    outfile: join(dist, 'generated', 'server-main.cjs'),
    external: { './serve.js': '../src/mcp/serve.js' },
    generated: ['build-id', 'lean-schemas', 'mcp-versions'],
  },
};

if (process.argv[2] === '--code-cache') {
  // Under the bundle's flags (below): the cache, 0644 like the bundle.
  const { CODE_CACHE_PATH, makeCodeCache } = await import(BUNDLES[process.argv[3]].module);
  writeFileSync(CODE_CACHE_PATH, await makeCodeCache(), { mode: 0o644 });
  chmodSync(CODE_CACHE_PATH, 0o644);
  process.exit(0);
}
const { BUILD_ID } = createRequire(import.meta.url)(join(dist, 'generated', 'build-id.cjs'));
const paths = {};
for (const [name, b] of Object.entries(BUNDLES)) {
  paths[name] = b.module
    ? await import(b.module)
    : { BUNDLE_PATH: b.outfile, bundleHeader: () => '', MODULE_URL_FUNCTION: paths.server.MODULE_URL_FUNCTION };
  for (const file of [paths[name].BUNDLE_PATH, paths[name].CODE_CACHE_PATH]) if (file) rmSync(file, { force: true });
}

const skip = (why) =>
  process.stderr.write(
    `build-helper: ${why}; the helper and the server will load from their modules (slower to start)\n`,
  );
if (process.env.TMUX_RUN_BUNDLE === 'off') {
  skip('TMUX_RUN_BUNDLE=off');
  process.exit(0);
}
let esbuild;
try {
  esbuild = await import('esbuild');
} catch (e) {
  skip(`esbuild cannot be loaded (${e.code ?? e.message})`);
  process.exit(0);
}

// import.meta.url of a module in dist/, as the bundle (in dist/generated/) computes it.
const moduleUrl = (MODULE_URL_FUNCTION, generated) => ({
  name: 'module-url',
  setup(build) {
    build.onLoad({ filter: /\.js$/ }, async (args) => {
      if (relative(dist, args.path).startsWith('..')) return undefined;
      const text = await readFile(args.path, 'utf8');
      const file = relative(dist, args.path);
      const own = text.replaceAll('import.meta.url', `${MODULE_URL_FUNCTION}(${JSON.stringify(file)})`);
      return {
        contents: file === join('src', 'core', 'protocol', 'generated.js') ? generatedLoader(own, generated) : own,
        loader: 'js',
      };
    });
  },
});
// Modules left out of a bundle, imported from their file in dist/ at run time (the path given
// is from dist/generated/).
const externals = (paths) => ({
  name: 'externals',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, (args) =>
      Object.hasOwn(paths, args.path) ? { path: paths[args.path], external: true } : undefined,
    );
  },
});
// zod's `locales` namespace with English alone (the locale zod sets itself, which is all that the
// MCP SDK and tmux-run use): its forty-odd other locales were over a quarter of the server's
// bundle, read, compiled and run at every start. zod's own package is untouched; only what the
// bundle holds of it.
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|mini|core)$/.test(args.resolveDir)
        ? { path: join(args.resolveDir, '..', 'locales', 'index.js'), namespace: 'zod-english-only' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: `export { default as en } from './en.js';\n`,
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};
const generatedLoader = (text, generated) => {
  const renamed = text.replace('export function loadGenerated(', 'function loadGeneratedFile(');
  if (renamed === text) throw new Error('build-helper: src/core/protocol/generated.ts no longer exports loadGenerated');
  const id = (n) => `generated_${n.replace(/-/g, '_')}`;
  const imports = generated.map((n) => `import * as ${id(n)} from '../../../generated/${n}.cjs';`);
  const cases = generated.map((n) => `    case '${n}': return ${id(n)};`);
  return `${imports.join('\n')}\n${renamed}\nexport function loadGenerated(name) {\n  switch (name) {\n${cases.join('\n')}\n    default: return loadGeneratedFile(name);\n  }\n}\n`;
};

for (const [name, b] of Object.entries(BUNDLES)) {
  const { BUNDLE_PATH, CODE_CACHE_PATH, bundleHeader, MODULE_URL_FUNCTION } = paths[name];
  const result = await esbuild.build({
    entryPoints: [b.entry],
    outfile: BUNDLE_PATH,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Whitespace only (names kept): the helper holds the source of its code in memory.
    minifyWhitespace: true,
    plugins: [
      moduleUrl(MODULE_URL_FUNCTION, b.generated),
      externals(b.external ?? {}),
      ...(b.zodEnglishOnly ? [zodEnglishOnly] : []),
    ],
    logLevel: 'warning',
    banner: {
      js:
        bundleHeader(BUILD_ID) +
        '"use strict";\n' +
        `const ${MODULE_URL_FUNCTION} = (file) => require('node:url').pathToFileURL(require('node:path').join(__dirname, '..', file)).href;`,
    },
  });
  if (result.errors.length > 0) process.exit(1);
  // The loader takes it only when nobody but its owner can write it (whatever the umask).
  chmodSync(BUNDLE_PATH, 0o644);
  if (!CODE_CACHE_PATH) continue;
  try {
    execFileSync(process.execPath, [...(await b.flags()), fileURLToPath(import.meta.url), '--code-cache', name], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
  } catch (e) {
    rmSync(CODE_CACHE_PATH, { force: true });
    const why = e.code ?? (e.status != null ? `status ${e.status}` : e.message);
    process.stderr.write(
      `build-helper: no code cache for the ${name} (${why}); it compiles its bundle at each start\n`,
    );
  }
}
