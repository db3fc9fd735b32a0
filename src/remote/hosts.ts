// The hosts `tmux-run setup --remote` set up, as this machine remembers them: one 0600 file per
// DESTINATION (as the person gave it) under tmux-run's own state directory, saying where the far
// end's tmux-run lives, its forward directory and its build. `tmux-run ssh` reads it to know where
// to put the session's socket at the far end; `setup --remote --undo` removes it.
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { removeQuietly, writeWhole } from '../core/enrollment/record.js';
import { checkRegistryDir } from '../core/enrollment/layout.js';

export interface HostRecord {
  version: 1;
  destination: string;
  /** The far end's tmux-run (its shell/, dist/, native parts), absolute. */
  remote_dir: string;
  /** The far end's forward directory (0700): each session's socket goes there. */
  forward_dir: string;
  /** The build copied there (BUILD_ID). */
  build: string;
  /** What the host said of itself: its name, its node, the native parts built there. */
  hostname: string;
  node: string;
  native: string[];
  shell: string;
  installed_at: string;
}

/** $XDG_STATE_HOME/tmux-run/hosts (default ~/.local/state/tmux-run/hosts), as the audit trail's base. */
export function hostsDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  const state = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.local', 'state');
  return join(state, 'tmux-run', 'hosts');
}

const fileOf = (dir: string, destination: string): string =>
  join(dir, `${createHash('sha256').update(destination).digest('hex').slice(0, 32)}.json`);

function isHost(x: unknown): x is HostRecord {
  if (typeof x !== 'object' || x === null) return false;
  const h = x as Record<string, unknown>;
  return (
    h.version === 1 &&
    typeof h.destination === 'string' &&
    typeof h.remote_dir === 'string' &&
    isAbsolute(h.remote_dir) &&
    typeof h.forward_dir === 'string' &&
    isAbsolute(h.forward_dir) &&
    typeof h.build === 'string' &&
    typeof h.hostname === 'string' &&
    typeof h.node === 'string' &&
    Array.isArray(h.native) &&
    typeof h.shell === 'string'
  );
}

/** The record of `destination`, or undefined when setup --remote never ran for it (or it is unreadable). */
export function readHost(destination: string, env: NodeJS.ProcessEnv = process.env): HostRecord | undefined {
  const dir = hostsDir(env);
  try {
    checkRegistryDir(dir);
    const fd = openSync(fileOf(dir, destination), constants.O_RDONLY | constants.O_NOFOLLOW);
    let h: unknown;
    try {
      const st = fstatSync(fd);
      if (!st.isFile() || st.uid !== process.getuid?.() || (st.mode & 0o077) !== 0) return undefined;
      h = JSON.parse(readFileSync(fd, 'utf8'));
    } finally {
      closeSync(fd);
    }
    return isHost(h) && h.destination === destination ? h : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the record (0600, atomically) in the hosts directory (0700, made when missing). */
export function writeHost(h: HostRecord, env: NodeJS.ProcessEnv = process.env): string {
  const dir = hostsDir(env);
  mkdirSync(join(dir, '..'), { recursive: true, mode: 0o700 });
  checkRegistryDir(dir, { create: true });
  const path = fileOf(dir, h.destination);
  writeWhole(`${path}.tmp`, path, JSON.stringify(h, null, 2) + '\n', constants.O_TRUNC);
  return path;
}

/** Removes the record of `destination`; true when there was one. */
export function removeHost(destination: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const dir = hostsDir(env);
  const path = fileOf(dir, destination);
  let had: boolean;
  try {
    had = readdirSync(dir).includes(path.slice(dir.length + 1));
  } catch {
    return false;
  }
  removeQuietly(path);
  return had;
}

/** Every host record here (readable, well-formed, yours), by DESTINATION; none when setup --remote never ran. */
export function readHosts(env: NodeJS.ProcessEnv = process.env): HostRecord[] {
  let names: string[];
  try {
    names = readdirSync(checkRegistryDir(hostsDir(env)));
  } catch {
    return [];
  }
  const out: HostRecord[] = [];
  for (const n of names.filter((x) => /^[0-9a-f]{32}\.json$/.test(x)).sort()) {
    try {
      const h = JSON.parse(readFileSync(join(hostsDir(env), n), 'utf8')) as unknown;
      if (isHost(h)) {
        const r = readHost(h.destination, env);
        if (r) out.push(r);
      }
    } catch {
      /* not one of ours */
    }
  }
  return out;
}
