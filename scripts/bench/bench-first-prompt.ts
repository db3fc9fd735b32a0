// scripts/bench/bench-first-prompt.ts: what the snippet costs a new bash or fish pane's first prompt and
// first command, the way zsh-bench counts them (scripts/bench/bench-zsh.ts does zsh; a section of
// `npm run bench`, also runnable alone: `npx tsx scripts/bench/bench-first-prompt.ts [--n 12]`).
//
// Each round opens a new tmux window per start-up file and snippet, in turn, and types a command
// into it the moment it exists (as a person types into a terminal that just opened). The
// clock starts just before the window is asked for (wall clock, as the shell's); a hook added
// after the snippet notes the first prompt (bash: last in PROMPT_COMMAND; fish: a fish_prompt handler defined after the
// snippet's), and the typed command notes when it runs. bash reads $EPOCHREALTIME; fish 3 has no
// clock of its own, so each time is a `date +%s%N`, the same fork in every arm. Start-up files:
// bash minimal, bash with bash-completion, git's __git_ps1 in PS1 and fzf's key bindings, fish
// minimal. Snippets: none, the snippet of BEFORE_COMMIT (main before issue 42; beside this tree's
// dist), this tree's. Target: this tree's first prompt and first command within 1.15x of none.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { listEnrolled } from '../../src/broker/registry.js';
import { ROOT } from '../../lab/product.js';
import { SESSION, type TmuxServer } from '../../lab/server.js';
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from '../../lab/run-root.js';
import { openScope } from '../../lab/scope.js';
import { waitUntil } from '../../lab/waiting.js';
import { median } from './bench-enroll.js';
import { sideBySidePause } from './bench-common.js';

/** main before issue 42's work: its bash snippet forks two `stat`s and starts the helper while .bashrc runs. */
export const FIRST_PROMPT_BEFORE = 'ad88af8';
/** The target: a first prompt and a first command within this ratio of the same shell's without tmux-run. */
export const FIRST_PROMPT_TARGET = 1.15;

type ShellKind = 'bash' | 'fish';
interface StartupFile {
  shell: ShellKind;
  /** Lines of the person's start-up file before the snippet. */
  lines: string[];
}

const BASH_PLUGINS = [
  '/usr/share/bash-completion/bash_completion',
  '/usr/lib/git-core/git-sh-prompt',
  '/usr/share/doc/fzf/examples/key-bindings.bash',
];

/** The start-up files measured (the plugins one only where Debian's packages are installed). */
function startupFiles(): Record<string, StartupFile> {
  const out: Record<string, StartupFile> = { 'bash minimal': { shell: 'bash', lines: [] } };
  if (BASH_PLUGINS.every((p) => existsSync(p)))
    out['bash plugins'] = {
      shell: 'bash',
      lines: [...BASH_PLUGINS.map((p) => `source ${p}`), `PS1='\\w$(__git_ps1 " (%s)")\\$ '`],
    };
  out['fish minimal'] = { shell: 'fish', lines: [] };
  return out;
}

export interface FirstPromptCost {
  n: number;
  /** The commit whose snippets were measured as `before`. */
  before?: string;
  loadavg_start: number[];
  loadavg_end: number[];
  /** Per start-up file and snippet (`bash minimal/none`, .../before, .../after): times in ms. */
  runs: Record<string, { first_prompt_ms: number[]; first_command_ms: number[] }>;
}

/** The tree compared with this one: TMUX_RUN_BENCH_BEFORE, else FIRST_PROMPT_BEFORE. */
const beforeCommit = (): string => process.env.TMUX_RUN_BENCH_BEFORE || FIRST_PROMPT_BEFORE;

/** BEFORE's snippet in a directory of its own beside this tree's dist (a snippet finds dist/ and the rest of itself next to shell/). */
function beforeSnippet(dir: string, shell: ShellKind): string | undefined {
  const before = beforeCommit();
  try {
    const names = execFileSync('git', ['-C', ROOT, 'ls-tree', '--name-only', `${before}:shell/`], { encoding: 'utf8' })
      .split('\n')
      .filter((n) => /^tmux-run[a-z-]*\.(bash|fish)$/.test(n));
    mkdirSync(join(dir, 'shell'), { recursive: true });
    if (!existsSync(join(dir, 'dist'))) symlinkSync(join(ROOT, 'dist'), join(dir, 'dist'));
    for (const name of names) {
      const text = execFileSync('git', ['-C', ROOT, 'show', `${before}:shell/${name}`], { encoding: 'utf8' });
      writeFileSync(join(dir, 'shell', name), text);
    }
    return existsSync(join(dir, 'shell', `tmux-run.${shell}`)) ? join(dir, 'shell', `tmux-run.${shell}`) : undefined;
  } catch {
    return undefined;
  }
}

