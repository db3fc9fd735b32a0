// Where this installation of tmux-run lives: found from this module's own location (src/core/os/
// in the sources, dist/src/core/os/ once built) by walking up to the package.json that names it.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The package's root directory (the one whose package.json names tmux-run). */
export function packageRoot(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown }).name === 'tmux-run') return (cached = dir);
      } catch {
        /* not ours; keep looking */
      }
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  // Not found (an unusual install): dist/src/core/os/ is four levels below the root.
  return (cached = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..'));
}

/** The compiled helper the snippet starts. */
export const helperMainPath = (): string => join(packageRoot(), 'dist', 'helper', 'main.js');

/** The package version, or '?' when package.json cannot be read. */
export function packageVersion(): string {
  try {
    const v = (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: unknown }).version;
    return typeof v === 'string' ? v : '?';
  } catch {
    return '?';
  }
}

/** `path` quoted for zsh when it holds anything but plain path characters. */
export function shellQuote(path: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}
