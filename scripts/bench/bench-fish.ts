// scripts/bench/bench-fish.ts: what enrolling costs a fish pane, and a run's round trip there:
//
//   npx tsx scripts/bench/bench-fish.ts [--n 10]
//
// fish 3 has no clock of its own (no $EPOCHREALTIME), so each time is `date +%s%N` before and
// after, and the same pair around `true` is measured in the same pane (compare the medians).
// - `source` time: typed in N fresh fish panes (fish --no-config -i with the harness config).
// - first-prompt time: from the config's first line to the fish_prompt event of the first
//   prompt, in N fresh panes whose config sources the snippet and in N without it.
// - a run's round trip (`true` through tmux-run-mcp), N runs, in an enrolled fish pane: the wake
//   by SIGURG, the handler's answer with the rendered prompt, the screen check, the run; and
//   side by side with a zsh pane of the same server and fish panes with other prompts
//   (bench-fish-prompts.ts: 5N rounds, each calling every pane once in a shuffled order, 20 ms
//   apart; each prompt's ratio to zsh against the 1.3x target), with the stages of
//   the traced runs (src/core/protocol/trace.ts): asked->answered is the signal's round trip and the
//   handler, answered->snapshot the snapshot and the screen check;
// - the screen check's parts: the one read-only tmux call through the native spawn and through
//   Node's execFile, and through a client held before its question (src/core/os/held-query.ts,
//   as a run makes it: from the question to the answer, the client started 20 ms before), the prompt measured by the emulator (a new shape, a cached one), and the
//   helper's memory before its first check (emulator not loaded) and after.
import { readFileSync } from 'node:fs';
import { measurePrompt } from '../../helper/shell/screen/prompt-shape.js';
import { screenAnswered, screenArgs } from '../../helper/shell/screen/screen.js';
import { holdQuery } from '../../src/core/os/held-query.js';
import { screenQuery, screenQueryKind } from '../../src/core/os/screen-read.js';
import { tmuxQuery } from '../../src/core/os/tmux.js';
import { enroll, waitListed } from '../../lab/enrollment.js';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { listEnrolled } from '../../src/broker/registry.js';
import { callRun } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import type { TmuxServer } from '../../lab/server.js';
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from '../../lab/run-root.js';
import { openScope, type Scope } from '../../lab/scope.js';
import { waitUntil } from '../../lab/waiting.js';
import { fishPane, FISH_SNIPPET } from '../../test/fish/support.js';
import { median, memoryOf, type Memory } from './bench-enroll.js';
import { fishPromptLines, openPromptPanes, sideBySide, type FishPromptsCost } from './bench-fish-prompts.js';
import { loadavg } from 'node:os';

export interface FishCost {
  n: number;
  /** The line with `source`, and the same line with `true` in its place (ms). */
  source_ms: number[];
  source_bare_ms: number[];
  first_prompt_ms: number[];
  first_prompt_bare_ms: number[];
  run_ms: number[];
  rtt_fish_ms: number[];
  rtt_zsh_ms: number[];
  /** Median ms of each traced stage, fish and zsh runs. */
  stages_fish: Record<string, number>;
  stages_zsh: Record<string, number>;
  screen_read: { kind: string; native_ms: number[]; node_ms: number[]; held_ms: number[] };
  /** The prompt measured: a new shape (two renderings, ms), a cached one (µs). */
  measure_new_ms: number[];
  measure_cached_us: number;
  /** Each fish prompt's runs beside zsh's, in the same rounds (bench-fish-prompts.ts). */
  prompts?: FishPromptsCost;
  helper_before_check?: Memory;
  helper_after_check?: Memory;
}

const FISH_DEFAULT = 'root\x1b[m\x0f@vm\x1b[m\x0f /tmp\x1b[m\x0f\x1b[m\x0f# ';

