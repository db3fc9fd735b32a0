// How the local side lists and trusts a remote pane's record (src/broker/registry.ts asks here
// for records with `remote`): its shell and helper live at the far end, so /proc here says
// nothing of them. What is checked here is the local half of the binding (the relay and its ssh
// client, the same processes as at enrollment, and the pane); the far half answers the ping
// through the relay (the same helper, shell and generation). A run's process group named by a
// remote helper is the far end's: the broker never signals it here (localGroup).
import { paneGeneration } from './generation.js';
import type { EnrollmentRecord } from './record.js';
import { procStat } from '../os/proc.js';
import type { ListedHost, RemoteBinding } from './remote-binding.js';

export type { ListedHost } from './remote-binding.js';

/** What makes a remote record unfit to act on here (its relay or ssh gone, a forged generation), or undefined. */
export function remoteProblem(rec: EnrollmentRecord): string | undefined {
  const b = rec.remote;
  if (!b) return undefined;
  if (paneGeneration(rec) !== rec.generation)
    return 'its generation does not match its pane, server, shell and enrollment';
  const over = sessionOver(b);
  return over && `its ssh session is over (${over})`;
}

/** Why the ssh session of a binding is over here (which of its relay or ssh client is gone), or undefined while both live. */
export function sessionOver(b: RemoteBinding): string | undefined {
  const relay = procStat(b.relay_pid);
  if (!relay || 'ZX'.includes(relay.state) || relay.startTicks !== b.relay_start)
    return `tmux-run ssh, pid ${b.relay_pid}, is gone`;
  const ssh = procStat(b.ssh_pid);
  if (!ssh || 'ZX'.includes(ssh.state) || ssh.startTicks !== b.ssh_start || ssh.ppid !== b.relay_pid)
    return `the ssh client, pid ${b.ssh_pid}, is gone`;
  return undefined;
}

/** A helper's answer to a ping, as far as a record's binding goes. */
export interface PongBinding {
  generation: string;
  pid: number;
  shell_pid: number;
}
/** The pane as tmux lists it, as far as a record's binding goes. */
export interface PaneBinding {
  server_pid: number;
  pane_tty: string;
}

/** Whether a ping and the pane name the record's generation, helper, shell, tmux server and terminal (local or remote). */
export const answersFor = (rec: EnrollmentRecord, pong: PongBinding, pane: PaneBinding): boolean =>
  pong.generation === rec.generation &&
  pong.pid === rec.helper_pid &&
  pong.shell_pid === rec.shell_pid &&
  pane.server_pid === rec.tmux_server_pid &&
  pane.pane_tty === rec.shell_tty;

/** What a ping through the relay must say for the record to be live: the same helper, shell and generation. */
export function remoteAnswers(rec: EnrollmentRecord, pong: PongBinding, pane: PaneBinding): boolean {
  return answersFor(rec, pong, pane) && remoteProblem(rec) === undefined;
}

/** The listing's `host`: the destination as given and the name the far end reports; null for a local pane. */
export const listedHost = (rec: EnrollmentRecord): ListedHost | null =>
  rec.remote ? { destination: rec.remote.destination, name: rec.remote.hostname } : null;

/** The process group a broker may stop here: a local helper's; never a number the far end gave. */
export const localGroup = (rec: Pick<EnrollmentRecord, 'remote'>, pgid: number): number | undefined =>
  rec.remote ? undefined : pgid;
