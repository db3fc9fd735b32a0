// The registry directory as the CLI sees it: missing means nothing is enrolled yet.
import { lstatSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { checkRunDir, resolveRunDir } from '../../helper/rundir.js';

/** The registry directory checked for safety, or undefined when it does not exist yet. Throws RunDirError. */
export function existingRunDir(env: NodeJS.ProcessEnv): string | undefined {
  const dir = resolveRunDir(env);
  try {
    lstatSync(dir);
  } catch (e) {
    // A relative path is refused by checkRunDir even before it exists.
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' && isAbsolute(dir)) return undefined;
  }
  return checkRunDir(dir);
}
