// scripts/bench/bench-dormant.ts: what a pane costs once its helper went dormant (docs/light.md; a section
// of `npm run bench`, also runnable alone):
//
//   npx tsx scripts/bench/bench-dormant.ts [--n 20] [--k 30] [--m 5]
//
// - the helpers' memory and the listing with 1 and N enrolled panes (zsh, bash and fish in turn),
//   every helper dormant (TMUX_RUN_IDLE=2): PSS summed over the helper processes still alive (none),
//   `tmux_enrolled_panes` through the SDK's Client (median of K calls), each on a server of its own,
//   both made first and then called in turn (1, N, 1, N...), so that a change in the load falls on both;
// - a dormant pane's first run: tmux_run of `true` from the broker's call to its result, the helper
//   started again from the shell's side first, M times in each shell (a fresh broker each time, warmed
//   by one listing, since a broker's kept link keeps a helper up for 10 s), and the run that follows
//   on the same broker, the helper awake.
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaneListing } from '../../src/broker/registry.js';
import { bashPane, enrollBash } from '../../test/bash/support.js';
import { enrollFish, fishPane } from '../../test/fish/support.js';
import { enroll, helperChildren, listed } from '../../lab/enrollment.js';
import type { Pane } from '../../lab/pane.js';
import { callRun } from '../../lab/mcp.js';
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from '../../lab/run-root.js';
import { openScope, type Scope } from '../../lab/scope.js';
import { waitUntil } from '../../lab/waiting.js';
import { median, memoryOf } from './bench-enroll.js';

/** The idle time of the section's panes (seconds). */
const IDLE_S = '2';
const SHELLS = ['zsh', 'bash', 'fish'] as const;

export interface DormantAt {
  panes: number;
  /** PSS of the helper processes alive once every pane is dormant, summed (kB), and how many. */
  helpers_pss_kb: number;
  helpers_alive: number;
  /** tmux_enrolled_panes through the SDK's Client, per call (ms), every pane dormant. */
  mcp_ms: number[];
}

export interface DormantCost {
  at: DormantAt[];
  /** Per shell: the first run of a dormant pane, and the one after it (ms). */
  first_run_ms: Record<string, number[]>;
  next_run_ms: Record<string, number[]>;
}

async function addPane(scope: Scope, i: number): Promise<{ pane: Pane; listing: PaneListing }> {
  const server = scope.server;
  const shell = SHELLS[i % 3];
  if (shell === 'bash') {
    const pane = await bashPane(server);
    return { pane, listing: await enrollBash(pane) };
  }
  if (shell === 'fish') {
    const pane = await fishPane(server);
    return { pane, listing: await enrollFish(pane) };
  }
  const pane = await server.newPane();
  return { pane, listing: await enroll(pane) };
}

/** Waits until every pane of the scope is listed dormant and no shell has a helper child. */
async function allDormant(scope: Scope, panes: Pane[]): Promise<void> {
  const shells = await Promise.all(panes.map((p) => p.shellPid()));
  await waitUntil(
    async () => {
      const l = await listed(scope.server.registryDir);
      return (
        l.length === panes.length &&
        l.every((p) => p.state === 'dormant') &&
        shells.every((s) => helperChildren(s).length === 0)
      );
    },
    60_000,
    'every pane dormant',
  );
}

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

const panesCall = async (client: Client): Promise<number> =>
  (
    (await client.callTool({ name: 'tmux_enrolled_panes', arguments: {} })) as {
      structuredContent?: { panes: PaneListing[] };
    }
  ).structuredContent?.panes.length ?? -1;

/**
 * Memory and listing with each of `sizes` dormant panes, each on a server of its own. Every fleet
 * is made and dormant first; then the listings are timed in turn, one call to each fleet per round,
 * so that the machine's load (shared, and never steady here) weighs on every size alike.
 */
