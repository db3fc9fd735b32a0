// scripts/bench/bench-shells.ts: what a bash pane costs (a section of `npm run bench`, also alone:
// `npx tsx scripts/bench/bench-shells.ts [--n 20]`):
//
// - `source shell/tmux-run.bash` in N fresh bash panes ($EPOCHREALTIME around the line);
// - the first prompt (first line of the rcfile to the end of the first prompt's PROMPT_COMMAND) in
//   N fresh panes whose rcfile sources the snippet, and in N without it;
// - the PROMPT_COMMAND hook, 1000 calls in an enrolled pane;
// - the screen check per run: the helper's one read-only tmux call and the pure comparison, timed
//   here against an enrolled bash pane at rest (the same call and function the helper makes), and
// - the round trip of `true` through tmux-run-mcp in a bash pane with the builtin (the exact
//   check), one without it (TMUX_RUN_NATIVE=off: the screen check) and a zsh pane of the same tmux
//   server, interleaved call by call, 20 ms apart (bench-common.ts), so that all three see the same machine, with the stages of
//   the traced runs (src/core/protocol/trace.ts): asked->answered is the wake and the trap's answer,
//   answered->snapshot the snapshot read (and the screen check without the builtin);
// - the builtin's line check alone (`_tmux_run_line state`, 1000 calls in an enrolled pane).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { checkScreen, readScreen } from '../../helper/shell/screen/screen.js';
import { listEnrolled } from '../../src/broker/registry.js';
import { bashPane, BASH_SNIPPET, enrollBash } from '../../test/bash/support.js';
import { enroll } from '../../lab/enrollment.js';
import { callRun } from '../../lab/mcp.js';
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from '../../lab/run-root.js';
import { openScope, type Scope } from '../../lab/scope.js';
import type { TmuxServer } from '../../lab/server.js';
import { waitUntil } from '../../lab/waiting.js';
import { median } from './bench-enroll.js';
import { sideBySidePause } from './bench-common.js';
import { stageMedians } from './bench-fish.js';

export interface ShellsCost {
  n: number;
  bash_source_ms: number[];
  bash_first_prompt_ms: number[];
  bash_first_prompt_bare_ms: number[];
  bash_prompt_hook_us: number;
  /** One read-only tmux call (display-message + capture-pane) and the comparison, per run. */
  screen_read_ms: number[];
  screen_compare_us: number;
  /** bash with the builtin (exact). */
  rtt_bash_ms: number[];
  /** bash without it (TMUX_RUN_NATIVE=off: the screen check). */
  rtt_bash_screen_ms: number[];
  rtt_zsh_ms: number[];
  /** Median ms of each traced stage of those runs. */
  stages_bash: Record<string, number>;
  stages_bash_screen: Record<string, number>;
  stages_zsh: Record<string, number>;
  /** `_tmux_run_line state`, per call (µs). */
  bash_line_state_us: number;
}

/** Microseconds between two $EPOCHREALTIME values a pane printed as `t0=A t1=B`. */
function elapsedUs(out: string): number {
  const m = /t0=(\d+)[.,](\d{6}) t1=(\d+)[.,](\d{6})/.exec(out);
  if (!m) throw new Error(`no t0= t1= in ${JSON.stringify(out)}`);
  return (Number(m[3]) - Number(m[1])) * 1e6 + Number(m[4]) - Number(m[2]);
}

/** The first-prompt time of a fresh bash pane whose rcfile runs `body` (ms). */
async function firstPrompt(server: TmuxServer, body: string, tag: string): Promise<number> {
  const file = join(server.home, `first-prompt.${tag}`);
  const rc = [
    '__bench_t0=$EPOCHREALTIME',
    body,
    `__bench_first() { [[ -n \${__bench_done-} ]] && return; __bench_done=1; echo "t0=$__bench_t0 t1=$EPOCHREALTIME" > ${file}; }`,
    "PROMPT_COMMAND+=$'\\n'__bench_first",
  ].join('\n');
  const pane = await bashPane(server, { rc });
  const us = await waitUntil(
    () => {
      try {
        return elapsedUs(readFileSync(file, 'utf8'));
      } catch {
        return undefined;
      }
    },
    20_000,
    `the first prompt of ${pane.id}`,
  );
  if (body.includes('source')) {
    await waitUntil(async () => (await listEnrolled(server.registryDir)).some((p) => p.pane_id === pane.id), 20_000);
  }
  await pane.kill();
  return us / 1000;
}

