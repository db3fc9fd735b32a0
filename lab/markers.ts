// Names and marker files: proof that a script ran (or, when absent, that it did not).
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TmuxServer } from './server.js';

/** A random token for markers and names in tests. */
export function uniqueToken(): string {
  return randomBytes(6).toString('hex');
}

/** A fresh path inside the server's directory (removed with it) that a script may create; it does not exist yet. */
export function markerPath(server: TmuxServer, what = 'marker'): string {
  return join(server.baseDir, `${what}-${uniqueToken()}`);
}

/** A fresh directory for marker files, inside the server's directory (removed with it). */
export function markerDir(server: TmuxServer, name = 'marks'): string {
  const d = join(server.baseDir, name);
  mkdirSync(d, { recursive: true, mode: 0o700 });
  return d;
}

/** A script that leaves proof of having run. */
export const touchScript = (marker: string): string => `touch '${marker}'; echo ran`;
