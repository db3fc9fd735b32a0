// The registry: enrollment records in the registry directory, verified before they are listed.
import { lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  channelFiles,
  checkRegistryDir,
  isRecordName,
  journalPath,
  recordPath,
  socketPath,
  statusPath,
  statusTmpPath,
} from '../core/enrollment/layout.js';
import {
  readRecord,
  recordShell,
  removeQuietly,
  type EditorCheck,
  type EnrollmentRecord,
  type ShellName,
} from '../core/enrollment/record.js';
import { paneGeneration } from '../core/enrollment/generation.js';
import { procStat, statBusy, type ProcStat } from '../core/os/proc.js';
import type { PaneStatus } from '../core/enrollment/pane-status.js';
import { listedModes, listedStatus } from './listing-reads.js';
import { listPanes, type TmuxPane } from '../core/os/tmux.js';
import { ping } from './helper-client.js';
import { helperAlive, reapDeadHelper, type Sweeper } from './orphans.js';
import { dormantShell, isDormant } from '../core/enrollment/dormant.js';
import { NEVER_SLEEPS } from '../core/enrollment/idle-time.js';
import { unresponsiveWhy } from './unresponsive.js';
import { noteRemote } from './session-ended.js';
import type { AuditLog } from '../core/audit/audit-log.js';
import {
  answersFor,
  listedHost,
  remoteAnswers,
  remoteProblem,
  type ListedHost,
} from '../core/enrollment/remote-listing.js';

/** A listed pane whose helper runs (not dormant): what enrolling one gives. */
export type AwakeListing = PaneListing & { helper_pid: number };

/** One live enrollment as `tmux-run panes --json` and `tmux_enrolled_panes` show it. */
export interface PaneListing {
  pane_id: string;
  generation: string;
  session: string;
  window: number;
  window_name: string;
  cwd: string | null;
  shell_pid: number;
  /** null while the pane is dormant (no helper runs: the next call that needs one has the shell start it). */
  helper_pid: number | null;
  state: 'idle' | 'busy' | 'running' | 'awaiting_approval' | 'dormant' | 'unresponsive';
  /** Why its helper does not answer (state `unresponsive`: stopped, or silent; src/broker/unresponsive.ts). */
  helper_problem?: string;
  /** TMUX_RUN_APPROVE as of the shell's last prompt. */
  mode: 'ask' | 'auto' | 'unknown';
  /** TMUX_RUN_SANDBOX as of the shell's last prompt. */
  sandbox: 'off' | 'workspace' | 'workspace+net' | 'read-only' | 'invalid' | 'unknown';
  /** The enrolled shell. */
  shell: ShellName;
  /** How its empty line is checked: `exact` (its line editor says) or `screen` (read from the pane). */
  editor_check: EditorCheck;
  /** Why the check is `screen` where an exact one was possible (bash without its builtin); else null. */
  editor_check_reason: string | null;
  /** Why the screen check cannot serve the pane's prompt (its runs are refused editor_not_empty), once the helper found it. */
  prompt_refused?: string;
  /**
   * How long its helper may have nothing to do before it goes dormant (TMUX_RUN_IDLE as the helper
   * took it: `10m`), `never` (it stays awake: `off`, or a pane on another host, whose helper could
   * not be woken from here), or `unknown` (a helper that did not say).
   */
  sleeps_after: string;
  queued: number;
  enrolled_at: string;
  host: ListedHost | null; // a pane on another host (tmux-run ssh, src/remote/); null for a local pane
  tmux_socket: string;
  server_generation: string;
  process_generation: string;
  enrollment_generation: string;
}

/** Parsed records by path, with the identity of the file they were read from. */
const cache = new Map<string, { rec: EnrollmentRecord; file: string }>();

/**
 * The record in file `name` of `dir`, when it is a regular file of this user that no one else can
 * read or write, named after its enrollment; parsed again only when the file is not the one read
 * before (device, inode, size and modification time). Undefined otherwise.
 */
