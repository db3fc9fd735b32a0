// How the bench (scripts/bench/bench.ts) drives the product: enrolling a pane by typing into it (the
// bench is a test driver, like a person; the product never sends keys), one tmux_run call timed
// by the client, and a closed loop of them.
import { readdirSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { listEnrolled, type AwakeListing, type PaneListing } from '../../src/broker/registry.js';
import { monotonicMs } from '../../src/core/protocol/trace.js';
import { callRun } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { processAlive } from '../../lab/processes.js';
import { SOURCE } from '../../lab/product.js';
import { waitUntil } from '../../lab/waiting.js';
import { now } from './bench-common.js';

/**
 * Types `source SNIPPET` into a pane at its prompt; resolves the listing and the milliseconds
 * from the Enter key to a tmux-run listing that shows the pane (the listing's own cost included).
 */
export async function enroll(pane: Pane, registryDir: string): Promise<{ listing: AwakeListing; ms: number }> {
  const recordFiles = (): string[] => readdirSync(registryDir).filter((n) => /^[a-f0-9]{32}\.json$/.test(n));
  await pane.waitForPrompt();
  const before = new Set(recordFiles());
  await pane.type(SOURCE);
  const t0 = now();
  await pane.type('', { enter: true });
  await waitUntil(() => recordFiles().some((n) => !before.has(n)), 10000, `the enrollment record of ${pane.id}`, 2);
  const listing = await waitUntil(
    async () =>
      (await listEnrolled(registryDir)).find((p): p is AwakeListing => p.pane_id === pane.id && p.helper_pid !== null),
    10000,
    `${pane.id} to be listed`,
    2,
  );
  const ms = now() - t0;
  await pane.waitForPrompt();
  return { listing, ms };
}

export async function unenroll(pane: Pane, registryDir: string, helperPid: number): Promise<void> {
  await pane.type('tmux_run_unenroll', { enter: true });
  await waitUntil(() => !processAlive(helperPid), 10000, `helper ${helperPid} to exit`, 5);
  await waitUntil(
    async () => !(await listEnrolled(registryDir)).some((p) => p.pane_id === pane.id),
    10000,
    `${pane.id} to leave the listing`,
  );
  await pane.waitForPrompt();
}

/** Clients whose broker traces its calls; the client's own stamps of their runs, by run id. */
export const tracing = new Set<Client>();
export const clientStamps = new Map<string, { call: number; result: number }>();
/** What the bench reads of a tmux_run result. */
export interface RunOutcome {
  ok?: boolean;
  error?: unknown;
  data?: {
    completion?: { exit_status?: number | null };
    stdout?: { bytes?: number };
    authorization?: { run_id?: string };
  };
}

let failures = 0;
export async function run(
  client: Client,
  pane: PaneListing,
  script: string,
  extra: { stdout_limit?: number } = {},
): Promise<{ ms: number; data: RunOutcome['data'] }> {
  const sent = monotonicMs();
  const t0 = now();
  const r = await callRun(client, pane, script, extra);
  const ms = now() - t0;
  const got = monotonicMs();
  const s = r.structured as RunOutcome | undefined;
  const runId = s?.data?.authorization?.run_id;
  if (runId !== undefined && tracing.has(client)) clientStamps.set(runId, { call: sent, result: got });
  if (r.isError || !s?.ok || s.data?.completion?.exit_status !== 0) {
    failures++;
    if (failures <= 5)
      process.stderr.write(
        `bench: a run failed: ${JSON.stringify(s?.error ?? s?.data?.completion ?? r.result).slice(0, 300)}\n`,
      );
    if (failures > 20) throw new Error('too many failed runs; the bench is not measuring what it should');
  }
  return { ms, data: s?.data };
}

/** Closed loop: `perPane` callers per pane keep calling until `total` runs are done; runs/s. */
export async function sustained(client: Client, panes: PaneListing[], perPane: number, total: number): Promise<number> {
  let left = total;
  const t0 = now();
  const worker = async (pane: PaneListing): Promise<void> => {
    while (left > 0) {
      left--;
      await run(client, pane, 'true');
    }
  };
  await Promise.all(panes.flatMap((p) => Array.from({ length: perPane }, () => worker(p))));
  return total / ((now() - t0) / 1000);
}

/** How many runs failed so far (the report says so). */
export const failedRuns = (): number => failures;