/** The wall-clock time (ms) a shell wrote to `file` (bash: seconds with microseconds; fish: ns). */
const readTime = (file: string, shell: ShellKind): number | undefined => {
  try {
    const t = readFileSync(file, 'utf8').trim();
    if (!/^[0-9.]+$/.test(t)) return undefined;
    return shell === 'bash' ? Number(t) * 1000 : Number(t) / 1e6;
  } catch {
    return undefined;
  }
};
/** Now, on the wall clock the shells read, in ms with a fraction. */
const wallNow = (): number => performance.timeOrigin + performance.now();

/** The start-up file's text and the command typed at once, for `shell`. */
function texts(rc: StartupFile, snippet: string | undefined, prompt: string, command: string): [string, string] {
  if (rc.shell === 'bash') {
    const text = [
      'unset PROMPT_COMMAND',
      "PS1='$ '",
      ...rc.lines,
      ...(snippet ? [`source ${snippet}`] : []),
      `__fp_first() { printf '%s\\n' "$EPOCHREALTIME" >${prompt}; PROMPT_COMMAND=\${PROMPT_COMMAND//$'\\n'__fp_first/}; }`,
      `PROMPT_COMMAND=\${PROMPT_COMMAND:+$PROMPT_COMMAND}$'\\n'__fp_first`,
      '',
    ].join('\n');
    return [text, ` printf '%s\\n' "$EPOCHREALTIME" >${command}\r`];
  }
  const text = [
    'set -g fish_greeting',
    "function fish_prompt; printf '$ '; end",
    ...rc.lines,
    ...(snippet ? [`source ${snippet}`] : []),
    `function __fp_first --on-event fish_prompt; date +%s%N >${prompt}; functions -e __fp_first; end`,
    '',
  ].join('\n');
  return [text, ` date +%s%N >${command}\r`];
}

/** One fresh window: its first prompt and its first command (ms after new-window was asked for). */
async function fresh(
  server: TmuxServer,
  rc: StartupFile,
  snippet: string | undefined,
  tag: string,
): Promise<{ prompt: number; command: number }> {
  const prompt = join(server.home, `fp.${tag}.prompt`);
  const command = join(server.home, `fp.${tag}.command`);
  const file = join(server.home, `fp.${tag}.rc`);
  const [text, typed] = texts(rc, snippet, prompt, command);
  writeFileSync(file, text, { mode: 0o600 });
  const argv =
    rc.shell === 'bash'
      ? ['bash', '--noprofile', '--rcfile', file, '-i']
      : ['fish', '--no-config', '-i', '-C', `source ${file}`];
  const t0 = wallNow();
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
      ...argv,
    ])
  ).trim();
  await server.tmux(['send-keys', '-t', id, '-l', typed]);
  const p = await waitUntil(() => readTime(prompt, rc.shell), 20_000, `the first prompt of ${id}`);
  const c = await waitUntil(() => readTime(command, rc.shell), 20_000, `the first command of ${id}`);
  // An enrolled pane is left only once its helper is up, so no start overlaps the next pane's; and
  // the next window is asked for only once this one's shell and helper have exited (a helper's
  // exit, after its record is gone, took the next window's CPU: the arm after an enrolled one
  // paid for it, the one after no snippet did not).
  let helper: number | null = null;
  if (snippet)
    helper = await waitUntil(
      async () => (await listEnrolled(server.registryDir)).find((x) => x.pane_id === id)?.helper_pid,
      20_000,
      `${id} listed`,
    );
  const shell = Number((await server.tmux(['display-message', '-p', '-t', id, '#{pane_pid}'])).trim());
  await server.tmux(['kill-pane', '-t', id]);
  await waitUntil(
    async () => !(await listEnrolled(server.registryDir)).some((x) => x.pane_id === id),
    20_000,
    `${id} gone`,
  );
  await waitUntil(
    () => [helper, shell].every((pid) => !pid || !existsSync(`/proc/${pid}`)) || undefined,
    20_000,
    `${id}'s shell and helper to exit`,
  );
  await sideBySidePause();
  return { prompt: p - t0, command: c - t0 };
}