/** The stage medians of the traced runs of `ids`. */
export function stageMedians(trace: string, ids: Set<string>): Record<string, number> {
  const by: Record<string, number[]> = {};
  for (const line of readFileSync(trace, 'utf8').split('\n').filter(Boolean)) {
    const t = JSON.parse(line) as { run_id: string; stages_ms: Record<string, number> };
    if (!ids.has(t.run_id)) continue;
    for (const [k, v] of Object.entries(t.stages_ms)) (by[k] ??= []).push(v);
  }
  return Object.fromEntries(Object.entries(by).map(([k, v]) => [k, median(v)]));
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
  // Enrolled with a command line that goes on for 3 s: the probe's first looks find the shell
  // busy, so the helper has made no screen check yet (the emulator not loaded) when measured.
  await pane.type(`source ${FISH_SNIPPET}; sleep 3`, { enter: true });
  const listing = await waitListed(pane, await pane.shellPid());
  await new Promise((r) => setTimeout(r, 1000));
  const helper_before_check = memoryOf(listing.helper_pid);
  await pane.waitForPrompt(10_000);
  const trace = join(server.home, 'bench-fish-trace.jsonl');
  const mcp = await scope.startMcp({ env: { TMUX_RUN_TRACE: trace } });
  const call = async (l: typeof listing): Promise<{ ms: number; id: string }> => {
    const t0 = performance.now();
    const r = await callRun(mcp.client, l, 'true');
    if (r.isError) throw new Error(`a run failed: ${JSON.stringify(r.structured).slice(0, 300)}`);
    const id = (r.structured as { data?: { authorization?: { run_id?: string } } }).data?.authorization?.run_id;
    return { ms: performance.now() - t0, id: String(id ?? '') };
  };
  const run_ms: number[] = [];
  for (let i = 0; i < n; i++) run_ms.push((await call(listing)).ms);
  const helper_after_check = memoryOf(listing.helper_pid);
  const zshPane = await server.newPane();
  const zshListing = await enroll(zshPane);
  // The zsh pane, this fish pane (`$ `) and the other prompts' panes, called in rounds in a
  // shuffled order (bench-fish-prompts.ts).
  const promptPanes = await openPromptPanes(server);
  const fishIds = new Set<string>();
  const zshIds = new Set<string>();
  const load0 = loadavg()[0]!;
  const side = await sideBySide(
    mcp.client,
    [{ name: 'zsh', listing: zshListing }, { name: '`$ `', listing }, ...promptPanes],
    5 * n,
    (name, id) => (name === 'zsh' ? zshIds : name === '`$ `' ? fishIds : undefined)?.add(id),
  );
  const rtt_fish_ms = side.get('`$ `')!;
  const rtt_zsh_ms = side.get('zsh')!;
  const prompts: FishPromptsCost = {
    zsh_ms: rtt_zsh_ms,
    fish: ['`$ `', ...promptPanes.map((p) => p.name)].map((name) => ({ name, ms: side.get(name)! })),
    loadavg: [load0, loadavg()[0]!].map((x) => Number(x.toFixed(2))),
  };
  for (const p of promptPanes) await p.pane.kill();
  const screen_read = {
    kind: screenQueryKind(),
    native_ms: [] as number[],
    node_ms: [] as number[],
    held_ms: [] as number[],
  };
  for (let i = 0; i < 5 * n; i++) {
    const held = holdQuery(server.socket, screenArgs(pane.id));
    await new Promise((r) => setTimeout(r, 20));
    let t0 = performance.now();
    if (held) {
      await held.ask(screenAnswered);
      screen_read.held_ms.push(performance.now() - t0);
    }
    t0 = performance.now();
    await screenQuery(server.socket, screenArgs(pane.id), screenAnswered);
    screen_read.native_ms.push(performance.now() - t0);
    t0 = performance.now();
    await tmuxQuery(server.socket, screenArgs(pane.id));
    screen_read.node_ms.push(performance.now() - t0);
  }
  const measure_new_ms: number[] = [];
  for (let i = 0; i < 5 * n; i++) {
    const t0 = performance.now();
    await measurePrompt(`${FISH_DEFAULT}${i}`, 80);
    measure_new_ms.push(performance.now() - t0);
  }
  const c0 = performance.now();
  for (let i = 0; i < 1000; i++) await measurePrompt(FISH_DEFAULT, 80);
  const measure_cached_us = performance.now() - c0;
  await mcp.close();
  await pane.kill();
  await zshPane.kill();
  return {
    n,
    source_ms,
    source_bare_ms,
    first_prompt_ms,
    first_prompt_bare_ms,
    run_ms,
    rtt_fish_ms,
    rtt_zsh_ms,
    stages_fish: stageMedians(trace, fishIds),
    stages_zsh: stageMedians(trace, zshIds),
    screen_read,
    measure_new_ms,
    measure_cached_us,
    prompts,
    ...(helper_before_check ? { helper_before_check } : {}),
    ...(helper_after_check ? { helper_after_check } : {}),
  };
}

