// scripts/bench/bench-zsh.ts: what the snippet costs a new shell's first prompt and first command, the
// way zsh-bench counts them (a section of `npm run bench`, also runnable alone:
// `npx tsx scripts/bench/bench-zsh.ts [--n 10]`).
//
// Each fresh pane's .zshrc notes $EPOCHREALTIME on its first line; its first precmd notes the
// first prompt, and a command typed the moment the pane exists (as a person types into a new
// terminal) notes when it runs: the first command. Two start-up files, minimal and with Debian's
// zsh-autosuggestions and zsh-syntax-highlighting, each without the snippet, with the snippet of
// issue 24's base (BEFORE: the helper starts while .zshrc runs) and with this tree's (the helper
// starts once the first prompt is drawn), the snippet last as `tmux-run setup` writes it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { listEnrolled } from '../../src/broker/registry.js';
import { ROOT, SNIPPET } from '../../lab/product.js';
import { SESSION, type TmuxServer } from '../../lab/server.js';
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from '../../lab/run-root.js';
import { openScope } from '../../lab/scope.js';
import { waitUntil } from '../../lab/waiting.js';
import { median } from './bench-enroll.js';

/** The commit issue 24's work started from: its snippet starts the helper while .zshrc runs. */
export const BEFORE_COMMIT = 'b3f3627';
const PLUGINS = [
  '/usr/share/zsh-autosuggestions/zsh-autosuggestions.zsh',
  '/usr/share/zsh-syntax-highlighting/zsh-syntax-highlighting.zsh',
];

export interface PromptCost {
  n: number;
  /** Per start-up file (minimal, plugins) and snippet (none, before, after): times in ms. */
  runs: Record<string, { first_prompt_ms: number[]; first_command_ms: number[] }>;
}

/** BEFORE's snippet in a directory of its own beside this tree's dist (the snippet finds dist/ next to shell/). */
function beforeSnippet(dir: string): string | undefined {
  try {
    const text = execFileSync('git', ['-C', ROOT, 'show', `${BEFORE_COMMIT}:shell/tmux-run.zsh`], { encoding: 'utf8' });
    mkdirSync(join(dir, 'shell'), { recursive: true });
    if (!existsSync(join(dir, 'dist'))) symlinkSync(join(ROOT, 'dist'), join(dir, 'dist'));
    writeFileSync(join(dir, 'shell', 'tmux-run.zsh'), text);
    return join(dir, 'shell', 'tmux-run.zsh');
  } catch {
    return undefined;
  }
}

const readNumber = (file: string): number | undefined => {
  try {
    return Number(readFileSync(file, 'utf8').trim()) || undefined;
  } catch {
    return undefined;
  }
};

/** One fresh pane: its first prompt and its first command (ms after .zshrc's first line). */
async function fresh(server: TmuxServer, body: string[], tag: string): Promise<{ prompt: number; command: number }> {
  const prompt = join(server.home, `zb.${tag}.prompt`);
  const command = join(server.home, `zb.${tag}.command`);
  const zshrc = [
    'zmodload zsh/datetime; typeset -g __zb_t0=$EPOCHREALTIME',
    "PROMPT='$ '",
    ...body,
    `__zb_first() { print -r -- $(( (EPOCHREALTIME - __zb_t0) * 1000 )) > ${prompt}; precmd_functions=(\${precmd_functions:#__zb_first}) }`,
    'precmd_functions+=(__zb_first)',
    '',
  ].join('\n');
  writeFileSync(join(server.home, '.zshrc'), zshrc, { mode: 0o600 });
  const id = (
    await server.tmux([
      'new-window',
      '-d',
      '-P',
      '-F',
      '#{pane_id}',
      '-t',
      `${SESSION}:`,
      '-c',
      server.home,
      '--',
      'zsh',
      '-i',
    ])
  ).trim();
  // Typed at once, as into a terminal that just opened: the shell reads it once its editor starts.
  await server.tmux([
    'send-keys',
    '-t',
    id,
    '-l',
    ` print -r -- $(( (EPOCHREALTIME - __zb_t0) * 1000 )) > ${command}\r`,
  ]);
  const p = await waitUntil(() => readNumber(prompt), 20_000, `the first prompt of ${id}`);
  const c = await waitUntil(() => readNumber(command), 20_000, `the first command of ${id}`);
  // An enrolled pane is left only once its helper is up, so no start overlaps the next pane's.
  if (body.some((l) => l.includes('tmux-run.zsh')))
    await waitUntil(
      async () => (await listEnrolled(server.registryDir)).some((x) => x.pane_id === id),
      20_000,
      `${id} listed`,
    );
  await server.tmux(['kill-pane', '-t', id]);
  await waitUntil(
    async () => !(await listEnrolled(server.registryDir)).some((x) => x.pane_id === id),
    20_000,
    `${id} gone`,
  );
  return { prompt: p, command: c };
}

