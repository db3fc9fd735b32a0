// A helper with nothing to do for the pane's idle time (TMUX_RUN_IDLE, src/core/enrollment/idle-time.ts)
// lets itself go: it says `dormant` in its status file, removes its socket, tells the shell over
// the channel (which then keeps its side open and can start a helper again: src/broker/wake.ts),
// and exits. The enrollment's record, generations and secret stay; it holds no run by rule.
//
// Nothing to do means: no job at all (queued, running, awaiting the person's answer, in the
// background, or a finished result still held for a wait), and no link open to its socket (a
// broker mid-call, a broker's kept link, which it closes after 10 s idle: src/broker/link-pool.ts,
// a `tmux-run watch` or `attach`). The idle time counts from the last moment that was not so.
import type { Server } from 'node:net';
import { procStat } from '../src/core/os/proc.js';
import { removeQuietly } from '../src/core/enrollment/record.js';
import { parseIdle } from '../src/core/enrollment/idle-time.js';

/** How often, at most, the helper looks whether it has been idle long enough. */
const CHECK_MS = 1000;
/**
 * How long it still serves once its status says dormant: a broker that read the status just
 * before connects within it (and it stays up); one that reads it now wakes it (src/broker/wake.ts).
 */
const GRACE_MS = 100;

export interface DormancyDeps {
  idleMs: number;
  /** True while the helper has work (any job). */
  hasWork: () => boolean;
  server: Server;
  sock: string;
  shellPid: number;
  /** Writes the dormant status (helper/status.ts); false when it could not. */
  sleep: (shellImage: string) => boolean;
  /** Writes the awake status again (a call came within the grace). */
  awake: () => void;
  /** Tells the shell (resolves once told, or after a short bound). */
  tellShell: () => Promise<void>;
  log: (m: string) => void;
  /** Leaves: the channel closed, the process gone (its files kept). */
  exit: () => void;
}

/** What TMUX_RUN_IDLE (as the shell passed it) means for this helper, and when it was not understood, why (said once). */
export function idleSetting(woken: boolean, say: (text: string) => void): number | null {
  const idle = parseIdle(process.env.TMUX_RUN_IDLE);
  if (idle.problem && !woken) say(`tmux-run: ${idle.problem}`);
  return idle.ms;
}

/** Starts the idle watch; returns a stop function. */
export function watchIdle(d: DormancyDeps): () => void {
  let lastBusy = Date.now();
  let going = false;
  const check = (): void => {
    if (going) return;
    void idleNow(d).then((idle) => {
      if (going) return;
      if (!idle) lastBusy = Date.now();
      if (!idle || Date.now() - lastBusy < d.idleMs) return;
      going = true;
      void goDormant(d).then((gone) => {
        if (gone) return;
        going = false;
        lastBusy = Date.now();
      });
    });
  };
  const timer = setInterval(check, Math.min(CHECK_MS, d.idleMs));
  timer.unref();
  return () => clearInterval(timer);
}

/** No job and no link open (a watch, attach or broker link counts, kept ones too). */
function idleNow(d: DormancyDeps): Promise<boolean> {
  return new Promise((resolve) => d.server.getConnections((e, links) => resolve(!e && links === 0 && !d.hasWork())));
}

/**
 * The steps of letting go, in order: the status first (a broker that looks now wakes it), a grace
 * in which a call that came anyway keeps it up, then the socket, the shell, the exit. True once gone.
 */
async function goDormant(d: DormancyDeps): Promise<boolean> {
  const image = procStat(d.shellPid)?.image;
  // Not written (the enrollment is ending, or the disk is full): it stays up.
  if (image === undefined || !d.sleep(image)) return false;
  await new Promise((r) => setTimeout(r, GRACE_MS));
  if (!(await idleNow(d))) {
    d.awake();
    return false;
  }
  d.log(`dormant: idle for ${Math.round(d.idleMs / 1000)} s; the shell starts a helper again when one is needed`);
  d.server.close();
  removeQuietly(d.sock);
  await d.tellShell();
  d.exit();
  return true;
}