/** Table rows (markdown) for the report. */
export function fishCostLines(c: FishCost): string[] {
  const f = (xs: number[]): string =>
    `median ${median(xs).toFixed(1)} (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)})`;
  const st = (v: number | undefined): string => (v === undefined ? '?' : v.toFixed(2));
  const mb = (kb: number | undefined): string => (kb === undefined ? '?' : (kb / 1024).toFixed(1));
  return [
    `| fish: \`source\` in a fresh pane, between two \`date\` calls (ms, n=${c.n}) | ${f(c.source_ms)} |`,
    `| fish: the same two \`date\` calls around \`true\` (ms, n=${c.n}) | ${f(c.source_bare_ms)} |`,
    `| fish: first prompt, config with the snippet (ms, n=${c.n}) | ${f(c.first_prompt_ms)} |`,
    `| fish: first prompt, the same config without it (ms, n=${c.n}) | ${f(c.first_prompt_bare_ms)} |`,
    `| fish: a run of \`true\`, call to result (ms, n=${c.n}) | ${f(c.run_ms)} |`,
    `| round trip of \`true\`, side by side, 20 ms apart: fish pane / zsh pane (ms, medians, n=${c.rtt_fish_ms.length}) | ${median(c.rtt_fish_ms).toFixed(1)} / ${median(c.rtt_zsh_ms).toFixed(1)} (+${(median(c.rtt_fish_ms) - median(c.rtt_zsh_ms)).toFixed(1)}) |`,
    `| round trip of \`true\`: fish minus zsh (ms, median of the paired differences; target +3) | ${median(c.rtt_fish_ms.map((x, i) => x - c.rtt_zsh_ms[i]!)).toFixed(2)} |`,
    `| the same runs' stages, fish / zsh: asked->answered (the shell's answer), answered->snapshot (fish: the screen check) (ms, medians) | ${st(c.stages_fish.answered)} / ${st(c.stages_zsh.answered)}, ${st(c.stages_fish.snapshot)} / ${st(c.stages_zsh.snapshot)} |`,
    `| screen check: the one tmux call, native spawn / Node's execFile (ms, medians, n=${c.screen_read.native_ms.length}; the helper's: ${c.screen_read.kind}) | ${median(c.screen_read.native_ms).toFixed(2)} / ${median(c.screen_read.node_ms).toFixed(2)} |`,
    `| screen check: the same call through a client held before it (tmux source-file -), from the question to the answer (ms, median, n=${c.screen_read.held_ms.length}) | ${c.screen_read.held_ms.length ? median(c.screen_read.held_ms).toFixed(2) : '?'} |`,
    `| screen check: a prompt measured by the emulator, new shape (two renderings, ms) / cached (µs) | ${f(c.measure_new_ms)} / ${c.measure_cached_us.toFixed(1)} |`,
    `| fish helper PSS before its first screen check / after it (emulator loaded) (MB) | ${mb(c.helper_before_check?.pss_kb)} / ${mb(c.helper_after_check?.pss_kb)} |`,
    ...(c.prompts ? fishPromptLines(c.prompts) : []),
  ];
}

// Alone: `npx tsx scripts/bench/bench-fish.ts [--n N]` prints the rows and the JSON.
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