function currentRecord(dir: string, name: string, uid: number | undefined): EnrollmentRecord | undefined {
  const path = join(dir, name);
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return undefined;
  }
  if (!st.isFile() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) return undefined;
  const file = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
  const cached = cache.get(path);
  if (cached?.file === file) return cached.rec;
  let rec;
  try {
    rec = readRecord(path);
  } catch {
    return undefined;
  }
  // A record is named after its enrollment; a copy under another name describes nothing.
  if (path !== recordPath(dir, rec.enrollment_generation)) return undefined;
  cache.set(path, { rec, file });
  return rec;
}

/**
 * Reads every record in `dir` (checked first). Records are immutable, so parsed ones are cached,
 * but each file's type, owner and mode are checked again on every scan, and a replaced file is read anew.
 */
export function scanRecords(dir: string): EnrollmentRecord[] {
  checkRegistryDir(dir);
  const names = readdirSync(dir).filter(isRecordName);
  const out: EnrollmentRecord[] = [];
  const uid = process.getuid?.();
  for (const name of names) {
    const rec = currentRecord(dir, name, uid);
    if (rec) out.push(rec);
  }
  for (const key of cache.keys())
    if (key.startsWith(dir + '/') && !names.includes(key.slice(dir.length + 1))) cache.delete(key);
  return out;
}

/**
 * The records a run for `paneId` at `generation` is decided on. When a scan already found that
 * record, only it is checked again (the directory, then the file's type, owner, mode and identity,
 * as a scan checks each file): one record. Otherwise (first call, a changed or removed file, an
 * unknown pane or generation) every record, by a full scan, so a refusal is decided on all of them.
 */
export function recordsFor(dir: string, paneId: string, generation: string): EnrollmentRecord[] {
  checkRegistryDir(dir);
  for (const [path, { rec }] of cache) {
    if (rec.pane_id !== paneId || rec.generation !== generation || path !== recordPath(dir, rec.enrollment_generation))
      continue;
    const again = currentRecord(dir, basename(path), process.getuid?.());
    if (again === rec) return [rec];
    break;
  }
  return scanRecords(dir);
}

/** Records whose generation was found to be the digest of its parts (records never change). */
const consistent = new WeakSet<EnrollmentRecord>();

/**
 * What makes a record unfit to act on, whatever its helper would answer: a generation that is not
 * the digest of its parts, or a live helper pid that is not a child of its shell. Undefined if none.
 * `helper`: the helper's stat as the caller read it (undefined: no such process, or a dormant
 * pane's, whose pid names nothing or a stranger and is not looked at), or `read` to read it here.
 */
export function recordProblem(rec: EnrollmentRecord, helper: ProcStat | undefined | 'read'): string | undefined {
  if (rec.remote) return remoteProblem(rec); // its shell and helper are the far end's: its local half
  if (helper === 'read') helper = procStat(rec.helper_pid);
  if (!consistent.has(rec)) {
    if (paneGeneration(rec) !== rec.generation)
      return 'its generation does not match its pane, server, shell and enrollment';
    consistent.add(rec);
  }
  if (helper !== undefined && helper.ppid !== rec.shell_pid)
    return `its helper (pid ${rec.helper_pid}) is not a child of its shell (pid ${rec.shell_pid})`;
  return undefined;
}

/** The helper socket of a record found in `dir`: beside the record, never a path the record names. */
export const recordSocket = (dir: string, rec: EnrollmentRecord): string => socketPath(dir, rec.enrollment_generation);

/**
 * Removes what a dead enrollment left behind (its helper no longer answers); only files inside
 * `dir`, and no shell channel named in `inUse` (a live enrollment's, named again by a forged record).
 * Runs the dead helper may have left running are stopped and audited first (src/broker/orphans.ts).
 */
export function removeEnrollmentFiles(
  dir: string,
  rec: EnrollmentRecord,
  inUse: ReadonlySet<string> = new Set(),
  by: Sweeper = 'broker',
  audit?: AuditLog,
): void {
  reapDeadHelper(dir, rec, by, audit);
  removeQuietly(journalPath(dir, rec.enrollment_generation));
  removeQuietly(statusPath(dir, rec.enrollment_generation));
  removeQuietly(statusTmpPath(dir, rec.enrollment_generation));
  const record = recordPath(dir, rec.enrollment_generation);
  removeQuietly(record);
  removeQuietly(recordSocket(dir, rec));
  if (dirname(rec.channel) === dir && !inUse.has(rec.channel)) channelFiles(rec.channel).forEach(removeQuietly);
  cache.delete(record);
}

