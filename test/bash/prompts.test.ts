// The prompts and set-ups people run in bash, each sourced in ~/.bashrc before tmux-run's line as
// a person has them: Debian's powerline, liquidprompt, git's __git_ps1, bash-completion, fzf's key
// bindings, zoxide, direnv (all real, from Debian's packages), and faithful imitations of
// oh-my-bash's and bash-it bobby's symbols, a two-line prompt, vi mode with show-mode-in-prompt,
// PROMPT_COMMAND as a string and as an array, a WINCH trap of the person's. For each: enrolled
// exact, 30 runs in a row at the idle empty prompt, a typed line refused and kept, a continuation
// line refused, a half-typed line intact after a run's notice, nothing on the screen or in history.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { waitListed } from '../../lab/enrollment.js';
import { callRun } from '../../lab/mcp.js';
import { useServerAndBroker } from '../../lab/lifecycle.js';
import type { Pane } from '../../lab/pane.js';
import { waitUntil } from '../../lab/waiting.js';
import { checkRunResult } from '../mcp/support.js';
import { finalOf, runIdOf, start } from '../long/support.js';
import { BASH_SNIPPET, bashPane, ok, refusal } from './support.js';

const file = useServerAndBroker();

/** A set-up: its lines in ~/.bashrc (before tmux-run's), and its PS1 when it sets none itself. */
interface SetUp {
  name: string;
  rc: string;
  ps1?: string;
}

const SETUPS: SetUp[] = [
  {
    name: "Debian's powerline (bash binding)",
    rc: 'POWERLINE_BASH_CONTINUATION=1 POWERLINE_BASH_SELECT=1\nsource /usr/share/powerline/bindings/bash/powerline.sh',
  },
  { name: 'liquidprompt', rc: 'source /usr/share/liquidprompt/liquidprompt' },
  {
    name: "git's __git_ps1 in a repository",
    rc: [
      'source /usr/lib/git-core/git-sh-prompt',
      'GIT_PS1_SHOWDIRTYSTATE=1 GIT_PS1_SHOWUNTRACKEDFILES=1',
      'mkdir -p ~/repo && cd ~/repo && { [ -d .git ] || git init -q -b main . ; }',
    ].join('\n'),
    ps1: '\\[\\e[32m\\]\\u@\\h\\[\\e[0m\\] \\w$(__git_ps1 " (%s)")\\$ ',
  },
  { name: 'bash-completion', rc: 'source /usr/share/bash-completion/bash_completion' },
  { name: "fzf's key bindings", rc: 'source /usr/share/doc/fzf/examples/key-bindings.bash' },
  { name: 'zoxide', rc: 'eval "$(zoxide init bash)"' },
  { name: 'direnv', rc: 'eval "$(direnv hook bash)"' },
  {
    name: "oh-my-bash's default theme (±|main✔|→)",
    rc: '',
    ps1: '\\[\\e[1;36m\\]\\w\\[\\e[0m\\] \\[\\e[1;34m\\]±\\[\\e[0m\\]|\\[\\e[32m\\]main\\[\\e[32m\\]✔\\[\\e[0m\\]|→ ',
  },
  {
    name: "bash-it bobby (✓ and ○, tput's sgr0 with its SI byte)",
    rc: 'RST="$(tput sgr0)"',
    ps1: '\\[\\e[0;32m\\]✓\\[${RST}\\] \\u in \\w |main \\[\\e[32m\\]✓\\[${RST}\\]| ○ → ',
  },
  { name: 'a two-line prompt', rc: '', ps1: '\\[\\e[34m\\]\\w\\[\\e[0m\\] on \\[\\e[35m\\]main\\[\\e[0m\\]\\n❯ ' },
  {
    name: 'set -o vi with show-mode-in-prompt',
    rc: "set -o vi\nbind 'set show-mode-in-prompt on'",
  },
  { name: 'PROMPT_COMMAND as a string', rc: 'PROMPT_COMMAND="$PROMPT_COMMAND; : person-string"' },
  { name: 'PROMPT_COMMAND as an array', rc: 'PROMPT_COMMAND=("$PROMPT_COMMAND" ": person-array")' },
  { name: "a WINCH trap of the person's", rc: "trap 'echo winch >> ~/winch.log' WINCH" },
];

let count = 0;
const lastLine = (s: string): string => s.split('\n').at(-1) ?? '';

async function keys(pane: Pane, ...k: string[]): Promise<void> {
  await file.server.tmux(['send-keys', '-t', pane.id, ...k]);
}

