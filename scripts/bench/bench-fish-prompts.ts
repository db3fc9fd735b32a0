// scripts/bench/bench-fish-prompts.ts: a run of `true` in fish panes with the prompts people have,
// side by side with a zsh pane of the same tmux server and broker (a section of bench-fish.ts, in
// `npm run bench`; also alone: `npx tsx scripts/bench/bench-fish-prompts.ts [--n 50]`):
//
// - `$ ` (the harness's, `printf '$ '`), `F> ` (another plain one), a two-line prompt, fish's
//   default prompt (colours, user, host, directory) under `fish --no-config`, and a person's fish:
//   `fish -i` with its own start-up (fish's WINCH handler, which repaints the prompt under tmux)
//   and its default prompt (which runs `git`), none of the harness's config, enrolled by typing
//   the `source` line;
// - each round calls every pane once, zsh included, in an order shuffled anew, 20 ms apart
//   (bench-common.ts): a pane's figure carries no other pane's leftovers by its place in the
//   round (a fixed order once showed one plain prompt 1 ms over another, issue 42);
// - each fish prompt's median against zsh's of the same run: the target is 1.3x (issue 42).
import { hostname, loadavg, userInfo } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { AwakeListing } from '../../src/broker/registry.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { enrollFish, FISH_SOURCE, fishPane, type FishPaneOptions } from '../../test/fish/support.js';
import { enroll, waitListed } from '../../lab/enrollment.js';
import { callRun } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from '../../lab/run-root.js';
import { openScope } from '../../lab/scope.js';
import type { TmuxServer } from '../../lab/server.js';
import { sideBySidePause } from './bench-common.js';
import { median } from './bench-enroll.js';

/** A fish prompt's median may be this many times zsh's of the same run (issue 42). */
export const FISH_PROMPT_TARGET = 1.3;

const user = userInfo().username;
const host = hostname().split('.')[0]!;
/** fish's default prompt in /tmp, as the screen shows it. */
const DEFAULT_PROMPT = `${user}@${host} /tmp${user === 'root' ? '#' : '>'} `;
const DEFAULT = 'source $__fish_data_dir/functions/fish_prompt.fish\n';

/** The fish set-ups measured besides the harness's `$ ` pane. */
export const FISH_PROMPTS: { name: string; opts: FishPaneOptions }[] = [
  { name: '`F> `', opts: { config: "function fish_prompt; printf 'F> '; end\n", prompt: 'F> ' } },
  { name: 'two lines', opts: { config: "function fish_prompt; printf '%s\\n> ' $PWD; end\n", prompt: '> ' } },
  { name: "fish's default", opts: { config: DEFAULT, prompt: DEFAULT_PROMPT, cwd: '/tmp' } },
];

/** A person's fish: `fish -i`, its own start-up and default prompt, an empty config.fish of its own. */
export const PERSON_FISH = "a person's fish (own start-up, default prompt)";

/**
 * A fish used before, as a person's is: its own config and data directories, the latter with the
 * man-page completions fish generates once. A fish started for the first time (no
 * generated_completions) runs python's create_manpage_completions.py in the background at its
 * first prompt, for a minute of CPU, in the pane's session: under the kernel's autogroups (one per
 * session, sched_autogroup_enabled) that pane's helper then shares its group's CPU with it, and
 * its runs took 2 to 2.5 times zsh's (issue 42), the helper waiting for CPU at every stage.
 */
async function personFish(server: TmuxServer): Promise<{ pane: Pane; listing: AwakeListing }> {
  const xdg = join(server.home, `xdg-person-${process.pid}-${++people}`);
  mkdirSync(join(xdg, 'fish'), { recursive: true, mode: 0o700 });
  writeFileSync(join(xdg, 'fish', 'config.fish'), '', { mode: 0o600 });
  const data = join(xdg, 'data');
  mkdirSync(join(data, 'fish', 'generated_completions'), { recursive: true, mode: 0o700 });
  const pane = await server.newPane({
    shell: ['fish', '-i'],
    env: { XDG_CONFIG_HOME: xdg, ...(process.env.TMUX_RUN_BENCH_FIRST_FISH ? {} : { XDG_DATA_HOME: data }) },
    prompt: DEFAULT_PROMPT,
    cwd: '/tmp',
  });
  await pane.type(FISH_SOURCE, { enter: true });
  return { pane, listing: await waitListed(pane, await pane.shellPid()) };
}
let people = 0;

export interface PromptRuns {
  name: string;
  ms: number[];
}

export interface FishPromptsCost {
  /** zsh's runs in the same rounds. */
  zsh_ms: number[];
  /** Each fish prompt's runs, the harness's `$ ` first. */
  fish: PromptRuns[];
  loadavg: number[];
}

/** Opens and enrolls a pane for each of FISH_PROMPTS. */
export async function openPromptPanes(
  server: TmuxServer,
): Promise<{ name: string; pane: Pane; listing: AwakeListing }[]> {
  const out: { name: string; pane: Pane; listing: AwakeListing }[] = [];
  for (const p of FISH_PROMPTS) {
    const pane = await fishPane(server, p.opts);
    out.push({ name: p.name, pane, listing: await enrollFish(pane) });
  }
  out.push({ name: PERSON_FISH, ...(await personFish(server)) });
  return out;
}