/** Every start-up file with every snippet, alternating, `n` times (after one warm-up round). */
export async function promptCost(server: TmuxServer, n: number, scratch: string): Promise<PromptCost> {
  const before = beforeSnippet(join(scratch, 'before'));
  const snippets: Record<string, string | undefined> = { none: undefined, before, after: SNIPPET };
  const rcs: Record<string, string[]> = {
    minimal: [],
    plugins: PLUGINS.filter((p) => existsSync(p)).map((p) => `source ${p}`),
  };
  const out: PromptCost = { n, runs: {} };
  for (let i = 0; i <= n; i++) {
    for (const [rc, lines] of Object.entries(rcs)) {
      for (const [name, path] of Object.entries(snippets)) {
        if (name === 'before' && path === undefined) continue;
        const r = await fresh(server, [...lines, ...(path ? [`source ${path}`] : [])], `${rc}.${name}.${i}`);
        if (i === 0) continue;
        const key = `${rc}/${name}`;
        out.runs[key] ??= { first_prompt_ms: [], first_command_ms: [] };
        out.runs[key].first_prompt_ms.push(r.prompt);
        out.runs[key].first_command_ms.push(r.command);
      }
    }
  }
  return out;
}

/** Table rows (markdown): medians, and what the snippet adds to the same .zshrc without it. */
export function promptCostLines(c: PromptCost): string[] {
  const lines = [
    '',
    `| .zshrc / snippet (zsh-bench style, ms after .zshrc's first line, medians of ${c.n}) | first prompt | first command | prompt lag | command lag |`,
    '| --- | ---: | ---: | ---: | ---: |',
  ];
  for (const rc of ['minimal', 'plugins']) {
    const none = c.runs[`${rc}/none`];
    if (!none) continue;
    for (const name of ['none', 'before', 'after']) {
      const r = c.runs[`${rc}/${name}`];
      if (!r) continue;
      const [p, k] = [median(r.first_prompt_ms), median(r.first_command_ms)];
      const lag = (x: number, y: number): string => (name === 'none' ? '' : (x - y).toFixed(1));
      lines.push(
        `| ${rc === 'plugins' ? 'autosuggestions + syntax-highlighting' : 'minimal'} / ${name === 'none' ? 'no snippet' : name === 'before' ? `snippet of ${BEFORE_COMMIT} (before)` : "this tree's snippet (after)"} | ${p.toFixed(1)} | ${k.toFixed(1)} | ${lag(p, median(none.first_prompt_ms))} | ${lag(k, median(none.first_command_ms))} |`,
      );
    }
  }
  return lines;
}

// Alone: its own server.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const i = process.argv.indexOf('--n');
  const n = i < 0 ? 10 : Number(process.argv[i + 1]);
  const runRoot = makeRunRoot('tmux-run-bench-zsh-');
  process.env[RUN_ROOT_VAR] = runRoot;
  const scope = await openScope({ env: { TMUX_RUN_NOTIFY: 'off' } });
  try {
    const c = await promptCost(scope.server, n, runRoot);
    process.stdout.write(`${promptCostLines(c).join('\n')}\n${JSON.stringify(c)}\n`);
  } finally {
    await scope.close();
    await sweepRunRoot(runRoot);
  }
}
