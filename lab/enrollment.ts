// Enrolling panes as a person does (typing `source` into them), and what an enrollment leaves:
// the listing the broker computes, the record and files in the registry, the helper processes.
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { listEnrolled, type AwakeListing, type PaneListing } from '../src/broker/registry.js';
import { scriptDigest } from '../src/core/enrollment/generation.js';
import { readRecord, type EnrollmentRecord } from '../src/core/enrollment/record.js';
import type { Binding } from '../src/core/protocol/token.js';
import type { Pane } from './pane.js';
import { allPids, cmdlineOf, descendantsOf, parentOf } from './processes.js';
import { HELPER_MAIN, SOURCE } from './product.js';
import type { NewPaneOptions, TmuxServer } from './server.js';
import { waitUntil } from './waiting.js';

/** What the broker sees in `dir`, cleaning up dead records as it goes. */
export function listed(dir: string): Promise<PaneListing[]> {
  return listEnrolled(dir, { cleanup: true });
}

/**
 * Sources the snippet in `pane` (it must succeed; it returns before the helper is ready) and waits
 * until the broker lists this pane's shell in `dir`, and the shell has read the helper's ready line
 * (it then reports its approval mode, so the listing's mode is no longer `unknown`).
 */
export async function enroll(pane: Pane, dir = pane.server.registryDir): Promise<AwakeListing> {
  const r = await pane.runWithStatus(SOURCE, { timeoutMs: 20_000 });
  if (r.status !== 0) throw new Error(`enrolling ${pane.id} failed (status ${r.status}): ${r.output}`);
  const shellPid = await pane.shellPid();
  return waitListed(pane, shellPid, dir);
}

/** Waits until `pane`'s shell `shellPid` is listed in `dir` and has read its helper's ready line. */
export async function waitListed(pane: Pane, shellPid: number, dir = pane.server.registryDir): Promise<AwakeListing> {
  return waitUntil(
    async () =>
      (await listEnrolled(dir)).find(
        (p): p is AwakeListing =>
          p.pane_id === pane.id && p.shell_pid === shellPid && p.mode !== 'unknown' && p.helper_pid !== null,
      ),
    10_000,
    `pane ${pane.id} to be listed`,
  );
}

/** Opens a zsh pane, enrolls it and returns both. */
export async function enrolledPane(
  server: TmuxServer,
  opts?: NewPaneOptions,
): Promise<{ pane: Pane; listing: AwakeListing }> {
  const pane = await server.newPane(opts);
  return { pane, listing: await enroll(pane) };
}

/** The listing for `pane` in `dir`, or undefined. */
export async function listingOf(
  server: TmuxServer,
  pane: Pane,
  dir = server.registryDir,
): Promise<PaneListing | undefined> {
  return (await listed(dir)).find((p) => p.pane_id === pane.id);
}

/** The enrollment record behind a listed pane (read the way the broker reads it). */
export function recordOf(server: TmuxServer, listing: Pick<PaneListing, 'enrollment_generation'>): EnrollmentRecord {
  return readRecord(join(server.registryDir, `${listing.enrollment_generation}.json`));
}

/** A binding for `script` aimed at the enrollment `rec`, as the broker would make it. */
export function bindingFor(rec: EnrollmentRecord, script: string, over: Partial<Binding> = {}): Binding {
  return {
    run_id: randomBytes(16).toString('hex'),
    script_digest: scriptDigest(script),
    server_generation: rec.server_generation,
    pane_id: rec.pane_id,
    enrollment_generation: rec.enrollment_generation,
    process_generation: rec.process_generation,
    stdout_limit: 65536,
    stderr_limit: 65536,
    issued_at: Date.now(),
    ...over,
  };
}

/** Live helper processes whose parent is `shellPid` (node running dist/helper/main.js). */
export function helperChildren(shellPid: number): number[] {
  return descendantsOf(shellPid).filter((pid) => parentOf(pid) === shellPid && cmdlineOf(pid).includes(HELPER_MAIN));
}

/** Every live helper process anywhere whose argv names a channel in `dir`. */
export function helpersIn(dir: string): number[] {
  return allPids().filter((pid) => {
    const c = cmdlineOf(pid);
    return c.includes(HELPER_MAIN) && c.includes(`${dir}/`);
  });
}

/** The names in the registry directory (sorted), or [] when it is gone. */
export function filesIn(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** Waits until the registry directory holds nothing (every enrollment has cleaned up after itself). */
export async function waitEmpty(dir: string, timeoutMs = 10_000): Promise<void> {
  try {
    await waitUntil(() => filesIn(dir).length === 0, timeoutMs, `${dir} to be empty`);
  } catch (e) {
    throw new Error(`${(e as Error).message}; still there: ${filesIn(dir).join(' ')}`, { cause: e });
  }
}
