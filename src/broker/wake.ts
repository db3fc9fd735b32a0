// The broker's wake: before a call that needs the helper of a dormant pane (a run, a start, a
// wait, a cancel, an output read, input, a screen, attach), the pane's shell is asked to start it
// again (src/core/enrollment/dormant.ts), and the call goes on once the new helper serves the same
// enrollment under its own pid; before anything is sent. A listing never wakes a pane.
import { lstatSync } from 'node:fs';
import { recordPath, REWAKE_MS } from '../core/enrollment/layout.js';
import { readRecord, type EnrollmentRecord } from '../core/enrollment/record.js';
import { readStatus, type PaneStatus } from '../core/enrollment/pane-status.js';
import type { ErrorCode } from '../core/protocol/errors.js';
import { askShell, dormantHelperGone, dormantShell, isDormant } from '../core/enrollment/dormant.js';
import { procStat, statBusy } from '../core/os/proc.js';
import { failure, type Target, type ToolResult } from './result.js';
import { isRecord, resolveTarget, type Refuse } from './authorize.js';
import { recordSocket, removeEnrollmentFiles } from './registry.js';
import { ConnectError, connectHelper } from './helper-client.js';
import type { Transport } from '../core/protocol/transport.js';

/** How long a woken helper has to come up (the shell's own bound on a silent one is 10 s: it says so first). */
export const WAKE_MS = 12_000;
/** How long the shell has to start it while a command holds its prompt, before the call is refused shell_busy. */
const BUSY_WAKE_MS = 1000;
const POLL_MS = 4;

/** resolveTarget, then the wake when the pane is dormant: the record to talk to, or the refusal. */
export async function resolveAwake(
  dir: string,
  target: Target,
  refuse: Refuse,
  after = '',
): Promise<EnrollmentRecord | ToolResult> {
  const rec = resolveTarget(dir, target, refuse, after);
  return isRecord(rec) ? awaken(dir, rec, refuse) : rec;
}

/** Why a wake did not give a helper: the call's refusal. */
interface NoWake {
  code: ErrorCode;
  message: string;
}

/** Wakes in progress in this broker, by enrollment: concurrent calls share one, and go on in call order. */
const waking = new Map<string, Promise<EnrollmentRecord | NoWake>>();
/** How many calls wait for each wake in progress (a call's turn is its place among them). */
const turns = new Map<string, number>();
/** How long a call that waited for a wake waits for the next run before it to be admitted (a wait or output call admits none). */
const TURN_MS = 1000;

/**
 * Calls that waited for one wake go on in the order they came: the one in place `before` (0:
 * the first) once the new helper has admitted as many more runs (its status's `admitted`), or
 * after TURN_MS without one, so that they reach its queue in call order, as they would have one
 * after the other. (Runs another broker sends meanwhile count too: between brokers no order holds.)
 */
