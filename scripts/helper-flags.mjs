// The flags the shells exec node with to start a helper (shell/tmux-run.zsh's exec line; bash's
// child in shell/tmux-run-start.bash and fish's /bin/sh give the same ones,
// test/unit/helper-bundle.test.ts checks): the build makes the helper's
// code cache under them (V8 uses a cache only under the flags it was made with) and the bench
// measures Node's own start under them.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The file where a shell starts its helper. */
const startFile = (shell) => (shell === 'bash' ? 'tmux-run-start.bash' : `tmux-run.${shell}`);

/** The node flags in the shell's start of the helper. */
export function helperFlags(shell = 'zsh') {
  const text = readFileSync(join(root, 'shell', startFile(shell)), 'utf8');
  // `exec $node --flag ... --` (zsh, bash) or `$node --flag ...` at a line's start (fish, given to
  // /bin/sh), node a variable.
  const line = /(?:(?:exec|command) |^\s+)"?\$\w+"? ((?:--[a-z][a-z-]*(?:=\S+)? )+)/m.exec(text)?.[1];
  if (!line) throw new Error(`no start of the helper (node and its flags) in shell/${startFile(shell)}`);
  return line.trim().split(/\s+/);
}