/** Every start-up file with every snippet, alternating, `n` times (after one warm-up round). */
export async function firstPromptCost(server: TmuxServer, n: number, scratch: string): Promise<FirstPromptCost> {
  const rcs = startupFiles();
  const snippets: Record<ShellKind, Record<string, string | undefined>> = {
    bash: {
      none: undefined,
      before: beforeSnippet(join(scratch, 'before'), 'bash'),
      after: join(ROOT, 'shell', 'tmux-run.bash'),
    },
    fish: {
      none: undefined,
      before: beforeSnippet(join(scratch, 'before'), 'fish'),
      after: join(ROOT, 'shell', 'tmux-run.fish'),
    },
  };
  const out: FirstPromptCost = {
    n,
    before: beforeCommit(),
    loadavg_start: loadavg().map((x) => Number(x.toFixed(2))),
    loadavg_end: [],
    runs: {},
  };
  for (let i = 0; i <= n; i++) {
    for (const [name, rc] of Object.entries(rcs)) {
      for (const [which, path] of Object.entries(snippets[rc.shell])) {
        if (which !== 'none' && path === undefined) continue;
        const r = await fresh(server, rc, path, `${name.replace(' ', '-')}.${which}.${i}`);
        if (i === 0) continue;
        const key = `${name}/${which}`;
        out.runs[key] ??= { first_prompt_ms: [], first_command_ms: [] };
        out.runs[key].first_prompt_ms.push(r.prompt);
        out.runs[key].first_command_ms.push(r.command);
      }
    }
  }
  out.loadavg_end = loadavg().map((x) => Number(x.toFixed(2)));
  return out;
}

/** A difference in ms with its sign. */
const signed = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;

/** Table rows (markdown): medians, each snippet's ratio to none, this tree's against the target. */
export function firstPromptLines(c: FirstPromptCost): string[] {
  const lines = [
    '',
    `| start-up file / snippet (new window, keys typed at once; ms after new-window was asked for, medians of ${c.n}; load ${c.loadavg_start.join(' ')} -> ${c.loadavg_end.join(' ')}) | first prompt | first command | prompt lag | command lag | prompt ratio | command ratio | target ${FIRST_PROMPT_TARGET}x |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  const names = [...new Set(Object.keys(c.runs).map((k) => k.split('/')[0]!))];
  for (const name of names) {
    const none = c.runs[`${name}/none`];
    if (!none) continue;
    const [p0, k0] = [median(none.first_prompt_ms), median(none.first_command_ms)];
    for (const which of ['none', 'before', 'after']) {
      const r = c.runs[`${name}/${which}`];
      if (!r) continue;
      const [p, k] = [median(r.first_prompt_ms), median(r.first_command_ms)];
      const verdict =
        which === 'after' ? (p / p0 <= FIRST_PROMPT_TARGET && k / k0 <= FIRST_PROMPT_TARGET ? 'pass' : 'MISS') : '';
      const label =
        which === 'none'
          ? 'no snippet'
          : which === 'before'
            ? `snippet of ${c.before ?? FIRST_PROMPT_BEFORE} (before)`
            : "this tree's snippet";
      lines.push(
        `| ${name} / ${label} | ${p.toFixed(1)} | ${k.toFixed(1)} | ${which === 'none' ? '' : signed(p - p0)} | ${which === 'none' ? '' : signed(k - k0)} | ${which === 'none' ? '' : `${(p / p0).toFixed(2)}x`} | ${which === 'none' ? '' : `${(k / k0).toFixed(2)}x`} | ${verdict} |`,
      );
    }
  }
  return lines;
}

// Alone: its own server.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const i = process.argv.indexOf('--n');
  const n = i < 0 ? 12 : Number(process.argv[i + 1]);
  const runRoot = makeRunRoot('tmux-run-bench-first-prompt-');
  process.env[RUN_ROOT_VAR] = runRoot;
  const scope = await openScope({ env: { TMUX_RUN_NOTIFY: 'off' } });
  try {
    const c = await firstPromptCost(scope.server, n, runRoot);
    process.stdout.write(`${firstPromptLines(c).join('\n')}\n${JSON.stringify(c)}\n`);
  } finally {
    await scope.close();
    await sweepRunRoot(runRoot);
  }
}
