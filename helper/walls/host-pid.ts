// A pid inside the walls as this helper's pid namespace numbers it: the run's /bin/sh is a child of
// its reaper, itself a child of the waiter, and /proc/PID/status's NSpid line lists a process's pid
// in each namespace it is in, the innermost last.
import { readFileSync } from 'node:fs';
import { childrenOf } from '../../src/core/os/proc.js';

/** The innermost pid of a process (NSpid's last field), or undefined when it is gone. */
export function innerPid(pid: number): number | undefined {
  try {
    const m = /^NSpid:\s*([\d\s]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m ? Number(m[1]!.trim().split(/\s+/).at(-1)) : undefined;
  } catch {
    return undefined;
  }
}

/** The host pid of the waiter's grandchild numbered `inner` in the walls, or undefined. */
export function hostPid(waiter: number | undefined, inner: number): number | undefined {
  if (waiter === undefined) return undefined;
  for (const reaper of childrenOf(waiter)) {
    for (const pid of childrenOf(reaper)) if (innerPid(pid) === inner) return pid;
  }
  return undefined;
}
