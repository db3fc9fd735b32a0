// The registry directory as the CLI sees it: missing means nothing is enrolled yet.
import { lstatSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { checkRegistryDir, resolveRegistryDir } from '../enrollment/registry-dir.js';

/** The registry directory checked for safety, or undefined when it does not exist yet. Throws RegistryDirError. */
export function existingRegistryDir(env: NodeJS.ProcessEnv): string | undefined {
  const dir = resolveRegistryDir(env);
  try {
    lstatSync(dir);
  } catch (e) {
    // A relative path is refused by checkRegistryDir even before it exists.
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' && isAbsolute(dir)) return undefined;
  }
  return checkRegistryDir(dir);
}
