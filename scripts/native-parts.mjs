// The helper's four native parts, each a program or library built from its files of
// helper/native/ (scripts/build-native.mjs builds them; test/bash/builtin-load.test.ts builds the
// bash builtin of another build from the same files): the one list of which files make which part.
import { join } from 'node:path';

/** Each part: the file it builds, its sources in helper/native/, and what the helper does without it. */
export const NATIVE_PARTS = [
  {
    name: 'spawn.node',
    sources: ['spawn.c', 'spawn-child.c', 'spawn-ends.c', 'exit-watch.c', 'small-thread.c'],
    without: "plain runs will use Node's own spawn",
  },
  {
    name: 'walls-waiter',
    sources: ['walls-waiter.c', 'walls-shell.c', 'walls-link.c'],
    without: 'sandboxed runs will use the perl waiter',
  },
  {
    name: 'fd-channel.node',
    sources: ['fd-channel.c', 'small-thread.c'],
    without: 'terminal runs in a sandboxed pane will be refused',
  },
  {
    // Panes on other hosts: the kernel's peer credentials of a forwarded socket (docs/remote.md).
    name: 'peer-cred.node',
    sources: ['../remote/peer-cred.c'],
    without: 'remote panes will ask perl for peer credentials',
  },
  {
    name: 'bash-line.so',
    sources: ['bash-line.c', 'bash-line-draw.c', 'bash-line-files.c'],
    without: 'bash panes will use the screen check',
    builtin: true,
  },
];

/** The source paths of the part named `name` (`bash-line.so`), under the checkout at `root`. */
export function nativeSources(root, name) {
  const part = NATIVE_PARTS.find((p) => p.name === name);
  if (!part) throw new Error(`no native part ${name}`);
  return part.sources.map((f) => join(root, 'helper', 'native', f));
}
