// Whether a bash pane may load tmux-run's builtin (helper/shell/bash/bash-line.c): checked by the
// helper (helper/shell/bash/bash.ts) and by doctor, so that the shell forks no `stat` on its way to the
// first prompt (bash cannot read a file's owner or mode itself). The snippet asks with `load SO` in BASE.check; the builtin is
// loaded only when the file and its directory are real ones (the snippet refused symlinks), the
// person's or root's, writable by nobody else, and of this build (its compiled-in id, which the
// shell checks again once loaded). The shell loads it when the helper's first word says `load`.
import { lstatSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { BUILD_ID } from '../protocol/build.js';

/** Why `so` may not be loaded, or undefined when it may (pure but for the file system). */
export function builtinRefusal(so: string, uid = process.getuid?.()): string | undefined {
  for (const f of [so, dirname(so)]) {
    let st;
    try {
      st = lstatSync(f);
    } catch (e) {
      return `${f} cannot be inspected (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
    }
    if (st.isSymbolicLink()) return `${f} is a symlink; the builtin is loaded only from the install's own files`;
    const mode = (st.mode & 0o7777).toString(8);
    if ((st.uid !== 0 && st.uid !== uid) || (st.mode & 0o022) !== 0)
      return `${f} is not safe to load from (owner uid ${st.uid}, mode ${mode}: it must be yours or root's and writable by nobody else); run: chmod go-w '${f}'`;
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(so);
  } catch (e) {
    return `${so} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  if (!bytes.includes(`${BUILD_ID}\0`))
    return `the builtin ${so} is of another build of tmux-run than this install; run 'npm run build' in ${dirname(dirname(dirname(so)))}`;
  return undefined;
}
