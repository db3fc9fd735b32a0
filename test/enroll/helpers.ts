// Shared pieces of the enrollment suites: where the snippet is, what the broker lists, which
// helper processes belong to a shell, and what files an enrollment leaves in the run directory.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listEnrolled, type PaneListing } from '../../src/broker/registry.js';
import { descendantsOf, waitUntil, type Pane, type TmuxServer } from '../support/tmux.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const SNIPPET = join(ROOT, 'shell/tmux-run.zsh');
export const HELPER_MAIN = join(ROOT, 'dist/helper/main.js');
export const SOURCE = `source ${SNIPPET}`;
export const HEX32 = /^[0-9a-f]{32}$/;

/** What the broker sees in `dir`, cleaning up dead records as it goes. */
export function listed(dir: string): Promise<PaneListing[]> {
  return listEnrolled(dir, { cleanup: true });
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

function ppidOf(pid: number): number | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Live helper processes whose parent is `shellPid` (node running dist/helper/main.js). */
export function helperChildren(shellPid: number): number[] {
  return descendantsOf(shellPid).filter((pid) => ppidOf(pid) === shellPid && cmdline(pid).includes(HELPER_MAIN));
}

/** Every live helper process anywhere whose argv names a channel in `dir`. */
export function helpersIn(dir: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const c = cmdline(Number(name));
    if (c.includes(HELPER_MAIN) && c.includes(`${dir}/`)) out.push(Number(name));
  }
  return out;
}

/** The names in the run directory (sorted), or [] when it is gone. */
export function filesIn(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** Waits until the run directory holds nothing (every enrollment has cleaned up after itself). */
export async function waitEmpty(dir: string, timeoutMs = 10_000): Promise<void> {
  try {
    await waitUntil(() => filesIn(dir).length === 0, timeoutMs, `${dir} to be empty`);
  } catch (e) {
    throw new Error(`${(e as Error).message}; still there: ${filesIn(dir).join(' ')}`, { cause: e });
  }
}

/** Sources the snippet in `pane` and returns its listing (the one for this pane's shell). */
export async function enroll(pane: Pane, dir = pane.server.registryDir): Promise<PaneListing> {
  const r = await pane.runWithStatus(SOURCE, { timeoutMs: 20_000 });
  if (r.status !== 0) throw new Error(`enrolling ${pane.id} failed (status ${r.status}): ${r.output}`);
  const shellPid = await pane.shellPid();
  return waitUntil(
    async () => (await listed(dir)).find((p) => p.pane_id === pane.id && p.shell_pid === shellPid),
    10_000,
    `pane ${pane.id} to be listed`,
  );
}

/** The listing for `pane` in `dir`, or undefined. */
export async function listingOf(
  server: TmuxServer,
  pane: Pane,
  dir = server.registryDir,
): Promise<PaneListing | undefined> {
  return (await listed(dir)).find((p) => p.pane_id === pane.id);
}