/** Measures what bash panes cost, in `n` fresh panes of the scope's server. */
export async function shellsCost(scope: Scope, n: number): Promise<ShellsCost> {
  const server = scope.server;
  const bash_source_ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const pane = await bashPane(server);
    const out = await pane.run(`t0=$EPOCHREALTIME; source ${BASH_SNIPPET}; echo "t0=$t0 t1=$EPOCHREALTIME"`);
    bash_source_ms.push(elapsedUs(out) / 1000);
    await waitUntil(async () => (await listEnrolled(server.registryDir)).some((p) => p.pane_id === pane.id), 20_000);
    await pane.kill();
  }
  const bash_first_prompt_ms: number[] = [];
  const bash_first_prompt_bare_ms: number[] = [];
  for (let i = 0; i < n; i++) {
    bash_first_prompt_bare_ms.push(await firstPrompt(server, '', `bare.${i}`));
    bash_first_prompt_ms.push(await firstPrompt(server, `source ${BASH_SNIPPET}`, `enrolled.${i}`));
  }
  const pane = await bashPane(server);
  const listing = await enrollBash(pane);
  const hook = await pane.run(
    't0=$EPOCHREALTIME; for ((__i = 0; __i < 1000; __i++)); do _tmux_run_prompt; done; echo "t0=$t0 t1=$EPOCHREALTIME"',
  );
  const bash_prompt_hook_us = elapsedUs(hook) / 1000;

  // The screen check as the helper makes it, against this pane at rest: its prompt is `$ `.
  const screen_read_ms: number[] = [];
  let compareUs = 0;
  for (let i = 0; i < 5 * n; i++) {
    const t0 = performance.now();
    const screen = await readScreen(server.socket, pane.id);
    const t1 = performance.now();
    if (!screen || !(await checkScreen(screen, { prompt: '$ ' })).ok)
      throw new Error('the bench pane is not at an empty prompt');
    screen_read_ms.push(t1 - t0);
    const c0 = performance.now();
    for (let k = 0; k < 1000; k++) await checkScreen(screen, { prompt: '$ ' });
    compareUs += (performance.now() - c0) / 1000;
  }
  const screen_compare_us = (compareUs / (5 * n)) * 1000;

  const state = await pane.run(
    't0=$EPOCHREALTIME; for ((__i = 0; __i < 1000; __i++)); do _tmux_run_line state; done; echo "t0=$t0 t1=$EPOCHREALTIME"',
  );
  const bash_line_state_us = elapsedUs(state) / 1000;

  const trace = join(server.home, 'bench-shells-trace.jsonl');
  const mcp = await scope.startMcp({ env: { TMUX_RUN_TRACE: trace } });
  const ids = { bash: new Set<string>(), screen: new Set<string>(), zsh: new Set<string>() };
  const zshPane = await server.newPane();
  const zshListing = await enroll(zshPane);
  const screenPane = await bashPane(server, { rc: 'TMUX_RUN_NATIVE=off' });
  const screenListing = await enrollBash(screenPane);
  const timed = async (l: typeof listing, into?: Set<string>): Promise<number> => {
    const t0 = performance.now();
    const r = await callRun(mcp.client, l, 'true');
    if (r.isError) throw new Error(`a bench run failed: ${JSON.stringify(r.structured).slice(0, 300)}`);
    const ms = performance.now() - t0;
    into?.add(
      String((r.structured.data as { authorization?: { run_id?: string } } | undefined)?.authorization?.run_id),
    );
    return ms;
  };
  const rtt_bash_ms: number[] = [];
  const rtt_bash_screen_ms: number[] = [];
  const rtt_zsh_ms: number[] = [];
  for (const l of [listing, screenListing, zshListing]) for (let i = 0; i < 3; i++) await timed(l);
  for (let i = 0; i < 10 * n; i++) {
    await sideBySidePause();
    rtt_bash_ms.push(await timed(listing, ids.bash));
    await sideBySidePause();
    rtt_zsh_ms.push(await timed(zshListing, ids.zsh));
    await sideBySidePause();
    rtt_bash_screen_ms.push(await timed(screenListing, ids.screen));
  }
  await mcp.close();
  await pane.kill();
  await zshPane.kill();
  await screenPane.kill();
  return {
    n,
    bash_source_ms,
    bash_first_prompt_ms,
    bash_first_prompt_bare_ms,
    bash_prompt_hook_us,
    screen_read_ms,
    screen_compare_us,
    rtt_bash_ms,
    rtt_bash_screen_ms,
    rtt_zsh_ms,
    stages_bash: stageMedians(trace, ids.bash),
    stages_bash_screen: stageMedians(trace, ids.screen),
    stages_zsh: stageMedians(trace, ids.zsh),
    bash_line_state_us,
  };
}

