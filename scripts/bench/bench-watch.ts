// scripts/bench/bench-watch.ts: what a watcher (tmux-run watch) costs a run (a section of `npm run bench`,
// also runnable alone: `npx tsx scripts/bench/bench-watch.ts [--n 5]`).
//
// The same run, 10 MB of stdout through tmux_run_start with overflow tail (wait_ms 30000, so the
// call returns with the run's end), alternating three ways: nobody watching; a live watcher
// (`tmux-run watch --json` reading every event, its output thrown away); and a watcher stopped
// with SIGSTOP for the whole run (it reads nothing: the helper must drop its output, not wait).
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaneListing } from '../../src/broker/registry.js';
import { CLI_BIN, productEnv, SOURCE } from '../../lab/product.js';
import type { TmuxServer } from '../../lab/server.js';
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from '../../lab/run-root.js';
import { openScope } from '../../lab/scope.js';
import { waitUntil } from '../../lab/waiting.js';
import { listEnrolled } from '../../src/broker/registry.js';
import { median } from './bench-enroll.js';

const TEN_MB = 10 * 1024 * 1024;
const SCRIPT = `head -c ${TEN_MB} /dev/zero | tr '\\0' a`;

export interface WatchCost {
  n: number;
  none_ms: number[];
  live_ms: number[];
  stopped_ms: number[];
}

/** One 10 MB run to its end (ms from the call to its result). */
async function tenMegabytes(c: Client, listing: PaneListing): Promise<number> {
  const target = { kind: 'pane', id: listing.pane_id, generation: listing.generation };
  const t0 = performance.now();
  const r = (await c.callTool(
    { name: 'tmux_run_start', arguments: { target, script: SCRIPT, wait_ms: 30000, overflow: 'tail' } },
    undefined,
    { timeout: 120_000 },
  )) as CallToolResult;
  const ms = performance.now() - t0;
  const s = r.structuredContent as { ok?: boolean; data?: { stdout?: { bytes?: number } } };
  if (s.ok !== true || s.data?.stdout?.bytes !== TEN_MB)
    throw new Error(`the 10 MB run failed: ${JSON.stringify(s).slice(0, 300)}`);
  return ms;
}

/** A `tmux-run watch --json` of the pane, linked (its first event read). */
async function watcher(server: TmuxServer, listing: PaneListing): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI_BIN, 'watch', '--json', '--pane', listing.pane_id], {
    env: productEnv(server),
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let linked = false;
  child.stdout.on('data', () => (linked = true));
  await waitUntil(() => linked, 10_000, 'the watcher to link');
  return child;
}

async function stopWatcher(child: ChildProcess): Promise<void> {
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGCONT');
  child.kill('SIGTERM');
  await gone;
}

/** The three ways, alternating, `n` times each (after one of each to warm up). */
export async function watchCost(server: TmuxServer, c: Client, listing: PaneListing, n: number): Promise<WatchCost> {
  const out: WatchCost = { n, none_ms: [], live_ms: [], stopped_ms: [] };
  for (let i = 0; i <= n; i++) {
    const none = await tenMegabytes(c, listing);
    const live = await watcher(server, listing);
    const watched = await tenMegabytes(c, listing);
    await stopWatcher(live);
    const stopped = await watcher(server, listing);
    stopped.kill('SIGSTOP');
    const held = await tenMegabytes(c, listing);
    await stopWatcher(stopped);
    if (i === 0) continue;
    out.none_ms.push(none);
    out.live_ms.push(watched);
    out.stopped_ms.push(held);
  }
  return out;
}

/** Table rows (markdown) for the bench's report. */
export function watchCostLines(w: WatchCost): string[] {
  const f = (xs: number[]): string => `${median(xs).toFixed(0)} (min ${Math.min(...xs).toFixed(0)})`;
  return [
    '',
    `| a 10 MB run (tmux_run_start, overflow tail) to its result, ms, n=${w.n} each, alternating | median (min) |`,
    '| --- | ---: |',
    `| nobody watching | ${f(w.none_ms)} |`,
    `| a live watcher (tmux-run watch --json, reading everything) | ${f(w.live_ms)} |`,
    `| a watcher stopped (SIGSTOP) through the run | ${f(w.stopped_ms)} |`,
  ];
}

// Alone: its own server, one enrolled pane and one broker.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const i = process.argv.indexOf('--n');
  const n = i < 0 ? 5 : Number(process.argv[i + 1]);
  const runRoot = makeRunRoot('tmux-run-bench-watch-');
  process.env[RUN_ROOT_VAR] = runRoot;
  const scope = await openScope({ env: { TMUX_RUN_NOTIFY: 'off' } });
  try {
    const pane = await scope.server.newPane();
    await pane.run(SOURCE, { timeoutMs: 30_000 });
    const listing = await waitUntil(
      async () =>
        (await listEnrolled(scope.server.registryDir)).find((p) => p.pane_id === pane.id && p.mode !== 'unknown'),
      20_000,
      'the pane to be listed',
    );
    const mcp = await scope.startMcp({ clientName: 'tmux-run-bench' });
    const w = await watchCost(scope.server, mcp.client, listing, n);
    process.stdout.write(`${watchCostLines(w).join('\n')}\n${JSON.stringify(w)}\n`);
  } finally {
    await scope.close();
    await sweepRunRoot(runRoot);
  }
}
