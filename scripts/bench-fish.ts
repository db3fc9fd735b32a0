// scripts/bench-fish.ts: what enrolling costs a fish pane, and a run's round trip there:
//
//   npx tsx scripts/bench-fish.ts [--n 10]
//
// fish 3 has no clock of its own (no $EPOCHREALTIME), so each time is `date +%s%N` before and
// after, and the same pair around `true` is measured in the same pane (compare the medians).
// - `source` time: typed in N fresh fish panes (fish --no-config -i with the harness config).
// - first-prompt time: from the config's first line to the fish_prompt event of the first
//   prompt, in N fresh panes whose config sources the snippet and in N without it.
// - a run's round trip (`true` through tmux-run-mcp), N runs, in an enrolled fish pane: the wake
//   by SIGWINCH, the handler's answer with the rendered prompt, the screen check, the run.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { listEnrolled } from '../src/broker/registry.js';
import { callRun } from '../test/support/mcp.js';
import type { Pane } from '../test/support/pane.js';
import type { TmuxServer } from '../test/support/server.js';
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from '../test/support/run-root.js';
import { openScope, type Scope } from '../test/support/scope.js';
import { waitUntil } from '../test/support/waiting.js';
import { enrollFish, fishPane, FISH_SNIPPET } from '../test/fish/support.js';
import { median } from './bench-enroll.js';

export interface FishCost {
  n: number;
  /** The line with `source`, and the same line with `true` in its place (ms). */
  source_ms: number[];
  source_bare_ms: number[];
  first_prompt_ms: number[];
  first_prompt_bare_ms: number[];
  run_ms: number[];
}

const NS = 'set -l __b0 (date +%s%N)';
const took = (key: string): string => `set -l __b1 (date +%s%N); echo ${key}=(math "($__b1 - $__b0) / 1000000")`;

/** The number a typed line printed after `key=`. */
async function measured(pane: Pane, cmd: string, key: string): Promise<number> {
  const out = await pane.run(cmd, { timeoutMs: 30_000 });
  const v = Number(new RegExp(`${key}=([\\d.]+)`).exec(out)?.[1]);
  if (!Number.isFinite(v)) throw new Error(`no ${key}= in ${JSON.stringify(out)}`);
  return v;
}

async function waitListedPane(server: TmuxServer, pane: Pane): Promise<void> {
  await waitUntil(
    async () => (await listEnrolled(server.registryDir)).some((p) => p.pane_id === pane.id),
    20_000,
    `${pane.id} to be listed`,
  );
}

/** The first-prompt time (ms) of a fresh fish pane whose config runs `body`. */
async function firstPrompt(server: TmuxServer, body: string, tag: string): Promise<number> {
  const file = join(server.home, `fish-first.${tag}`);
  const config = [
    // (The harness's config runs first: the clock starts at the person's part.)
    'set -g __bench_t0 (date +%s%N)',
    body,
    'function __bench_first --on-event fish_prompt',
    `    echo (math "($(date +%s%N) - $__bench_t0) / 1000000") > ${file}`,
    '    functions -e __bench_first',
    'end',
    '',
  ].join('\n');
  const pane = await fishPane(server, { config });
  const ms = await waitUntil(
    () => {
      try {
        return Number(readFileSync(file, 'utf8').trim()) || undefined;
      } catch {
        return undefined;
      }
    },
    20_000,
    `the first prompt of ${pane.id}`,
  );
  if (body.includes('source')) await waitListedPane(server, pane);
  await pane.kill();
  return ms;
}

/** Measures enrolling and running in fish panes of the scope's server. */
export async function fishCost(scope: Scope, n: number): Promise<FishCost> {
  const server = scope.server;
  const source_ms: number[] = [];
  const source_bare_ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const pane = await fishPane(server);
    source_bare_ms.push(await measured(pane, `${NS}; true; ${took('t')}`, 't'));
    source_ms.push(await measured(pane, `${NS}; source ${FISH_SNIPPET}; ${took('t')}`, 't'));
    await waitListedPane(server, pane);
    await pane.kill();
  }
  const first_prompt_ms: number[] = [];
  const first_prompt_bare_ms: number[] = [];
  for (let i = 0; i < n; i++) {
    first_prompt_bare_ms.push(await firstPrompt(server, '', `bare.${i}`));
    first_prompt_ms.push(await firstPrompt(server, `source ${FISH_SNIPPET}`, `enrolled.${i}`));
  }
  const pane = await fishPane(server);
  const listing = await enrollFish(pane);
  const mcp = await scope.startMcp();
  const run_ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await callRun(mcp.client, listing, 'true');
    if (r.isError) throw new Error(`a run failed: ${JSON.stringify(r.structured).slice(0, 300)}`);
    run_ms.push(performance.now() - t0);
  }
  await pane.kill();
  return { n, source_ms, source_bare_ms, first_prompt_ms, first_prompt_bare_ms, run_ms };
}

/** Table rows (markdown) for the report. */
export function fishCostLines(c: FishCost): string[] {
  const f = (xs: number[]): string =>
    `median ${median(xs).toFixed(1)} (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)})`;
  return [
    `| fish: \`source\` in a fresh pane, between two \`date\` calls (ms, n=${c.n}) | ${f(c.source_ms)} |`,
    `| fish: the same two \`date\` calls around \`true\` (ms, n=${c.n}) | ${f(c.source_bare_ms)} |`,
    `| fish: first prompt, config with the snippet (ms, n=${c.n}) | ${f(c.first_prompt_ms)} |`,
    `| fish: first prompt, the same config without it (ms, n=${c.n}) | ${f(c.first_prompt_bare_ms)} |`,
    `| fish: a run of \`true\`, call to result (ms, n=${c.n}) | ${f(c.run_ms)} |`,
  ];
}

// Alone: `npx tsx scripts/bench-fish.ts [--n N]` prints the rows and the JSON.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const i = process.argv.indexOf('--n');
  const n = i < 0 ? 10 : Number(process.argv[i + 1]);
  const runRoot = makeRunRoot('tmux-run-bench-fish-');
  process.env[RUN_ROOT_VAR] = runRoot;
  const scope = await openScope();
  try {
    const c = await fishCost(scope, n);
    process.stdout.write(`${fishCostLines(c).join('\n')}\n${JSON.stringify(c)}\n`);
  } finally {
    await scope.close();
    await sweepRunRoot(runRoot);
  }
}