/**
 * `rounds` rounds: each calls `true` once in every pane (zsh first in the list), in a shuffled
 * order, 20 ms apart; `onRun` sees each call's result (the caller's trace ids).
 */
export async function sideBySide(
  client: Client,
  panes: { name: string; listing: AwakeListing }[],
  rounds: number,
  onRun?: (name: string, runId: string) => void,
): Promise<Map<string, number[]>> {
  const ms = new Map<string, number[]>(panes.map((p) => [p.name, []]));
  const call = async (p: { name: string; listing: AwakeListing }): Promise<void> => {
    const t0 = performance.now();
    const r = await callRun(client, p.listing, 'true');
    const took = performance.now() - t0;
    if (r.isError) throw new Error(`a run in ${p.name} failed: ${JSON.stringify(r.structured).slice(0, 300)}`);
    ms.get(p.name)!.push(took);
    const id = (r.structured as { data?: { authorization?: { run_id?: string } } }).data?.authorization?.run_id;
    onRun?.(p.name, String(id ?? ''));
  };
  for (const p of panes) for (let i = 0; i < 3; i++) await callRun(client, p.listing, 'true');
  for (let i = 0; i < rounds; i++) {
    const order = [...panes];
    for (let j = order.length - 1; j > 0; j--) {
      const k = Math.floor(Math.random() * (j + 1));
      [order[j], order[k]] = [order[k]!, order[j]!];
    }
    for (const p of order) {
      await sideBySidePause();
      await call(p);
    }
  }
  return ms;
}

/** Each fish prompt's median over zsh's. */
export const promptRatios = (c: FishPromptsCost): { name: string; ratio: number }[] =>
  c.fish.map((f) => ({ name: f.name, ratio: median(f.ms) / median(c.zsh_ms) }));

/** Targets rows (bench-report.ts): each fish prompt within FISH_PROMPT_TARGET of zsh. */
export function fishPromptTargets(
  c: FishPromptsCost | undefined,
): { name: string; target: string; value: number; pass: boolean; show: string }[] {
  if (!c) return [];
  return promptRatios(c).map(({ name, ratio }) => ({
    name: `fish prompt ${name}: run of \`true\` vs zsh's, side by side`,
    target: `<= ${FISH_PROMPT_TARGET}x`,
    value: ratio,
    pass: ratio <= FISH_PROMPT_TARGET,
    show: `${ratio.toFixed(2)}x`,
  }));
}

/** Table rows (markdown, two columns). */
export function fishPromptLines(c: FishPromptsCost): string[] {
  const ratios = promptRatios(c);
  return [
    `| the fish prompts side by side with zsh, rounds in shuffled order, 20 ms apart: zsh median (ms, n=${c.zsh_ms.length}; load ${c.loadavg.join(' ')}) | ${median(c.zsh_ms).toFixed(2)} |`,
    ...c.fish.map(
      (f, i) =>
        `| fish prompt ${f.name}: median (ms) and ratio to zsh (target <= ${FISH_PROMPT_TARGET}x) | ${median(f.ms).toFixed(2)}, ${ratios[i]!.ratio.toFixed(2)}x ${ratios[i]!.ratio <= FISH_PROMPT_TARGET ? 'pass' : 'MISS'} |`,
    ),
  ];
}

// Alone: `npx tsx scripts/bench/bench-fish-prompts.ts [--n N]`: a server, a zsh pane, the harness's fish
// pane and FISH_PROMPTS' panes, N rounds; prints the rows and the JSON.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const i = process.argv.indexOf('--n');
  const n = i < 0 ? 50 : Number(process.argv[i + 1]);
  const runRoot = makeRunRoot('tmux-run-bench-fish-prompts-');
  process.env[RUN_ROOT_VAR] = runRoot;
  const scope = await openScope();
  try {
    const zsh = await scope.server.newPane();
    const zshListing = await enroll(zsh);
    const plain = await fishPane(scope.server);
    const panes = [
      { name: 'zsh', listing: zshListing },
      { name: '`$ `', listing: await enrollFish(plain) },
      ...(await openPromptPanes(scope.server)),
    ];
    const mcp = await scope.startMcp();
    const load0 = loadavg()[0]!;
    const ms = await sideBySide(mcp.client, panes, n);
    const c: FishPromptsCost = {
      zsh_ms: ms.get('zsh')!,
      fish: panes.slice(1).map((p) => ({ name: p.name, ms: ms.get(p.name)! })),
      loadavg: [load0, loadavg()[0]!].map((x) => Number(x.toFixed(2))),
    };
    await mcp.close();
    process.stdout.write(`${fishPromptLines(c).join('\n')}\n${JSON.stringify(c)}\n`);
  } finally {
    await scope.close();
    await sweepRunRoot(runRoot);
  }
}