async function dormantFleets(sizes: number[], k: number): Promise<DormantAt[]> {
  const fleets: Array<{ scope: Scope; made: Array<{ pane: Pane; listing: PaneListing }>; at: DormantAt }> = [];
  try {
    for (const n of sizes) {
      const scope = await openScope({ env: { TMUX_RUN_IDLE: IDLE_S } });
      const made: Array<{ pane: Pane; listing: PaneListing }> = [];
      fleets.push({ scope, made, at: { panes: n, helpers_pss_kb: 0, helpers_alive: 0, mcp_ms: [] } });
      for (let i = 0; i < n; i++) made.push(await addPane(scope, i));
    }
    const clients: Client[] = [];
    for (const { scope, made, at } of fleets) {
      await allDormant(
        scope,
        made.map((m) => m.pane),
      );
      for (const m of made)
        for (const pid of helperChildren(await m.pane.shellPid())) {
          at.helpers_alive++;
          at.helpers_pss_kb += memoryOf(pid)?.pss_kb ?? 0;
        }
      const client = (await scope.startMcp()).client;
      for (let i = 0; i < 3; i++) await panesCall(client);
      clients.push(client);
    }
    for (let i = 0; i < k; i++)
      for (const [j, { at }] of fleets.entries()) {
        let count = 0;
        at.mcp_ms.push(await timed(async () => (count = await panesCall(clients[j]!))));
        if (count !== at.panes) throw new Error(`listed ${count} panes, expected ${at.panes}`);
      }
    // A listing never wakes a pane.
    for (const { made } of fleets)
      for (const x of made)
        if (helperChildren(await x.pane.shellPid()).length > 0) throw new Error('a listing woke a pane');
    return fleets.map((f) => f.at);
  } finally {
    for (const { scope } of fleets) await scope.close().catch(() => undefined);
  }
}

/** A dormant pane's first run and the next, `m` times in each shell. */
async function firstRuns(m: number, cost: DormantCost): Promise<void> {
  const scope = await openScope({ env: { TMUX_RUN_IDLE: IDLE_S } });
  try {
    const made = [];
    for (let i = 0; i < SHELLS.length; i++) made.push(await addPane(scope, i));
    for (let round = 0; round < m; round++)
      for (const [i, { listing }] of made.entries()) {
        await allDormant(
          scope,
          made.map((x) => x.pane),
        );
        const mcp = await scope.startMcp();
        try {
          await panesCall(mcp.client);
          const shell = SHELLS[i]!;
          let failed = '';
          const check = (r: Awaited<ReturnType<typeof callRun>>): void => {
            if (r.isError) failed ||= JSON.stringify(r.structured).slice(0, 400);
          };
          (cost.first_run_ms[shell] ??= []).push(
            await timed(async () => check(await callRun(mcp.client, listing, 'true'))),
          );
          (cost.next_run_ms[shell] ??= []).push(
            await timed(async () => check(await callRun(mcp.client, listing, 'true'))),
          );
          if (failed) throw new Error(`a run in the ${shell} pane failed: ${failed}`);
        } finally {
          await mcp.close();
        }
      }
  } finally {
    await scope.close().catch(() => undefined);
  }
}

export async function dormantCost(n: number, k: number, m: number): Promise<DormantCost> {
  const cost: DormantCost = { at: [], first_run_ms: {}, next_run_ms: {} };
  cost.at.push(...(await dormantFleets([1, n], k)));
  await firstRuns(m, cost);
  return cost;
}

/** Table rows (markdown) for the bench's report. */
export function dormantCostLines(c: DormantCost): string[] {
  const [one, many] = [c.at[0]!, c.at[c.at.length - 1]!];
  const mb = (kb: number): string => (kb / 1024).toFixed(1);
  const runs = SHELLS.filter((s) => c.first_run_ms[s]?.length).map(
    (s) =>
      `| a dormant ${s} pane's first run, then the next (ms, medians, n=${c.first_run_ms[s]!.length}) | ${median(c.first_run_ms[s]!).toFixed(1)} / ${median(c.next_run_ms[s]!).toFixed(1)} | < 250 first | |`,
  );
  return [
    `| helpers dormant, PSS summed at 1 / ${many.panes} panes (MB; helpers alive) | ${mb(one.helpers_pss_kb)} (${one.helpers_alive}) / ${mb(many.helpers_pss_kb)} (${many.helpers_alive}) | | |`,
    `| tmux_enrolled_panes at 1 / ${many.panes} dormant panes (ms, medians, n=${one.mcp_ms.length}) | ${median(one.mcp_ms).toFixed(1)} / ${median(many.mcp_ms).toFixed(1)} (x${(median(many.mcp_ms) / median(one.mcp_ms)).toFixed(2)}) | <= 1.5x | |`,
    ...runs,
  ];
}

// Alone: `npx tsx scripts/bench/bench-dormant.ts [--n N] [--k K] [--m M]` prints the rows and the JSON.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const arg = (name: string, d: number): number => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? Number(process.argv[i + 1]) : d;
  };
  const root = makeRunRoot('tmux-run-bench-dormant-');
  process.env[RUN_ROOT_VAR] = root;
  try {
    const c = await dormantCost(arg('--n', 20), arg('--k', 30), arg('--m', 5));
    console.log(dormantCostLines(c).join('\n'));
    console.log(JSON.stringify(c));
  } finally {
    await sweepRunRoot(root);
  }
}
