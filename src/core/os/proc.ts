// Read-only facts about processes from /proc: parent, group, terminal, start time.
import { closeSync, openSync, readFileSync, readSync, readdirSync, statSync } from 'node:fs';

const scratch = Buffer.allocUnsafe(4096);

/**
 * The text of a small /proc file. These are read on every run (the shell's state and umask,
 * whether it and the tmux server still live): one read into a reused buffer, where readFileSync
 * also asks for the size and reads again to see the end. A file that fills the buffer is read whole.
 */
function readProcText(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const n = readSync(fd, scratch, 0, scratch.length, null);
    if (n < scratch.length) return scratch.toString('latin1', 0, n);
  } finally {
    closeSync(fd);
  }
  return readFileSync(path, 'latin1');
}

export interface ProcStat {
  pid: number;
  ppid: number;
  pgrp: number;
  session: number;
  ttyNr: number;
  tpgid: number;
  startTicks: string;
  /** State letter (R, S, Z...); Z is a zombie: dead, not yet reaped by its parent. */
  state: string;
  /**
   * The program image: where its code and stack start (fields 26 and 28), placed anew at random by
   * every exec (ASLR). The same pid and start time with another image is the same process after an
   * `exec`: another program, as a shell that ran `exec bash` is.
   */
  image: string;
}

/** Parses /proc/PID/stat; undefined when the process is gone. Fields are counted after the last ')'. */
export function procStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readProcText(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
  return parseProcStat(pid, text);
}

/** Pure parser for the text of /proc/PID/stat (exported for tests). */
export function parseProcStat(pid: number, text: string): ProcStat | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const f = text
    .slice(close + 2)
    .trim()
    .split(' ');
  // f[0] is field 3 (state); field n is f[n - 3].
  const num = (n: number): number => Number(f[n - 3]);
  const start = f[22 - 3];
  if (start === undefined) return undefined;
  return {
    pid,
    ppid: num(4),
    pgrp: num(5),
    session: num(6),
    ttyNr: num(7),
    tpgid: num(8),
    startTicks: start,
    state: f[0] ?? '?',
    image: `${f[26 - 3] ?? ''}:${f[28 - 3] ?? ''}`,
  };
}

/** The shell runs a command in the foreground (its terminal's foreground group is not its own). */
export const shellBusy = (shellPid: number): boolean => statBusy(procStat(shellPid));

/** shellBusy from the shell's stat, read already. */
export function statBusy(st: ProcStat | undefined): boolean {
  // tpgid -1: no controlling terminal to tell from; the editor's answer (or its silence) decides.
  return st !== undefined && st.tpgid > 0 && st.tpgid !== st.pgrp;
}

/** The umask of a live process (the Umask: line of /proc/PID/status), or undefined. */
export function procUmask(pid: number): number | undefined {
  try {
    const m = /^Umask:\s*([0-7]+)$/m.exec(readProcText(`/proc/${pid}/status`));
    return m?.[1] === undefined ? undefined : parseInt(m[1], 8);
  } catch {
    return undefined;
  }
}

let bootIdCache: string | undefined;
/** This boot's id: start times only name a process within one boot. */
export function bootId(): string {
  if (bootIdCache === undefined) {
    try {
      bootIdCache = readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim();
    } catch {
      bootIdCache = 'unknown-boot';
    }
  }
  return bootIdCache;
}

/** True when a process group still has members. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The children of a live process (/proc/PID/task/PID/children: those of its main thread), or none. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The arguments a live process was started with (/proc/PID/cmdline), or undefined. */
export function procArgv(pid: number): string[] | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`);
    if (raw.length === 0) return undefined;
    const args = raw.toString('utf8').split('\0');
    if (args.at(-1) === '') args.pop();
    return args;
  } catch {
    return undefined;
  }
}

/**
 * Live session leaders (session id and group id equal to the pid) of this user that started at
 * or after `afterTicks` (USER_HZ ticks since boot, as /proc/PID/stat counts them).
 */
export function sessionLeadersSince(afterTicks: number): ProcStat[] {
  const uid = process.getuid?.();
  const out: ProcStat[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const st = procStat(pid);
    if (!st || st.state === 'Z' || st.session !== pid || st.pgrp !== pid || Number(st.startTicks) < afterTicks)
      continue;
    try {
      if (uid !== undefined && statSync(`/proc/${name}`).uid !== uid) continue;
    } catch {
      continue;
    }
    out.push(st);
  }
  return out;
}
