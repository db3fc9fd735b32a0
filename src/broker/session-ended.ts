// `session_ended`: what a call learns when its pane was on another host and the ssh session that
// carried it is gone (docs/remote.md, "When the session ends"). A call under way sees its link
// break; the ssh client exits as its sockets close, and the broker, which gives a lost helper a
// moment to show dead (run-exchange.ts afterHelperLoss: for a remote pane, its session), asks here
// before it says helper_lost. A call that comes after finds no record (the relay took it down): the broker
// remembers the remote panes it listed or resolved (their generation, pane and binding, in memory,
// a bounded number) and, while that session is over, says so instead of not_enrolled. A fresh broker
// that never saw the pane can only say not_enrolled.
import type { EnrollmentRecord } from '../core/enrollment/record.js';
import type { RemoteBinding } from '../core/enrollment/remote-binding.js';
import { sessionOver } from '../core/enrollment/remote-listing.js';
import type { Target } from './result.js';

/** How many remote panes a broker remembers (the oldest forgotten first). */
const REMEMBERED = 256;

const remembered = new Map<string, { pane_id: string; remote: RemoteBinding }>();

/** Remembers a remote pane's binding by its generation (local panes are not kept). */
export function noteRemote(rec: EnrollmentRecord): void {
  if (!rec.remote) return;
  remembered.delete(rec.generation);
  remembered.set(rec.generation, { pane_id: rec.pane_id, remote: rec.remote });
  if (remembered.size > REMEMBERED) remembered.delete(remembered.keys().next().value!);
}

/** The host as a message names it: the destination, and the host's own name when it differs. */
export const hostWords = (b: RemoteBinding): string =>
  b.hostname === b.destination ? b.destination : `${b.destination} (${b.hostname})`;

/** What the far end does about its runs when the session ends, for every session_ended message. */
export const FAR_STOPS =
  "the far end's helper stops the process group of every run it started when its session ends (a script that detached itself is on its own)";

/** The refusal's words for pane `paneId`, the far end of a session over `b` that is over (`over` says why). */
export const endedWords = (paneId: string, b: RemoteBinding, over: string): string =>
  `pane ${paneId} was the far end of an ssh session to ${hostWords(b)}, and that session is over (${over}); ${FAR_STOPS}. Nothing was sent; a new session (tmux-run ssh) is a new pane generation: list panes again with tmux_enrolled_panes`;

/** The refusal's words for a target this broker knew as a remote pane whose ssh session is over, or undefined. */
export function endedTarget(target: Target): string | undefined {
  const s = remembered.get(target.generation);
  if (!s || s.pane_id !== target.id) return undefined;
  const over = sessionOver(s.remote);
  return over && endedWords(target.id, s.remote, over);
}

/** For a link to a remote pane that broke: why its ssh session is over, or undefined (a local pane, or the session lives). */
export function sessionEnded(rec: EnrollmentRecord): string | undefined {
  return rec.remote ? sessionOver(rec.remote) : undefined;
}
