// The registry directory as the CLI sees it: missing means nothing is enrolled yet.
import { checkRegistryDir, RegistryDirError, resolveRegistryDir } from '../core/enrollment/layout.js';

/** The registry directory checked for safety, or undefined when it does not exist yet. Throws RegistryDirError. */
export function existingRegistryDir(env: NodeJS.ProcessEnv): string | undefined {
  try {
    return checkRegistryDir(resolveRegistryDir(env));
  } catch (e) {
    if (e instanceof RegistryDirError && e.reason === 'missing') return undefined;
    throw e;
  }
}
