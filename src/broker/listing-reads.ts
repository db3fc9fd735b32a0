// What a listing (src/broker/registry.ts) reads of each pane's files besides its record: the
// helper's published status (src/core/enrollment/pane-status.ts) and the shell's modes file
// (src/core/enrollment/shell-modes.ts). Each is kept as parsed, by record, while its file stays the one
// read before: the same regular file by lstat (device, inode, size, modification and change
// times, mode and owner), one system call instead of an open, a read and a close (a status a
// helper published, a pane that went dormant, changes nothing until its next run or prompt). A
// status is renamed into place, a new file each time; a modes file is rewritten in place at most
// once a prompt. A file changed less than SETTLED_MS ago is read anew every time: file times move
// by the clock's tick, so a rewrite within one tick could keep them. Anything else (a link, a
// device) is read anew every time, by the readers' own checks, which refuse it.
import { lstatSync } from 'node:fs';
import { CHANNEL, statusPath } from '../core/enrollment/layout.js';
import { readStatus, type PaneStatus } from '../core/enrollment/pane-status.js';
import type { EnrollmentRecord } from '../core/enrollment/record.js';
import { parseModes, readShellFile } from '../core/enrollment/shell-modes.js';

type Modes = ReturnType<typeof parseModes>;

/** How old a file's last change must be for what it said to be kept (well over a clock tick). */
const SETTLED_MS = 100;

interface Kept<T> {
  id: string;
  value: T;
}

/** Per record (the registry's parsed records live as long as their files): what its files said. */
const kept = new WeakMap<EnrollmentRecord, { status?: Kept<PaneStatus | undefined>; modes?: Kept<Modes> }>();

/**
 * The identity of the regular file at `path` as lstat sees it (no link followed); null when there
 * is none, undefined when what it says is not kept (not a regular file, or changed just now).
 */
function fileIdentity(path: string): string | null | undefined {
  let st;
  try {
    st = lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return null;
  }
  if (st === undefined) return null;
  if (!st.isFile() || Date.now() - Math.max(st.mtimeMs, st.ctimeMs) < SETTLED_MS) return undefined;
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.mode}:${st.uid}`;
}

function keptRead<K extends 'status' | 'modes', T>(
  rec: EnrollmentRecord,
  key: K,
  path: string,
  absent: T,
  read: () => T,
): T {
  const id = fileIdentity(path);
  const mine = kept.get(rec) ?? {};
  if (id === null) {
    delete mine[key];
    return absent;
  }
  const before = mine[key] as Kept<T> | undefined;
  if (id !== undefined && before?.id === id) return before.value;
  const value = read();
  if (id !== undefined) {
    (mine as Record<K, Kept<T>>)[key] = { id, value };
    kept.set(rec, mine);
  }
  return value;
}

/** readStatus(dir, rec), kept while the status file is unchanged. */
export const listedStatus = (dir: string, rec: EnrollmentRecord): PaneStatus | undefined =>
  keptRead(rec, 'status', statusPath(dir, rec.enrollment_generation), undefined, () => readStatus(dir, rec));

/** The modes of the shell's last prompt (its channel's modes file), kept while the file is unchanged. */
export const listedModes = (rec: EnrollmentRecord): Modes =>
  keptRead(rec, 'modes', rec.channel + CHANNEL.modes, parseModes(undefined), () =>
    parseModes(readShellFile(rec.channel + CHANNEL.modes)),
  );
