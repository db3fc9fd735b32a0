// scripts/bench/bench-light.ts: what enrolled panes cost while nobody uses them (a section of
// `npm run bench`, also runnable alone):
//
//   npx tsx scripts/bench/bench-light.ts [--n 20] [--k 30]
//
// - the listing: `tmux_enrolled_panes` through the SDK's Client (median of K calls) and
//   `tmux-run panes --json` (the CLI's wall time, its Node start included; median of K/3), with 1
//   and with N enrolled panes (zsh, bash and fish in turn) on one tmux server;
// - the helpers' memory at rest: PSS summed over the helpers (/proc/PID/smaps_rollup), at 1 and N.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { AwakeListing, PaneListing } from '../../src/broker/registry.js';
import { bashPane, enrollBash } from '../../test/bash/support.js';
import { enrollFish, fishPane } from '../../test/fish/support.js';
import { enroll } from '../../lab/enrollment.js';
import { CLI_BIN, productEnv } from '../../lab/product.js';
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from '../../lab/run-root.js';
import { openScope, type Scope } from '../../lab/scope.js';
import { sleep } from '../../lab/waiting.js';
import { median, memoryOf } from './bench-enroll.js';

export interface ListingAt {
  panes: number;
  /** tmux_enrolled_panes through the SDK's Client, per call (ms). */
  mcp_ms: number[];
  /** `tmux-run panes --json`, wall time of the whole command (ms). */
  cli_ms: number[];
  /** PSS of every helper at rest, summed (kB), and how many helper processes were alive. */
  helpers_pss_kb: number;
  helpers_alive: number;
}

export interface LightCost {
  at: ListingAt[];
}

/** Enrolls one more pane of the next shell in turn (zsh, bash, fish). */
async function addPane(scope: Scope, i: number): Promise<AwakeListing> {
  const server = scope.server;
  if (i % 3 === 1) return enrollBash(await bashPane(server));
  if (i % 3 === 2) return enrollFish(await fishPane(server));
  return enroll(await server.newPane());
}

async function panesCall(client: Client): Promise<number> {
  const r = (await client.callTool({ name: 'tmux_enrolled_panes', arguments: {} })) as {
    structuredContent?: { panes: PaneListing[] };
  };
  return r.structuredContent?.panes.length ?? -1;
}

/** A server of its own with `n` enrolled panes and a broker. */
interface Fleet {
  scope: Scope;
  client: Client;
  panes: AwakeListing[];
}

async function fleet(n: number): Promise<Fleet> {
  const scope = await openScope();
  const panes: AwakeListing[] = [];
  for (let i = 0; i < n; i++) panes.push(await addPane(scope, i));
  return { scope, client: (await scope.startMcp()).client, panes };
}

async function timed(f: () => unknown): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

function memoryAt(f: Fleet, at: ListingAt): void {
  for (const p of f.panes) {
    const m = memoryOf(p.helper_pid);
    if (m === undefined) continue;
    at.helpers_alive++;
    at.helpers_pss_kb += m.pss_kb;
  }
}

/**
 * The listing and the helpers' memory with 1 and with n enrolled panes, each on a server of its
 * own, measured in turn (one call to each, K times) so the machine's load falls on both alike.
 */
export async function lightCost(n: number, k: number): Promise<LightCost> {
  const fleets: Fleet[] = [];
  try {
    fleets.push(await fleet(1), await fleet(n));
    await sleep(2000); // the helpers' start-up garbage collected (1 s after ready)
    const at = fleets.map((f): ListingAt => ({
      panes: f.panes.length,
      mcp_ms: [],
      cli_ms: [],
      helpers_pss_kb: 0,
      helpers_alive: 0,
    }));
    for (const f of fleets) for (let i = 0; i < 3; i++) await panesCall(f.client); // warm
    for (let i = 0; i < k; i++)
      for (const [j, f] of fleets.entries()) {
        let listed = 0;
        at[j]!.mcp_ms.push(await timed(async () => (listed = await panesCall(f.client))));
        if (listed !== f.panes.length) throw new Error(`listed ${listed} panes, expected ${f.panes.length}`);
      }
    for (let i = 0; i < Math.max(3, Math.round(k / 3)); i++)
      for (const [j, f] of fleets.entries())
        at[j]!.cli_ms.push(
          await timed(() =>
            execFileSync(process.execPath, [CLI_BIN, 'panes', '--json'], { env: productEnv(f.scope.server) }),
          ),
        );
    fleets.forEach((f, j) => memoryAt(f, at[j]!));
    return { at };
  } finally {
    for (const f of fleets) await f.scope.close().catch(() => undefined);
  }
}

const mb = (kb: number): string => (kb / 1024).toFixed(1);

/** Table rows (markdown) for the bench's report. */
export function lightCostLines(c: LightCost): string[] {
  const [one, many] = [c.at[0]!, c.at[c.at.length - 1]!];
  const ratio = (f: (a: ListingAt) => number): string => (f(many) / f(one)).toFixed(2);
  return [
    `| tmux_enrolled_panes at 1 / ${many.panes} panes (ms, medians, n=${one.mcp_ms.length}) | ${median(one.mcp_ms).toFixed(1)} / ${median(many.mcp_ms).toFixed(1)} (x${ratio((a) => median(a.mcp_ms))}) | <= 1.5x | |`,
    `| \`tmux-run panes --json\` at 1 / ${many.panes} panes (ms, medians, n=${one.cli_ms.length}) | ${median(one.cli_ms).toFixed(1)} / ${median(many.cli_ms).toFixed(1)} (x${ratio((a) => median(a.cli_ms))}) | <= 1.5x | |`,
    `| helpers at rest, PSS summed at 1 / ${many.panes} panes (MB; helpers alive) | ${mb(one.helpers_pss_kb)} (${one.helpers_alive}) / ${mb(many.helpers_pss_kb)} (${many.helpers_alive}) | | |`,
  ];
}

// Alone: `npx tsx scripts/bench/bench-light.ts [--n N] [--k K]` prints the rows and the JSON.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const arg = (name: string, d: number): number => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? Number(process.argv[i + 1]) : d;
  };
  const root = makeRunRoot('tmux-run-bench-light-');
  process.env[RUN_ROOT_VAR] = root;
  try {
    const c = await lightCost(arg('--n', 20), arg('--k', 30));
    console.log(lightCostLines(c).join('\n'));
    console.log(JSON.stringify(c));
  } finally {
    await sweepRunRoot(root);
  }
}
