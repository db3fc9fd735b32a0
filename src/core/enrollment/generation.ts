// Generations: names for one tmux server, one shell process, one enrollment, one pane listing.
import { createHash, randomBytes } from 'node:crypto';

const sha256hex = (s: string): string => createHash('sha256').update(s).digest('hex');

/** One tmux server instance: its pid, its start time in /proc, its socket, this boot. */
export function serverGeneration(socketPath: string, serverPid: number, startTicks: string, boot: string): string {
  return `${serverPid}.${startTicks}.${sha256hex(`tmux-server\n${boot}\n${socketPath}`).slice(0, 16)}`;
}

/** One shell process: pid plus start time (a reused pid is a new generation), 32 hex. */
export function processGeneration(pid: number, startTicks: string, boot: string): string {
  return sha256hex(`process\n${boot}\n${pid}\n${startTicks}`).slice(0, 32);
}

/** A fresh id of 32 lowercase hex digits (enrollment generations, run ids, nonces). */
export function freshId(): string {
  return randomBytes(16).toString('hex');
}

export interface Generations {
  server_generation: string;
  pane_id: string;
  process_generation: string;
  enrollment_generation: string;
}

/** The listed `generation` of a pane: changes whenever any of the four parts does. */
export function paneGeneration(g: Generations): string {
  return sha256hex(
    `pane\n${g.server_generation}\n${g.pane_id}\n${g.process_generation}\n${g.enrollment_generation}`,
  ).slice(0, 32);
}

/** sha256 of a script's UTF-8 bytes, 64 hex. */
export function scriptDigest(script: string): string {
  return createHash('sha256').update(script, 'utf8').digest('hex');
}
