// Reading and replacing a person's settings file: symlinks followed (a dotfile manager's link
// stays a link), the mode kept, a backup copy first, the new text written to a temporary file
// beside it and renamed over it, so a reader sees the old file or the new one, never half.
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  chmodSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CliError } from '../common/errors.js';

export interface SettingsFile {
  /** The path as named (~/.zshrc). */
  path: string;
  /** Where its content lives: the path, or the file a symlink points to. */
  real: string;
  exists: boolean;
  text: string;
  /** Permission bits to keep (for a new file: the mode it gets). */
  mode: number;
}

/** Reads `path` (a missing file is empty, with `newMode`); refuses what is not a UTF-8 regular file. */
export function readSettings(path: string, newMode: number): SettingsFile {
  let real = path;
  try {
    if (lstatSync(path).isSymbolicLink()) real = realpathSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      // A missing file, or a link to nothing (which we do not replace).
      if (pathIsLink(path)) throw new CliError(`${path} is a symlink to a file that does not exist; fix or remove it`);
      return { path, real, exists: false, text: '', mode: newMode };
    }
    throw new CliError(`cannot read ${path}: ${(e as Error).message}`);
  }
  const st = statSync(real);
  if (!st.isFile()) throw new CliError(`${path} is not a regular file; leaving it alone`);
  const bytes = readFileSync(real);
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) throw new CliError(`${path} is not UTF-8 text; leaving it alone`);
  return { path, real, exists: true, text, mode: st.mode & 0o7777 };
}

function pathIsLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The file's text now, or undefined when it is gone. */
function currentText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** `YYYYMMDDTHHMMSSZ` for backup names. */
const stamp = (now: Date): string =>
  now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');

/** Copies the file's current content beside it (`PATH.tmux-run-backup-STAMP`, same mode); returns the copy's path. */
export function backup(file: SettingsFile, now: Date = new Date()): string {
  const base = `${file.path}.tmux-run-backup-${stamp(now)}`;
  for (let n = 1; ; n++) {
    const name = n === 1 ? base : `${base}-${n}`;
    try {
      writeNew(name, file.text, file.mode);
      return name;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || n > 100) throw e;
    }
  }
}

/** Creates `path` (never over an existing one) holding `text` with exactly `mode`. */
function writeNew(path: string, text: string, mode: number): void {
  const fd = openSync(path, 'wx', mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(path, mode); // the umask may have taken bits away
}

/** Removes the file (the one a symlink points to stays; the link goes), unless it changed since it was read. */
export function removeSettings(file: SettingsFile): void {
  try {
    if (currentText(file.real) !== file.text) throw new Error('it changed while setup was running; nothing removed');
    unlinkSync(file.path);
  } catch (e) {
    throw new CliError(`cannot remove ${file.path}: ${(e as Error).message}`);
  }
}

/** Replaces the file's content with `text`, atomically, keeping its mode; creates its folder if needed. */
export function writeSettings(file: SettingsFile, text: string, dirMode: number): void {
  const dir = dirname(file.real);
  mkdirSync(dir, { recursive: true, mode: dirMode });
  const tmp = join(dir, `.${basename(file.real)}.tmux-run-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    writeNew(tmp, text, file.mode);
    // A client that rewrote its file meanwhile (Claude Code keeps state in its own) is not overwritten.
    if (currentText(file.real) !== (file.exists ? file.text : undefined))
      throw new Error('it changed while setup was running; nothing written, run setup again');
    renameSync(tmp, file.real);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      /* not created */
    }
    throw new CliError(`cannot write ${file.path}: ${(e as Error).message}`);
  }
}