/** Table rows (markdown) for the bench's report. */
export function shellsCostLines(c: ShellsCost): string[] {
  const f = (xs: number[]): string =>
    `median ${median(xs).toFixed(1)} (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)})`;
  const st = (s: Record<string, number>): string =>
    `${(s.answered ?? NaN).toFixed(2)}, ${(s.snapshot ?? NaN).toFixed(2)}`;
  return [
    `| bash: \`source\` in a fresh pane ($EPOCHREALTIME around it, ms, n=${c.n}) | ${f(c.bash_source_ms)} | | |`,
    `| bash: first prompt, rcfile with the snippet (ms, n=${c.n}) | ${f(c.bash_first_prompt_ms)} | | |`,
    `| bash: first prompt, the same rcfile without it (ms, n=${c.n}) | ${f(c.bash_first_prompt_bare_ms)} | | |`,
    `| bash: PROMPT_COMMAND hook, per call (µs, 1000 calls) | ${c.bash_prompt_hook_us.toFixed(1)} | | |`,
    `| bash: screen check per run, the one tmux call (ms, n=${c.screen_read_ms.length}) | ${f(c.screen_read_ms)} | | |`,
    `| bash: screen check per run, the comparison (µs) | ${c.screen_compare_us.toFixed(2)} | | |`,
    `| bash: the builtin's line check, \`_tmux_run_line state\` (µs per call, 1000 calls) | ${c.bash_line_state_us.toFixed(2)} | | |`,
    `| round trip of \`true\`: bash (exact) / bash (screen) / zsh, interleaved, 20 ms apart (ms, medians, n=${c.rtt_bash_ms.length}) | ${median(c.rtt_bash_ms).toFixed(2)} / ${median(c.rtt_bash_screen_ms).toFixed(2)} / ${median(c.rtt_zsh_ms).toFixed(2)} | | |`,
    `| round trip of \`true\`: bash (exact) minus zsh (ms, median of the paired differences; target +1) | ${median(c.rtt_bash_ms.map((b, i) => b - c.rtt_zsh_ms[i]!)).toFixed(2)} | | |`,
    `| the same runs' stages, bash (exact) / bash (screen) / zsh: asked->answered, answered->snapshot (ms, medians) | ${st(c.stages_bash)} / ${st(c.stages_bash_screen)} / ${st(c.stages_zsh)} | | |`,
  ];
}

// Alone: `npx tsx scripts/bench/bench-shells.ts [--n N]` prints the rows and the JSON.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const i = process.argv.indexOf('--n');
  const n = i >= 0 ? Number(process.argv[i + 1]) : 20;
  const root = makeRunRoot('tmux-run-bench-shells-');
  process.env[RUN_ROOT_VAR] = root;
  const scope = await openScope();
  try {
    const c = await shellsCost(scope, n);
    console.log(shellsCostLines(c).join('\n'));
    console.log(JSON.stringify(c));
  } finally {
    await scope.close().catch(() => undefined);
    await sweepRunRoot(root);
  }
}
