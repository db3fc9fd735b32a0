// Processes as /proc shows them: liveness (zombies count as gone), parents and descendants,
// process groups, argv and environment, memory, descriptors and CPU time. Read-only.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { waitUntil } from './waiting.js';

interface ProcStat {
  pid: number;
  state: string;
  ppid: number;
  pgid: number;
  /** utime + stime in clock ticks. */
  cpuTicks: number;
  startTime: string;
}

// Parse /proc/PID/stat (or a thread's, /proc/PID/task/TID/stat); fields counted after the last ')'
// because comm may hold anything.
function readStat(pid: number, tid?: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const ppid = Number(fields[1]);
  const pgid = Number(fields[2]);
  const cpuTicks = Number(fields[11]) + Number(fields[12]);
  const startTime = fields[19];
  if (state === undefined || startTime === undefined || !Number.isInteger(ppid)) return undefined;
  return { pid, state, ppid, pgid, cpuTicks, startTime };
}

const running = (stat: ProcStat): boolean => stat.state !== 'Z' && stat.state !== 'X';

/** Every pid currently listed in /proc. */
export function allPids(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/**
 * True while pid names a running (not zombie) process; zombies count as gone since PID 1 may never
 * reap them. A multi-threaded process (Node) killed shows its first thread as a zombie while the
 * others still exit, holding its descriptors (a listening socket still takes connections): it
 * counts as running until every thread has exited.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (!existsSync('/proc/self/stat')) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
  const stat = readStat(pid);
  if (stat === undefined) return false;
  if (running(stat)) return true;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return false;
  }
  return tids.some((t) => {
    const st = readStat(pid, Number(t));
    return st !== undefined && running(st);
  });
}

/** Start time of pid in clock ticks since boot (field 22 of /proc/PID/stat), to tell a reused pid apart. */
export function processStartTime(pid: number): string | undefined {
  return readStat(pid)?.startTime;
}

/** The parent of pid, or undefined when it is gone. */
export function parentOf(pid: number): number | undefined {
  return readStat(pid)?.ppid;
}

/** CPU time (user + system) pid has used so far, in ms (clock ticks of 10 ms); NaN when it is gone. */
export function cpuMs(pid: number): number {
  const stat = readStat(pid);
  return stat === undefined ? NaN : stat.cpuTicks * 10;
}

/** Live (non-zombie) descendants of pid, found by walking ppid links in /proc; pid itself excluded. */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  const alive = new Set<number>();
  for (const p of allPids()) {
    const stat = readStat(p);
    if (stat === undefined) continue;
    if (running(stat)) alive.add(p);
    const list = children.get(stat.ppid) ?? [];
    list.push(p);
    children.set(stat.ppid, list);
  }
  const out: number[] = [];
  const queue = [pid];
  const seen = new Set<number>([pid]);
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      if (seen.has(child)) continue;
      seen.add(child);
      queue.push(child);
      if (alive.has(child)) out.push(child);
    }
  }
  return out.sort((a, b) => a - b);
}

/** Live (non-zombie) processes in process group pgid. */
export function groupMembers(pgid: number): number[] {
  return allPids().filter((pid) => {
    const stat = readStat(pid);
    return stat !== undefined && running(stat) && stat.pgid === pgid;
  });
}

/** Waits until nothing of group pgid runs any more. */
export function groupGone(pgid: number, ms = 5000): Promise<true> {
  return waitUntil(() => groupMembers(pgid).length === 0, ms, `process group ${pgid} to be gone`);
}

/** The argv of pid with its NULs turned to spaces, or '' when unreadable. */
export function cmdlineOf(pid: number): string {
  return readProcText(pid, 'cmdline');
}

// Read a NUL-separated /proc file as text, or '' when unreadable.
function readProcText(pid: number, name: 'cmdline' | 'environ'): string {
  try {
    return readFileSync(`/proc/${pid}/${name}`).toString('utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/** The NUL-separated argv of every live process, as one string per process. */
export function allCmdlines(): Array<{ pid: number; argv: string }> {
  const out: Array<{ pid: number; argv: string }> = [];
  for (const pid of allPids()) {
    try {
      out.push({ pid, argv: readFileSync(`/proc/${pid}/cmdline`).toString('latin1') });
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Resident set size of a process in KiB (VmRSS of /proc/PID/status). */
export function rssKiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
  if (!m?.[1]) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]);
}

/** How many file descriptors pid holds open. */
export function openDescriptors(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

// This process and its ancestors: never counted as leftovers.
function selfAndAncestors(): Set<number> {
  const out = new Set<number>();
  for (let pid: number | undefined = process.pid; pid !== undefined && pid > 1 && !out.has(pid);) {
    out.add(pid);
    pid = readStat(pid)?.ppid;
  }
  return out;
}

export interface Reference {
  pid: number;
  what: string;
}

/** Live processes (other than this one and its ancestors) whose argv or environment mention one of the needles. */
export function processesReferencing(needles: string[]): Reference[] {
  const skip = selfAndAncestors();
  const out: Reference[] = [];
  for (const pid of allPids()) {
    if (skip.has(pid) || !processAlive(pid)) continue;
    const cmdline = readProcText(pid, 'cmdline');
    const environ = readProcText(pid, 'environ');
    const where = needles.some((n) => cmdline.includes(n))
      ? 'argv'
      : needles.some((n) => environ.includes(n))
        ? 'environment'
        : undefined;
    if (where === undefined) continue;
    out.push({ pid, what: `pid ${pid} (${cmdline.trim().slice(0, 120) || '?'}): ${where} mentions the test server` });
  }
  return out;
}

/** SIGKILL pid, when it is still there. */
export function killHard(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone meanwhile
  }
}