const isSocketFile = (path: string): boolean => {
  try {
    return lstatSync(path).isSocket();
  } catch {
    return false;
  }
};

/** What a listing needs to know of a live helper: what a pong says (or, for a dormant pane, what its status says). */
type Pong = NonNullable<Awaited<ReturnType<typeof ping>>>;
type Listed = Omit<Pong, 'state'> & { state: PaneListing['state']; helper_problem?: string; sleeps_after?: string };

/**
 * The pong a live helper would give, from what the registry and /proc already hold: its published
 * status (src/core/enrollment/pane-status.ts) for the exact helper process (pid, start time, a child of
 * the shell), /proc for the shell's cwd and whether a command holds its terminal, the channel's
 * mode file for the modes of its last prompt. Undefined when the helper is not that process, is
 * dead, or has no socket to be reached at; state `unresponsive` when it is stopped, or this broker
 * found it silent (src/broker/unresponsive.ts): it lives, and would answer nothing.
 */
export function pongFromStatus(
  dir: string,
  rec: EnrollmentRecord,
  s: PaneStatus,
  helper: ProcStat | undefined,
  shell: ProcStat | undefined,
): Listed | undefined {
  if (isDormant(s)) return dormantShell(rec, s, shell) === 'same' ? shellSide(dir, rec, s, 'dormant') : undefined;
  // Dead (Z, X): it answers nothing and never will, so it is not listed, as a ping would not.
  if (!helper || 'ZX'.includes(helper.state) || helper.startTicks !== s.helper_start || helper.ppid !== rec.shell_pid)
    return undefined;
  if (!isSocketFile(recordSocket(dir, rec))) return undefined;
  const silent = unresponsiveWhy(rec, helper);
  if (silent) return { ...shellSide(dir, rec, s, 'unresponsive'), helper_problem: silent };
  return shellSide(dir, rec, s, s.run ?? (statBusy(shell) ? 'busy' : 'idle'));
}

/** The listing's answer from the shell's side (/proc and the channel's mode file) and the status. */
function shellSide(dir: string, rec: EnrollmentRecord, s: PaneStatus, state: Listed['state']): Listed {
  let cwd: string | null;
  try {
    cwd = readlinkSync(`/proc/${rec.shell_pid}/cwd`);
  } catch {
    cwd = null;
  }
  // The channel as the record names it, only inside the registry (as removeEnrollmentFiles has it).
  const modes = dirname(rec.channel) === dir ? listedModes(rec) : undefined;
  return {
    type: 'pong',
    pid: s.helper_pid,
    shell_pid: rec.shell_pid,
    state,
    cwd,
    queued: s.queued,
    generation: rec.generation,
    mode: modes?.mode ?? 'unknown',
    sandbox: modes?.sandbox ?? 'unknown',
    ...(s.prompt_refused ? { prompt_refused: s.prompt_refused } : {}),
    ...(s.sleeps_after ? { sleeps_after: s.sleeps_after } : {}),
  };
}

/** Whether what was read of one record makes it a live enrollment to list. */
function isLive(
  rec: EnrollmentRecord,
  pong: Listed,
  pane: TmuxPane,
  shell: ProcStat | undefined,
  helper: ProcStat | undefined,
): boolean {
  if (rec.remote) return remoteAnswers(rec, pong, pane); // the far end answered for its shell and helper
  const dormant = pong.state === 'dormant';
  return (
    answersFor(rec, pong, pane) &&
    shell?.startTicks === rec.shell_start &&
    (dormant || helper?.ppid === rec.shell_pid) &&
    recordProblem(rec, dormant ? undefined : helper) === undefined
  );
}

