// scripts/bench/bench-enroll.ts: what enrolling costs the person's shell (a section of `npm run bench`,
// also runnable alone to compare snippets, e.g. main's against this tree's):
//
//   npx tsx scripts/bench/bench-enroll.ts [--n 20] [--snippet PATH/shell/tmux-run.zsh]
//
// - `source` time: $EPOCHREALTIME around the `source` line, inside N fresh panes (median).
// - first-prompt time: from the first line of .zshrc to the end of the last precmd hook of the
//   first prompt, in N fresh panes whose .zshrc sources the snippet, and in N without it.
// - the precmd hook and the idle zle -F handler: 1000 calls each in an enrolled pane, per call.
// - the helper's memory: RSS, PSS and private (clean + dirty) from /proc/PID/smaps_rollup; most
//   of its RSS is the node binary's pages, shared with every other node process.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { listEnrolled } from '../../src/broker/registry.js';
import type { Pane } from '../../lab/pane.js';
import { SNIPPET } from '../../lab/product.js';
import type { TmuxServer } from '../../lab/server.js';
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from '../../lab/run-root.js';
import { openScope } from '../../lab/scope.js';
import { sleep, waitUntil } from '../../lab/waiting.js';

export interface Memory {
  rss_kb: number;
  pss_kb: number;
  private_kb: number;
}

/** RSS, PSS and private memory of pid (/proc/PID/smaps_rollup), or undefined when it is gone. */
export function memoryOf(pid: number): Memory | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return {
    rss_kb: kb('Rss'),
    pss_kb: kb('Pss'),
    private_kb: kb('Private_Clean') + kb('Private_Dirty'),
  };
}

export interface EnrollCost {
  snippet: string;
  n: number;
  source_ms: number[];
  first_prompt_ms: number[];
  first_prompt_bare_ms: number[];
  precmd_us: number;
  handler_idle_us: number;
  helper_idle: Memory | undefined;
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Runs one line in the pane and returns the number it printed after `key=`. */
async function measured(pane: Pane, cmd: string, key: string): Promise<number> {
  const out = await pane.run(cmd, { timeoutMs: 30_000 });
  const v = Number(new RegExp(`${key}=([\\d.]+)`).exec(out)?.[1]);
  if (!Number.isFinite(v)) throw new Error(`no ${key}= in ${JSON.stringify(out)}`);
  return v;
}

/** The first-prompt time of a fresh pane whose .zshrc runs `body` (ms). */
async function firstPrompt(server: TmuxServer, body: string, tag: string): Promise<number> {
  const file = join(server.home, `first-prompt.${tag}`);
  const zshrc = [
    'zmodload zsh/datetime; typeset -g __bench_t0=$EPOCHREALTIME',
    "PROMPT='$ '",
    body,
    `__bench_first() { print -r -- $(( (EPOCHREALTIME - __bench_t0) * 1000 )) > ${file}; precmd_functions=(\${precmd_functions:#__bench_first}) }`,
    'precmd_functions+=(__bench_first)',
    '',
  ].join('\n');
  const pane = await server.newPane({ zshrc });
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
  await waitForEnrolled(server, pane, body.includes('source'));
  await pane.kill();
  return ms;
}

/** With `enrolled`, waits until the pane is listed (so no start overlaps the next pane's). */
async function waitForEnrolled(server: TmuxServer, pane: Pane, enrolled: boolean): Promise<void> {
  if (!enrolled) return;
  await waitUntil(
    async () => (await listEnrolled(server.registryDir)).some((p) => p.pane_id === pane.id),
    20_000,
    `${pane.id} to be listed`,
  );
}

/** Measures what enrolling costs the shell, with `snippet`, in `n` fresh panes of `server`. */
export async function enrollCost(server: TmuxServer, n: number, snippet = SNIPPET): Promise<EnrollCost> {
  const source_ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const pane = await server.newPane({ zshrc: "PROMPT='$ '\nzmodload zsh/datetime\n" });
    source_ms.push(
      await measured(
        pane,
        `t0=$EPOCHREALTIME; source ${snippet}; print -r -- took=$(( (EPOCHREALTIME - t0) * 1000 ))`,
        'took',
      ),
    );
    await waitForEnrolled(server, pane, true);
    await pane.kill();
  }
  const first_prompt_ms: number[] = [];
  const first_prompt_bare_ms: number[] = [];
  for (let i = 0; i < n; i++) {
    first_prompt_bare_ms.push(await firstPrompt(server, '', `bare.${i}`));
    first_prompt_ms.push(await firstPrompt(server, `source ${snippet}`, `enrolled.${i}`));
  }
  // The hooks, 1000 calls each, in an enrolled pane at rest.
  const pane = await server.newPane({ zshrc: "PROMPT='$ '\nzmodload zsh/datetime\n" });
  await pane.run(`source ${snippet}`, { timeoutMs: 30_000 });
  const listing = await waitUntil(
    async () => (await listEnrolled(server.registryDir)).find((p) => p.pane_id === pane.id && p.mode !== 'unknown'),
    20_000,
    `${pane.id} to be listed`,
  );
  const per = (fn: string): string =>
    `t0=$EPOCHREALTIME; repeat 1000 ${fn}; print -r -- us=$(( (EPOCHREALTIME - t0) * 1000 ))`;
  const precmd_us = await measured(pane, per('_tmux_run_precmd'), 'us');
  // Outside zle the widget reads nothing and returns: the cost of a wake with nothing to read.
  // (Only this tree's handler reads without blocking; an older snippet's would wait for a line.)
  const handler_idle_us = snippet === SNIPPET ? await measured(pane, per('_tmux_run_on_request'), 'us') : NaN;
  // The helper at rest: enrolled, its start-up garbage collected (1 s after ready), idle.
  await sleep(2000);
  const helper_idle = memoryOf(listing.helper_pid ?? 0);
  await pane.kill();
  return { snippet, n, source_ms, first_prompt_ms, first_prompt_bare_ms, precmd_us, handler_idle_us, helper_idle };
}

