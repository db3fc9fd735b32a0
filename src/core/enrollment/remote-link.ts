// The messages of a remote pane's link, between the far end's helper and the local relay of
// `tmux-run ssh` (docs/remote.md), framed as the broker's are (src/core/protocol/framing.ts). The far
// end's first connection through the forward is the control link: `hello` (who it is), the
// relay's `welcome` (the enrollment record, secret included, and the relay's CLOCK_MONOTONIC) or `refused` (why not), the far
// end's `ready` (its service is up: the pane is published), `want` (open one more data
// connection), the relay's `beat` (the link lives), and the far end's `audit` (one entry of its
// audit trail for the local one: src/remote/relay-audit.ts checks it). For the screen check (bash
// without its builtin, fish), the far end's `read_screen` asks for its pane's screen and the
// relay's `screen` answers with what tmux printed (or why not): the relay picks the pane and the
// questions (src/remote/relay-screen.ts); the request names neither. `hold_screen` (nothing in
// it) says a read is coming: the relay starts its tmux client for it ahead, as a local helper does. Every other connection
// starts with `data` and its key, then carries the broker-helper protocol unchanged, end to end.
import type { Transport } from '../protocol/transport.js';
import { EDITOR_CHECKS, SHELL_NAMES, type EditorCheck, type EnrollmentRecord, type ShellName } from './record.js';

export const LINK_VERSION = 1;

/**
 * The relay says `beat` on the control link this often; a far end that hears nothing on it for
 * LINK_SILENT_MS takes the session as over (a dropped network that its sshd has not noticed yet:
 * docs/remote.md, "When the session ends") and stops its runs.
 */
export const LINK_BEAT_MS = 2000;
export const LINK_SILENT_MS = 15_000;

/**
 * A data link's transport with each request's take-by time (`take_by`, on the local side's
 * CLOCK_MONOTONIC: src/core/protocol/limits.ts HELPER_TAKE_MS) moved onto this host's clock, which
 * counts from another boot. `offsetMs` is this host's clock minus the local one, taken when the
 * welcome arrived: the link's one-way delay (well under a millisecond over a live session) only
 * makes the deadline that much earlier here.
 */
export function onThisClock(t: Transport, offsetMs: number): Transport {
  const moved: Transport = {
    send: (m) => t.send(m),
    close: () => t.close(),
    ...(t.hold ? { hold: (k: boolean) => t.hold?.(k) } : {}),
    ...(t.backlog ? { backlog: () => t.backlog?.() ?? 0 } : {}),
  };
  t.onmessage = (m) => {
    const r = m as { take_by?: unknown } | null;
    if (r !== null && typeof r === 'object' && typeof r.take_by === 'number') r.take_by += offsetMs;
    moved.onmessage?.(m);
  };
  t.onclose = (e) => moved.onclose?.(e);
  return moved;
}

export interface Hello {
  type: 'hello';
  version: number;
  build: string;
  hostname: string;
  boot: string;
  shell: ShellName;
  editor_check: EditorCheck;
  editor_check_reason?: string;
  shell_pid: number;
  shell_start: string;
  helper_pid: number;
}

/** The most a `screen` answer carries (what tmux printed of the pane: far below a frame's limit). */
export const MAX_SCREEN_TEXT = 512 * 1024;

export type FarMessage =
  | Hello
  | { type: 'ready' }
  | { type: 'data'; key: string }
  | { type: 'read_screen'; id: number }
  | { type: 'hold_screen' }
  | { type: 'audit'; entry: unknown };
export type RelayMessage =
  | { type: 'welcome'; record: EnrollmentRecord; key: string; now: number }
  | { type: 'refused'; message: string }
  | { type: 'want' }
  | { type: 'screen'; id: number; out?: string; error?: string }
  | { type: 'beat' };

const str = (x: unknown, max = 256): x is string => typeof x === 'string' && x.length > 0 && x.length <= max;
const pid = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) > 1;
const readId = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;

/** A far end's message, or undefined when it is not one. */
export function checkFar(raw: unknown): FarMessage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const m = raw as Record<string, unknown>;
  switch (m.type) {
    case 'ready':
      return { type: 'ready' };
    case 'data':
      return str(m.key, 64) ? { type: 'data', key: m.key } : undefined;
    case 'read_screen':
      return readId(m.id) ? { type: 'read_screen', id: m.id } : undefined;
    case 'hold_screen':
      return { type: 'hold_screen' };
    case 'audit':
      return { type: 'audit', entry: m.entry };
    case 'hello':
      return typeof m.version === 'number' &&
        str(m.build, 64) &&
        str(m.hostname) &&
        str(m.boot, 64) &&
        (SHELL_NAMES as readonly unknown[]).includes(m.shell) &&
        (EDITOR_CHECKS as readonly unknown[]).includes(m.editor_check) &&
        (m.editor_check_reason === undefined || str(m.editor_check_reason, 1024)) &&
        pid(m.shell_pid) &&
        str(m.shell_start, 32) &&
        pid(m.helper_pid)
        ? (m as unknown as Hello)
        : undefined;
    default:
      return undefined;
  }
}

/** A relay's message, or undefined when it is not one (the record is checked by its reader's rules). */
export function checkRelay(raw: unknown): RelayMessage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const m = raw as Record<string, unknown>;
  switch (m.type) {
    case 'want':
      return { type: 'want' };
    case 'screen':
      return readId(m.id) &&
        (typeof m.out === 'string' ? m.out.length <= MAX_SCREEN_TEXT && m.error === undefined : str(m.error, 1024))
        ? { type: 'screen', id: m.id, ...(typeof m.out === 'string' ? { out: m.out } : { error: m.error as string }) }
        : undefined;
    case 'beat':
      return { type: 'beat' };
    case 'refused':
      return str(m.message, 4096) ? { type: 'refused', message: m.message } : undefined;
    case 'welcome':
      return typeof m.record === 'object' && m.record !== null && str(m.key, 64) && Number.isFinite(m.now)
        ? { type: 'welcome', record: m.record as EnrollmentRecord, key: m.key, now: m.now as number }
        : undefined;
    default:
      return undefined;
  }
}
