// The package.json a packed tarball carries (npm pack, npm publish): without the `prepare`
// script. The tarball holds the build (dist/, made by `prepack` just before), and an install of
// it has no devDependencies to build with; npm does not even run a tarball's `prepare`, yet
// npm 11 names it among the install scripts that a global install did not approve. `prepack`
// runs `strip` after the build, `postpack` runs `restore`: the checkout's package.json is put
// back as it was (see docs/development.md#install-scripts).
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = join(root, 'package.json');
// Not in package.json's "files": never packed.
const kept = join(root, '.package.json.before-pack');

const mode = process.argv[2];
if (mode === 'strip') {
  if (existsSync(kept))
    throw new Error(`${kept} exists: a pack that did not finish? Put it back as package.json first`);
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  delete pkg.scripts.prepare;
  renameSync(manifest, kept);
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else if (mode === 'restore') {
  if (existsSync(kept)) renameSync(kept, manifest);
} else {
  throw new Error('usage: node scripts/pack-manifest.mjs strip|restore');
}