/** Waits until a run passes (the shell is back at an idle, empty prompt), then returns. */
async function idle(run: (s: string) => Promise<Record<string, any>>): Promise<void> {
  await waitUntil(async () => (await run('true')).ok === true, 20_000, 'a run to pass at the idle prompt');
}

async function exercise(s: SetUp): Promise<void> {
  const home = join(file.server.home, `setup-${++count}`);
  mkdirSync(home, { recursive: true });
  // The person's ~/.bashrc: the set-up, then tmux-run's line; read as bash reads it at start-up
  // (sourced from the harness's first prompt, which the set-up then replaces).
  const rc = [s.rc, s.ps1 !== undefined ? `PS1='${s.ps1}'` : '', `source ${BASH_SNIPPET}`].join('\n');
  writeFileSync(join(home, '.bashrc'), rc + '\n');
  const pane = await bashPane(file.server, { rc: `export HOME=${home}; cd ~; HISTFILE=~/.bash_history` });
  await pane.type('source ~/.bashrc', { enter: true });
  const listing: PaneListing = await waitListed(pane, await pane.shellPid());
  expect(listing.editor_check).toBe('exact');
  const run = async (script: string) => checkRunResult((await callRun(file.mcp.client, listing, script)).result);
  await idle(run);

  // 30 runs in a row at the idle empty prompt, with nothing drawn (notices off: the harness's).
  const screen = await file.server.tmux(['capture-pane', '-p', '-t', pane.id]);
  for (let i = 0; i < 30; i++) expect(ok(await run(`echo run-${i}`)).stdout.data).toBe(`run-${i}\n`);
  expect(await file.server.tmux(['capture-pane', '-p', '-t', pane.id])).toBe(screen);

  // A typed line: refused, nothing run, kept as typed.
  const m = join(home, 'must-not-exist');
  await pane.type('echo kept-line');
  await pane.waitFor((x) => lastLine(x).endsWith('echo kept-line'));
  const e = refusal(await run(`touch ${m}`));
  expect(e.code).toBe('editor_not_empty');
  expect(existsSync(m)).toBe(false);
  expect(lastLine(await pane.capture())).toMatch(/echo kept-line$/);
  await keys(pane, 'C-u');
  await idle(run);

  // A continuation line: refused; the command completes as typed.
  await pane.type('echo "one', { enter: true });
  await new Promise((r) => setTimeout(r, 300));
  const c = refusal(await run(`touch ${m}`));
  expect(c.code).toBe('editor_not_empty');
  expect(c.message).toMatch(/continuation/);
  await pane.type('two"', { enter: true });
  await pane.waitFor((x) => /^one\ntwo$/m.test(x));
  await idle(run);

  // A run's notice while the person types: their half-typed line comes back intact.
  await pane.type('TMUX_RUN_NOTIFY=on', { enter: true });
  await idle(run);
  const started = join(home, 'long-started');
  const long = await start(file.mcp.client, listing, `touch ${started}; sleep 0.5; echo long-done`);
  await waitUntil(() => existsSync(started));
  await pane.type('echo half');
  await pane.waitFor((x) => lastLine(x).endsWith('echo half'));
  expect(ok(await finalOf(file.mcp.client, listing, runIdOf(long))).stdout.data).toBe('long-done\n');
  // (The notice and readline's redraw below it are two writes: wait for both.)
  await pane.waitFor((x) => /tmux-run: run \S+ .*exited 0/.test(x) && /echo half$/.test(lastLine(x)));
  await pane.type(' typed', { enter: true });
  await pane.waitFor((x) => /^half typed$/m.test(x));
  await idle(run);

  // Nothing of tmux-run's in the history.
  await pane.type('history > ~/history.txt', { enter: true });
  // (bash writes the list line by line: complete once its own line, the last, is there.)
  const histFile = join(home, 'history.txt');
  const whole = (): boolean =>
    existsSync(histFile) && /history > ~\/history\.txt\n$/.test(readFileSync(histFile, 'utf8'));
  await waitUntil(whole);
  const history = readFileSync(histFile, 'utf8');
  expect(history).not.toMatch(/_tmux_run|run-\d|long-done/);
  expect(history).toMatch(/echo half typed/);
  await pane.kill();
}

describe('the prompts and set-ups people run in bash', () => {
  for (const s of SETUPS) it(s.name, () => exercise(s), 120_000);
});
