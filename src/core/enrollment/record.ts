// The enrollment record a helper publishes in the registry directory (0600, written atomically).
import { closeSync, constants, fstatSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { recordPath } from './layout.js';
import { isRemoteBinding, type RemoteBinding } from './remote-binding.js';

/** The shells a pane can be enrolled from (the record's `shell`; helper/shell-for.ts picks the module). */
export const SHELL_NAMES = ['zsh', 'bash', 'fish'] as const;
export type ShellName = (typeof SHELL_NAMES)[number];
/** How the empty line is known: `exact` (the shell's line editor says so) or `screen` (read from the pane). */
export const EDITOR_CHECKS = ['exact', 'screen'] as const;
export type EditorCheck = (typeof EDITOR_CHECKS)[number];

export interface EnrollmentRecord {
  version: 1;
  pane_id: string;
  /** The listed generation: a digest of the four below. */
  generation: string;
  server_generation: string;
  process_generation: string;
  enrollment_generation: string;
  tmux_socket: string;
  tmux_server_pid: number;
  shell_pid: number;
  shell_start: string;
  shell_tty: string;
  helper_pid: number;
  /** The helper's Unix socket. */
  socket: string;
  /** Path prefix of the shell channel (see CHANNEL in layout.ts). */
  channel: string;
  enrolled_at: string;
  /** HMAC key for this enrollment, hex. Only this user can read the file. */
  secret: string;
  /** The helper's build (BUILD_ID in src/core/protocol/build.ts); missing in records of older builds. */
  build?: string;
  /** The enrolled shell; missing in records of older builds, which were all zsh's (recordShell). */
  shell?: ShellName;
  /** How its empty line is checked; missing in older records (exact: zsh's line editor). */
  editor_check?: EditorCheck;
  /** Why the check is `screen` where an exact one was possible (bash without its builtin). */
  editor_check_reason?: string;
  /** A pane on another host (src/core/enrollment/remote-binding.ts): its shell and helper pids are the far end's. */
  remote?: RemoteBinding;
}

/** A record's shell and check, with the defaults of records written before they were recorded. */
export function recordShell(rec: EnrollmentRecord): {
  shell: ShellName;
  editor_check: EditorCheck;
  editor_check_reason: string | null;
} {
  return {
    shell: rec.shell ?? 'zsh',
    editor_check: rec.editor_check ?? 'exact',
    editor_check_reason: rec.editor_check_reason ?? null,
  };
}

/** Writes the record 0600 under a temporary name, then renames it into place. */
export function writeRecord(dir: string, rec: EnrollmentRecord): string {
  const final = recordPath(dir, rec.enrollment_generation);
  writeWhole(join(dir, `.${rec.enrollment_generation}.tmp`), final, JSON.stringify(rec) + '\n', constants.O_EXCL);
  return final;
}

/**
 * Writes `text` to `tmp` (0600, never through a link; `flags` adds O_EXCL or O_TRUNC), then renames
 * it over `final`: a reader sees the old file or the new one, never half of one. A failure (a full
 * disk) leaves no temporary file behind.
 */
export function writeWhole(tmp: string, final: string, text: string, flags: number): void {
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | flags, 0o600);
  try {
    try {
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, final);
  } catch (e) {
    removeQuietly(tmp);
    throw e;
  }
}

/** A record file that cannot be trusted or read; the caller skips it. */
export class RecordError extends Error {}

/** Reads one record file without following symlinks; refuses files others could read or write. */
export function readRecord(path: string): EnrollmentRecord {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    throw new RecordError(`cannot open ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, {
      cause: e,
    });
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new RecordError(`${path} is not a regular file`);
    if (st.uid !== process.getuid?.()) throw new RecordError(`${path} belongs to another user`);
    if ((st.mode & 0o077) !== 0) throw new RecordError(`${path} is open to other users`);
    if (st.size > 16384) throw new RecordError(`${path} is too large to be a record`);
    const rec = JSON.parse(readFileSync(fd, 'utf8')) as EnrollmentRecord;
    if (!isRecord(rec)) throw new RecordError(`${path} is not a valid enrollment record`);
    return rec;
  } catch (e) {
    if (e instanceof RecordError) throw e;
    throw new RecordError(`${path} is not a valid enrollment record`, { cause: e });
  } finally {
    closeSync(fd);
  }
}

const hex32 = /^[a-f0-9]{32}$/;
function isRecord(r: unknown): r is EnrollmentRecord {
  if (typeof r !== 'object' || r === null) return false;
  const x = r as Record<string, unknown>;
  return (
    x.version === 1 &&
    typeof x.pane_id === 'string' &&
    /^%[0-9]{1,30}$/.test(x.pane_id) &&
    typeof x.generation === 'string' &&
    hex32.test(x.generation) &&
    typeof x.server_generation === 'string' &&
    x.server_generation.length > 0 &&
    x.server_generation.length <= 128 &&
    typeof x.process_generation === 'string' &&
    hex32.test(x.process_generation) &&
    typeof x.enrollment_generation === 'string' &&
    hex32.test(x.enrollment_generation) &&
    typeof x.tmux_socket === 'string' &&
    typeof x.tmux_server_pid === 'number' &&
    typeof x.shell_pid === 'number' &&
    typeof x.shell_start === 'string' &&
    typeof x.shell_tty === 'string' &&
    typeof x.helper_pid === 'number' &&
    typeof x.socket === 'string' &&
    typeof x.channel === 'string' &&
    typeof x.enrolled_at === 'string' &&
    typeof x.secret === 'string' &&
    /^[a-f0-9]{64}$/.test(x.secret) &&
    (x.build === undefined || (typeof x.build === 'string' && /^[a-f0-9]{1,64}$/.test(x.build))) &&
    (x.shell === undefined || (SHELL_NAMES as readonly unknown[]).includes(x.shell)) &&
    (x.editor_check === undefined || (EDITOR_CHECKS as readonly unknown[]).includes(x.editor_check)) &&
    (x.editor_check_reason === undefined || typeof x.editor_check_reason === 'string') &&
    (x.remote === undefined || isRemoteBinding(x.remote))
  );
}

/** Removes a file, ignoring one that is already gone. */
export function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}