/** A live enrollment as it is listed. */
function paneListing(rec: EnrollmentRecord, pong: Listed, pane: TmuxPane): PaneListing {
  return {
    pane_id: rec.pane_id,
    generation: rec.generation,
    session: pane.session,
    window: pane.window_index,
    window_name: pane.window_name,
    cwd: pong.cwd,
    shell_pid: rec.shell_pid,
    helper_pid: pong.state === 'dormant' ? null : rec.helper_pid,
    state: pong.state,
    mode: pong.mode,
    sandbox: pong.sandbox ?? 'unknown',
    ...recordShell(rec),
    ...(pong.prompt_refused ? { prompt_refused: pong.prompt_refused } : {}),
    ...(pong.helper_problem ? { helper_problem: pong.helper_problem } : {}),
    // A far helper never goes dormant (helper/far-helper.ts): nothing here could start it again.
    sleeps_after: rec.remote ? NEVER_SLEEPS : (pong.sleeps_after ?? 'unknown'),
    queued: pong.queued,
    enrolled_at: rec.enrolled_at,
    host: listedHost(rec),
    tmux_socket: rec.tmux_socket,
    server_generation: rec.server_generation,
    process_generation: rec.process_generation,
    enrollment_generation: rec.enrollment_generation,
  };
}

/** The live enrollments and the records they were decided on (a caller needs no second scan). */
export interface Listing {
  panes: PaneListing[];
  records: EnrollmentRecord[];
}

type ListOptions = { cleanup?: boolean; by?: 'broker' | 'cli'; audit?: AuditLog };

/**
 * The live enrollments: each record is shown only when its helper is alive for that generation
 * (its published status, or its answer to a ping) and tmux still has that pane, on that server,
 * with that shell on its terminal. Records of helpers that are gone are removed when `cleanup` is set.
 */
export async function listEnrolled(dir: string, opts: ListOptions = {}): Promise<PaneListing[]> {
  return (await listEnrolledRecords(dir, opts)).panes;
}

/** listEnrolled, with the records it read. */
export async function listEnrolledRecords(dir: string, opts: ListOptions = {}): Promise<Listing> {
  const records = scanRecords(dir);
  records.forEach(noteRemote); // a call after its ssh session ended is told so (session-ended.ts)
  const sockets = [...new Set(records.map((r) => r.tmux_socket))];
  // tmux is asked first: while its client runs (most of a listing's time), each helper's
  // published status and its processes are read here. No helper is asked, so a listing costs
  // about the same at 1 pane and at 20; a helper without a status (of an older build, or one that
  // could not write it) is asked. A dormant helper is gone: its pid is not read.
  const tmuxPanes = Promise.all(sockets.map(async (s) => [s, await listPanes(s)] as const));
  const statuses = records.map((r) => listedStatus(dir, r));
  const procs = records.map(
    (r, i) => [procStat(r.shell_pid), isDormant(statuses[i]) ? undefined : procStat(r.helper_pid)] as const,
  );
  const fromStatus = records.map((r, i) => {
    const s = statuses[i];
    return s ? pongFromStatus(dir, r, s, procs[i]![1], procs[i]![0]) : undefined;
  });
  const [answers, listed] = await Promise.all([
    Promise.all(records.map((r, i) => (statuses[i] ? Promise.resolve(undefined) : ping(recordSocket(dir, r))))),
    tmuxPanes,
  ]);
  const panesBySocket = new Map<string, Map<string, TmuxPane> | undefined>(listed);
  const out: PaneListing[] = [];
  records.forEach((rec, i) => {
    const pong: Listed | undefined = statuses[i] ? fromStatus[i] : answers[i];
    const pane = panesBySocket.get(rec.tmux_socket)?.get(rec.pane_id);
    if (pong && pane && isLive(rec, pong, pane, procs[i]![0], procs[i]![1])) out.push(paneListing(rec, pong, pane));
    else if (opts.cleanup && pong === undefined && !helperAlive(rec))
      removeEnrollmentFiles(dir, rec, new Set(records.filter(helperAlive).map((r) => r.channel)), opts.by, opts.audit);
  });
  out.sort(
    (a, b) =>
      a.tmux_socket.localeCompare(b.tmux_socket) ||
      Number(a.pane_id.slice(1)) - Number(b.pane_id.slice(1)) ||
      a.enrolled_at.localeCompare(b.enrolled_at),
  );
  return { panes: out, records };
}