/** The bench's targets for the shell's side: zsh-bench's "instant" is a first-prompt lag under 50 ms. */
export function enrollTargets(
  c: EnrollCost,
): Array<{ name: string; target: string; value: number; pass: boolean; show: string }> {
  const source = median(c.source_ms);
  const lag = median(c.first_prompt_ms) - median(c.first_prompt_bare_ms);
  return [
    {
      name: '`source` in a fresh pane (median)',
      target: '< 20 ms',
      value: source,
      pass: source < 20,
      show: `${source.toFixed(1)} ms`,
    },
    {
      name: 'first-prompt lag the snippet adds (medians)',
      target: '< 50 ms',
      value: lag,
      pass: lag < 50,
      show: `${lag.toFixed(1)} ms`,
    },
    {
      name: 'precmd hook, per call',
      target: '< 1000 µs',
      value: c.precmd_us,
      pass: c.precmd_us < 1000,
      show: `${c.precmd_us.toFixed(0)} µs`,
    },
  ];
}

const mb = (kb: number | undefined): string => (kb === undefined ? '?' : (kb / 1024).toFixed(1));

/** Table rows (markdown) for the bench's report. */
export function enrollCostLines(c: EnrollCost): string[] {
  const f = (xs: number[]): string =>
    `median ${median(xs).toFixed(1)} (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)})`;
  const h = c.helper_idle;
  return [
    `| \`source\` in a fresh pane ($EPOCHREALTIME around it, ms, n=${c.n}) | ${f(c.source_ms)} | | |`,
    `| first prompt, .zshrc with the snippet (ms, n=${c.n}) | ${f(c.first_prompt_ms)} | | |`,
    `| first prompt, the same .zshrc without it (ms, n=${c.n}) | ${f(c.first_prompt_bare_ms)} | | |`,
    `| precmd hook / idle zle -F handler, per call (µs, 1000 calls) | ${c.precmd_us.toFixed(1)} / ${c.handler_idle_us.toFixed(1)} | | |`,
    `| idle helper memory (MB): RSS / PSS / private (smaps_rollup) | ${mb(h?.rss_kb)} / ${mb(h?.pss_kb)} / ${mb(h?.private_kb)} | | |`,
  ];
}

// Alone: `npx tsx scripts/bench/bench-enroll.ts [--n N] [--snippet PATH]` prints the rows and the JSON.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const arg = (name: string): string | undefined => {
    const i = process.argv.indexOf(name);
    return i < 0 ? undefined : process.argv[i + 1];
  };
  const runRoot = makeRunRoot('tmux-run-bench-enroll-');
  process.env[RUN_ROOT_VAR] = runRoot;
  const scope = await openScope();
  try {
    const c = await enrollCost(scope.server, Number(arg('--n') ?? 20), arg('--snippet') ?? SNIPPET);
    process.stdout.write(`${enrollCostLines(c).join('\n')}\n${JSON.stringify(c)}\n`);
  } finally {
    await scope.close();
    await sweepRunRoot(runRoot);
  }
}
