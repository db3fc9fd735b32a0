// The flags the shells exec node with to start a helper (shell/tmux-run.zsh's exec line; .bash and
// .fish give the same ones, test/unit/helper-flags.test.ts checks): the build makes the helper's
// code cache under them (V8 uses a cache only under the flags it was made with) and the bench
// measures Node's own start under them.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The node flags in `shell/tmux-run.<shell>`'s start of the helper. */
export function helperFlags(shell = 'zsh') {
  const text = readFileSync(join(root, 'shell', `tmux-run.${shell}`), 'utf8');
  // `exec $node --flag ... --` (zsh, bash) or `command $node --flag ...` (fish), node a variable.
  const line = /(?:exec|command) "?\$\w+"? ((?:--[a-z][a-z-]*(?:=\S+)? )+)/.exec(text)?.[1];
  if (!line) throw new Error(`no start of the helper (node and its flags) in shell/tmux-run.${shell}`);
  return line.trim().split(/\s+/);
}
