// The snapshot a shell hands a run at dispatch: its cwd and exported environment (and the shell
// parameters the sandbox reads), written by the shell side as NUL-separated fields in a 0600 file
// of the channel. Every shell's snippet writes this one format; this module alone reads it (pure).
import { isUtf8 } from 'node:buffer';

/** The snapshot's fields, as strings. */
export interface SnapshotFields {
  cwd: string;
  env: Record<string, string>;
  /** The shell parameters the sandbox reads, exported or not: sent only when TMUX_RUN_SANDBOX is set and not `off`. */
  shell?: Record<string, string>;
}

/**
 * What the shell reported at dispatch, decoded as UTF-8 (what the audit trail and messages show);
 * `bytes` is the same snapshot with one character per byte (latin1, lossless), present only when
 * some byte of it is not UTF-8: then the UTF-8 strings are not the shell's own, and whatever runs
 * takes the bytes from there (helper/run/exact-exec.ts). docs/tools.md, `tmux_run`: bytes, exactly.
 */
export type Snapshot = SnapshotFields & { bytes?: SnapshotFields };

/**
 * Parses the snapshot file: NONCE \0 PWD \0 NAME=VALUE \0 ..., where an entry `:NAME=VALUE` (no
 * parameter name starts with a colon) is a shell parameter for the sandbox, not an export (pure;
 * exported for tests).
 */
export function parseSnapshot(data: Buffer, nonce: string): Snapshot | undefined {
  const text = fieldsOf(data.toString('utf8'), nonce);
  if (!text || isUtf8(data)) return text;
  const bytes = fieldsOf(data.toString('latin1'), nonce);
  return bytes ? { ...text, bytes } : undefined;
}

function fieldsOf(decoded: string, nonce: string): SnapshotFields | undefined {
  const parts = decoded.split('\0');
  if (parts[0] !== nonce || parts.length < 2) return undefined;
  const env: Record<string, string> = {};
  const shell: Record<string, string> = {};
  for (const kv of parts.slice(2)) {
    const eq = kv.indexOf('=');
    if (kv.startsWith(':')) {
      if (eq > 1) shell[kv.slice(1, eq)] = kv.slice(eq + 1);
      continue;
    }
    if (eq <= 0) continue;
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return { cwd: parts[1] ?? '', env, shell };
}

const ASCII = /^[\x00-\x7f]*$/;

/** The snapshot with one character per byte (latin1), whatever its encoding (pure). */
export function bytesOf(s: Snapshot): SnapshotFields {
  if (s.bytes) return s.bytes;
  // ASCII is the same string either way (most of an environment): only the rest is converted.
  const l = (v: string): string => (ASCII.test(v) ? v : Buffer.from(v, 'utf8').toString('latin1'));
  const map = (r: Record<string, string>): Record<string, string> =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [l(k), l(v)]));
  return { cwd: l(s.cwd), env: map(s.env), ...(s.shell ? { shell: map(s.shell) } : {}) };
}

/** The cwd as the file system takes it: exact bytes when it is not UTF-8. */
export function cwdPath(s: Snapshot): string | Buffer {
  return s.bytes ? Buffer.from(s.bytes.cwd, 'latin1') : s.cwd;
}
