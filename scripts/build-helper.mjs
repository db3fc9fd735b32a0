// Bundles the compiled helper (dist/helper/helper.js and everything it imports, node_modules'
// msgpackr and ajv's runtime included) into one CommonJS script, dist/generated/helper.cjs, which
// helper/main.ts loads instead of some sixty modules (see helper/bundle.ts for when it is
// trusted), and makes V8's code cache of it, dist/generated/helper.code-cache: this script runs
// itself again under the helper's node flags (scripts/helper-flags.mjs; V8 takes a cache only
// under the flags it was made with), compiles the bundle and runs its top level as a start does.
// Run by `npm run build` after tsc. Each bundled module still finds its own file:
// `import.meta.url` becomes the URL of its file in dist/ (the generated files, the native parts
// and node_modules are found from there, and loaded at run time as before). Optional: without
// esbuild (a devDependency) it says so and the helper loads from its modules (slower to start,
// the same code). `TMUX_RUN_BUNDLE=off npm run build` builds neither.
import { readFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const { BUNDLE_PATH, CODE_CACHE_PATH, bundleHeader, makeCodeCache, MODULE_URL_FUNCTION } = await import(
  join(dist, 'helper', 'bundle.js')
);
if (process.argv[2] === '--code-cache') {
  // Under the helper's flags (below): the cache, 0644 like the bundle.
  writeFileSync(CODE_CACHE_PATH, makeCodeCache(), { mode: 0o644 });
  chmodSync(CODE_CACHE_PATH, 0o644);
  process.exit(0);
}
const { BUILD_ID } = createRequire(import.meta.url)(join(dist, 'generated', 'build-id.cjs'));
rmSync(BUNDLE_PATH, { force: true });
rmSync(CODE_CACHE_PATH, { force: true });

const skip = (why) =>
  process.stderr.write(`build-helper: ${why}; the helper will load from its modules (slower to start)\n`);
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
const moduleUrl = {
  name: 'module-url',
  setup(build) {
    build.onLoad({ filter: /\.js$/ }, async (args) => {
      if (relative(dist, args.path).startsWith('..')) return undefined;
      const text = await readFile(args.path, 'utf8');
      const file = relative(dist, args.path);
      const own = text.replaceAll('import.meta.url', `${MODULE_URL_FUNCTION}(${JSON.stringify(file)})`);
      return {
        contents: file === join('src', 'core', 'protocol', 'generated.js') ? generatedLoader(own) : own,
        loader: 'js',
      };
    });
  },
};
// The generated modules a helper loads (src/core/protocol/generated.ts requires them at run time) are
// bundled too, so that the wire validator's code comes from the cache; any other still loads from
// its file.
const BUNDLED_GENERATED = ['wire-validators', 'build-id'];
const generatedLoader = (text) => {
  const renamed = text.replace('export function loadGenerated(', 'function loadGeneratedFile(');
  if (renamed === text) throw new Error('build-helper: src/core/protocol/generated.ts no longer exports loadGenerated');
  const id = (n) => `generated_${n.replace(/-/g, '_')}`;
  const imports = BUNDLED_GENERATED.map((n) => `import * as ${id(n)} from '../../../generated/${n}.cjs';`);
  const cases = BUNDLED_GENERATED.map((n) => `    case '${n}': return ${id(n)};`);
  return `${imports.join('\n')}\n${renamed}\nexport function loadGenerated(name) {\n  switch (name) {\n${cases.join('\n')}\n    default: return loadGeneratedFile(name);\n  }\n}\n`;
};

const result = await esbuild.build({
  entryPoints: [join(dist, 'helper', 'bundle-entry.js')],
  outfile: BUNDLE_PATH,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // Whitespace only (names kept): the helper holds the source of its code in memory.
  minifyWhitespace: true,
  plugins: [moduleUrl],
  logLevel: 'warning',
  banner: {
    js:
      bundleHeader(BUILD_ID) +
      '"use strict";\n' +
      `const ${MODULE_URL_FUNCTION} = (file) => require('node:url').pathToFileURL(require('node:path').join(__dirname, '..', file)).href;`,
  },
});
if (result.errors.length > 0) process.exit(1);
// helper/bundle.ts loads it only when nobody but its owner can write it (whatever the umask).
chmodSync(BUNDLE_PATH, 0o644);
const { helperFlags } = await import('./helper-flags.mjs');
try {
  execFileSync(process.execPath, [...helperFlags(), fileURLToPath(import.meta.url), '--code-cache'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
} catch (e) {
  rmSync(CODE_CACHE_PATH, { force: true });
  const why = e.code ?? (e.status != null ? `status ${e.status}` : e.message);
  process.stderr.write(`build-helper: no code cache (${why}); the helper compiles its bundle at each start\n`);
}