async function myTurn(dir: string, rec: EnrollmentRecord, before: number): Promise<void> {
  if (before === 0) return;
  // (Counted from what it had admitted when they resumed: another broker's runs may be there too.)
  const base = readStatus(dir, rec)?.admitted ?? 0;
  let seen = -1;
  let until = 0;
  for (;;) {
    const admitted = (readStatus(dir, rec)?.admitted ?? 0) - base;
    if (admitted >= before) return;
    if (admitted > seen) [seen, until] = [admitted, Date.now() + TURN_MS];
    if (Date.now() >= until) return;
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** `rec` itself when its pane is awake; when it is dormant, the record of the helper started again for it (or the refusal). */
export async function awaken(
  dir: string,
  rec: EnrollmentRecord,
  refuse: Refuse,
): Promise<EnrollmentRecord | ToolResult> {
  const status = readStatus(dir, rec);
  if (!isDormant(status)) return rec;
  let wake = waking.get(rec.enrollment_generation);
  if (!wake) {
    wake = wakeOnce(dir, rec, status).finally(() => {
      waking.delete(rec.enrollment_generation);
      turns.delete(rec.enrollment_generation);
    });
    waking.set(rec.enrollment_generation, wake);
  }
  const turn = (turns.get(rec.enrollment_generation) ?? 0) + 1;
  turns.set(rec.enrollment_generation, turn);
  const out = await wake;
  if ('code' in out) return refuse(out.code, out.message);
  await myTurn(dir, out, turn - 1);
  return out;
}

/**
 * A link to the helper of `rec`, a pane found awake, made by `connect` (given its socket). The
 * helper may have let itself go since it was found awake (a dormant helper serves for 100 ms more,
 * so a broker that took longer than that to connect finds no socket): when the connection fails,
 * nothing was sent, and the pane is dormant now, it is woken as any dormant pane is, once, and
 * connected again. The record the link serves (the woken helper's), or the wake's refusal; a
 * connection that fails otherwise throws its ConnectError, as `connect` did.
 */
export async function connectAwake<T>(
  dir: string,
  rec: EnrollmentRecord,
  refuse: Refuse,
  connect: (socket: string) => Promise<T>,
): Promise<{ rec: EnrollmentRecord; link: T } | ToolResult> {
  try {
    return { rec, link: await connect(recordSocket(dir, rec)) };
  } catch (e) {
    if (!(e instanceof ConnectError) || !isDormant(readStatus(dir, rec))) throw e;
  }
  const woken = await awaken(dir, rec, refuse);
  if (!isRecord(woken)) return woken;
  return { rec: woken, link: await connect(recordSocket(dir, woken)) };
}

/**
 * connectAwake with a fresh link (connectHelper within `timeoutMs`), for a call that asks its helper
 * one question: undefined when it cannot be connected (nothing was sent), a refusal with code and
 * message (not_sent) when the wake was refused.
 */
export async function linkAwake(
  dir: string,
  rec: EnrollmentRecord,
  timeoutMs: number,
): Promise<{ rec: EnrollmentRecord; link: Transport } | ToolResult | undefined> {
  try {
    return await connectAwake(
      dir,
      rec,
      (code, message) => failure(code, message, 'not_sent'),
      (socket) => connectHelper(socket, timeoutMs),
    );
  } catch {
    return undefined;
  }
}

/** The refusal of a dormant pane whose shell exited. */
const shellExited = (pane: string): NoWake => ({
  code: 'not_enrolled',
  message: `pane ${pane}'s shell has exited (its helper was dormant); list panes again`,
});

/** Before a wake: the refusal when the dormant pane's shell exited or ran exec (its files then removed); undefined while it is the same. */
function shellEnded(
  dir: string,
  rec: EnrollmentRecord,
  status: PaneStatus & { shell_image: string },
): NoWake | undefined {
  const fate = dormantShell(rec, status, procStat(rec.shell_pid));
  if (fate === 'same') return undefined;
  removeEnrollmentFiles(dir, rec, undefined, 'broker');
  return fate === 'gone'
    ? shellExited(rec.pane_id)
    : {
        code: 'stale_generation',
        message: `pane ${rec.pane_id}'s shell was replaced (exec) while its helper was dormant: a new shell is a new enrollment; list panes again`,
      };
}

/** One wake of a dormant pane: the shell asked (again every REWAKE_MS: a signal can be lost) until the new helper serves, or the refusal. */
async function wakeOnce(
  dir: string,
  rec: EnrollmentRecord,
  status: PaneStatus & { shell_image: string },
): Promise<EnrollmentRecord | NoWake> {
  const pane = rec.pane_id;
  const exited = shellExited(pane);
  const ended = shellEnded(dir, rec, status);
  if (ended) return ended;
  const started = Date.now();
  let asked = 0;
  let busyBefore = false;
  for (;;) {
    const now = Date.now();
    // Asked once the dormant helper has gone (its D is then in the channel before the U).
    if (now - asked >= REWAKE_MS && dormantHelperGone(status, procStat(rec.helper_pid))) {
      if (!askShell(dir, rec, 'U'))
        return {
          code: 'stale_generation',
          message: `pane ${pane}'s shell no longer holds its enrollment's channel; list panes again`,
        };
      // A command holds the prompt (at two asks in a row: not a moment of the shell's own), or has
      // for BUSY_WAKE_MS: the U waits in the channel for the next prompt, and the call is refused.
      const busy = statBusy(procStat(rec.shell_pid));
      if (busy && (busyBefore || now - started >= BUSY_WAKE_MS))
        return {
          code: 'shell_busy',
          message: `pane ${pane}'s helper is dormant and a command runs in the foreground of its shell; the shell starts its helper at its next prompt: retry then`,
        };
      asked = now;
      busyBefore = busy;
    }
    // Awake again, the same helper (a call came in its last moment, before it went).
    const again = readStatus(dir, rec);
    if (again && !isDormant(again) && !dormantHelperGone(again, procStat(rec.helper_pid))) return rec;
    const woken = wokenRecord(dir, rec);
    if (woken === null)
      return dormantShell(rec, status, procStat(rec.shell_pid)) !== 'same'
        ? exited
        : {
            code: 'wake_failed',
            message: `pane ${pane}'s helper was dormant and could not be started again (the pane says why; its enrollment has ended)`,
          };
    if (woken) return woken;
    if (now - started >= WAKE_MS)
      return {
        code: 'wake_failed',
        message: `pane ${pane}'s helper was dormant and did not come up within ${WAKE_MS / 1000} s`,
      };
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/**
 * The record once a new helper serves it (its pid in the record, its status awake, its socket
 * there); undefined while not yet; null when the record is gone (the wake failed, or the
 * enrollment ended).
 */
function wokenRecord(dir: string, rec: EnrollmentRecord): EnrollmentRecord | undefined | null {
  let now: EnrollmentRecord;
  try {
    now = readRecord(recordPath(dir, rec.enrollment_generation));
  } catch {
    return null;
  }
  if (now.helper_pid === rec.helper_pid || now.generation !== rec.generation) return undefined;
  const s = readStatus(dir, now);
  const helper = procStat(now.helper_pid);
  if (!s || isDormant(s) || !helper || helper.ppid !== now.shell_pid || helper.startTicks !== s.helper_start)
    return undefined;
  try {
    return lstatSync(recordSocket(dir, now)).isSocket() ? now : undefined;
  } catch {
    return undefined;
  }
}
