// Builds the helper's native parts into generated/ and dist/generated/ with the C compiler
// ($CC, else cc), run by `npm run build` after build-validators (which empties generated/):
// - helper/run/spawn.c, a plain run's spawn without forking the helper, with the files of
//   spawn.h (the child, its ends, the watch of its exit), into spawn.node (with the Node-API
//   headers of the Node that runs this script);
// - helper/walls/walls-waiter.c, the waiter of a pane's kept-alive sandbox, with the files of
//   walls-waiter.h (a run's /bin/sh to be, the links to the helper), into walls-waiter;
// - helper/walls/fd-channel.c, how a sandboxed terminal run's pseudo-terminal (made in the walls)
//   reaches the helper, into fd-channel.node (with the same headers);
// - helper/shell/bash/bash-line.c, bash's loadable builtin (shell/tmux-run.bash), with the files of
//   bash-line.h (drawing, the files it writes), into bash-line.so, with the build's id
//   (generated/build-id.cjs, made just before) compiled in.
// Which files make which part: scripts/native-parts.mjs.
// All are optional: without a compiler or the headers it says why on stderr and the helper uses
// Node's own spawn and the perl waiter (slower, the same semantics), and bash panes the screen check.
// `TMUX_RUN_NATIVE=off npm run build` builds none.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NATIVE_PARTS, nativeSources } from './native-parts.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const targets = [join(root, 'generated'), join(root, 'dist', 'generated')];
const parts = NATIVE_PARTS;
for (const dir of targets) for (const p of parts) rmSync(join(dir, p.name), { force: true });

const skip = (part, why) =>
  process.stderr.write(`build-native: ${why}; ${part.without} (slower; see README, "Requirements")\n`);

const why =
  process.env.TMUX_RUN_NATIVE === 'off'
    ? 'TMUX_RUN_NATIVE=off'
    : process.platform !== 'linux'
      ? `not built on ${process.platform}`
      : undefined;
if (why) {
  for (const p of parts) skip(p, why);
  process.exit(0);
}
// The headers that come with Node (official tarballs and distribution packages put them there).
const headers = [
  join(dirname(process.execPath), '..', 'include', 'node'),
  '/usr/include/node',
  '/usr/local/include/node',
].find((d) => existsSync(join(d, 'node_api.h')));

const cc = process.env.CC || 'cc';
// The build's id, which shell/tmux-run.bash compares with the builtin's before it uses it.
const buildId = /BUILD_ID = "([0-9a-f]+)"/.exec(readFileSync(join(root, 'generated', 'build-id.cjs'), 'utf8'))?.[1];
mkdirSync(targets[0], { recursive: true });
for (const part of parts) {
  const library = part.name.endsWith('.node');
  if (library && !headers) {
    skip(part, 'no Node-API headers (node_api.h) beside this Node or in /usr/include/node');
    continue;
  }
  const out = join(targets[0], part.name);
  const sources = nativeSources(root, part.name);
  const flags = library
    ? ['-shared', '-fPIC', '-pthread', '-I', headers]
    : part.builtin
      ? ['-shared', '-fPIC', `-DTMUX_RUN_BUILD="${buildId}"`]
      : [];
  try {
    execFileSync(cc, ['-O2', '-std=c11', '-Wall', '-Wextra', ...flags, '-o', out, ...sources], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
  } catch (e) {
    rmSync(out, { force: true });
    skip(
      part,
      `${cc} could not build ${part.sources.map((f) => `helper/${f}`).join(', ')} (${e.code ?? `status ${e.status}`})`,
    );
    continue;
  }
  for (const dir of targets.slice(1)) {
    mkdirSync(dir, { recursive: true });
    copyFileSync(out, join(dir, part.name));
  }
  // bash loads the builtin only when nobody but its owner can write it (whatever the umask).
  if (part.builtin) for (const dir of targets) chmodSync(join(dir, part.name), 0o755);
}
