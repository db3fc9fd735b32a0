// The directory of a pane's walls' socket (helper/walls/walls.ts): 0700, beside the helper's
// own socket, named after the helper's pid so that a helper SIGKILLed leaves one the next sweeps.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';

/** The socket's directory beside the helper's own: `.walls-PID-XXXXXX`, PID the helper's. */
const DIR_PREFIX = '.walls-';

/** Removes the socket directories of helpers that are gone (a helper SIGKILLed could not). */
function sweepDirs(home: string): void {
  let names: string[];
  try {
    names = readdirSync(home).filter((n) => n.startsWith(DIR_PREFIX));
  } catch {
    return;
  }
  for (const n of names) {
    const pid = Number(/^\.walls-(\d+)-/.exec(n)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ESRCH') rmSync(`${home}/${n}`, { recursive: true, force: true });
    }
  }
}

/** A new socket directory in `home` (`.walls-PID-XXXXXX`), once those of helpers gone are removed. */
export function wallsDir(home: string): string {
  sweepDirs(home);
  return mkdtempSync(`${home}/${DIR_PREFIX}${process.pid}-`);
}
