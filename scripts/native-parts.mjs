// The helper's native parts, each a program or library built from C files that live in the
// room of helper/ they serve (the spawn beside the runner in helper/run/, the walls' waiter and
// terminal channel in helper/walls/, bash's builtin in helper/shell/bash/); scripts/build-native.mjs
// builds them, test/bash/builtin-load.test.ts builds the bash builtin of another build from the
// same files: the one list of which files make which part.
import { join } from 'node:path';

/** Each part: the file it builds, its sources (paths under helper/), and what the helper does without it. */
export const NATIVE_PARTS = [
  {
    name: 'spawn.node',
    sources: ['run/spawn.c', 'run/spawn-child.c', 'run/spawn-ends.c', 'run/exit-watch.c', 'run/small-thread.c'],
    without: "plain runs will use Node's own spawn",
  },
  {
    name: 'walls-waiter',
    sources: ['walls/walls-waiter.c', 'walls/walls-shell.c', 'walls/walls-link.c'],
    without: 'sandboxed runs will use the perl waiter',
  },
  {
    name: 'fd-channel.node',
    sources: ['walls/fd-channel.c', 'run/small-thread.c'],
    without: 'terminal runs in a sandboxed pane will be refused',
  },
  {
    // Panes on other hosts: the kernel's peer credentials of a forwarded socket (docs/remote.md).
    name: 'peer-cred.node',
    sources: ['remote/peer-cred.c'],
    without: 'remote panes will ask perl for peer credentials',
  },
  {
    name: 'bash-line.so',
    sources: ['shell/bash/bash-line.c', 'shell/bash/bash-line-draw.c', 'shell/bash/bash-line-files.c'],
    without: 'bash panes will use the screen check',
    builtin: true,
  },
];

/** The source paths of the part named `name` (`bash-line.so`), under the checkout at `root`. */
export function nativeSources(root, name) {
  const part = NATIVE_PARTS.find((p) => p.name === name);
  if (!part) throw new Error(`no native part ${name}`);
  return part.sources.map((f) => join(root, 'helper', f));
}
