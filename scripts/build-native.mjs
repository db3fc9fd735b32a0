// Builds helper/native/spawn.c (a plain run's spawn without forking the helper) into
// generated/spawn.node and dist/generated/spawn.node, with the C compiler ($CC, else cc) and the
// Node-API headers of the Node that runs this script. Run by `npm run build` after
// build-validators (which empties generated/). Optional: without a compiler or the headers it says
// why on stderr and the helper uses Node's own spawn (slower, the same semantics).
// `TMUX_RUN_NATIVE=off npm run build` builds without it.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const name = 'spawn.node';
const targets = [join(root, 'generated'), join(root, 'dist', 'generated')];
for (const dir of targets) rmSync(join(dir, name), { force: true });

const skip = (why) => {
  process.stderr.write(
    `build-native: ${why}; plain runs will use Node's own spawn (slower; see README, "Requirements")\n`,
  );
  process.exit(0);
};

if (process.env.TMUX_RUN_NATIVE === 'off') skip('TMUX_RUN_NATIVE=off');
if (process.platform !== 'linux') skip(`not built on ${process.platform}`);
// The headers that come with Node (official tarballs and distribution packages put them there).
const headers = [
  join(dirname(process.execPath), '..', 'include', 'node'),
  '/usr/include/node',
  '/usr/local/include/node',
].find((d) => existsSync(join(d, 'node_api.h')));
if (!headers) skip('no Node-API headers (node_api.h) beside this Node or in /usr/include/node');

const out = join(targets[0], name);
mkdirSync(targets[0], { recursive: true });
const cc = process.env.CC || 'cc';
try {
  execFileSync(
    cc,
    [
      '-O2',
      '-std=c11',
      '-Wall',
      '-Wextra',
      '-shared',
      '-fPIC',
      '-pthread',
      '-I',
      headers,
      '-o',
      out,
      join(root, 'helper', 'native', 'spawn.c'),
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
} catch (e) {
  rmSync(out, { force: true });
  skip(`${cc} could not build helper/native/spawn.c (${e.code ?? `status ${e.status}`})`);
}
for (const dir of targets.slice(1)) {
  mkdirSync(dir, { recursive: true });
  copyFileSync(out, join(dir, name));
}
