// Enrolling costs the shell nothing: `source` returns without waiting for Node, and the helper's
// ready or error line arrives later through the line editor. What happens to a start that the
// person interrupts (^C), abandons (kill-pane, `exec zsh`, tmux_run_unenroll) or repeats
// (sourced twice in start-up files), and the zsh set-ups people really have.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { filesIn, helperChildren, helpersIn, listed, waitEmpty, waitListed } from '../../lab/enrollment.js';
import type { Pane } from '../../lab/pane.js';
import { allCmdlines, processAlive } from '../../lab/processes.js';
import { SNIPPET, SOURCE } from '../../lab/product.js';
import { useServer } from '../../lab/lifecycle.js';
import { callRun } from '../../lab/mcp.js';
import type { TmuxServer } from '../../lab/server.js';
import { sleep, waitUntil } from '../../lab/waiting.js';

let server: TmuxServer;
/** The held nodes a test made: released after it, so that no wrapper waits on. */
const held: Array<{ release(): void }> = [];

const scope = useServer();
/** The panes a test opened: closed after it, whatever happened, so that one failure stays one. */
const opened: Pane[] = [];
const newPane = async (opts?: Parameters<TmuxServer['newPane']>[0]): Promise<Pane> => {
  const p = await server.newPane(opts);
  opened.push(p);
  return p;
};
afterEach(async () => {
  for (const h of held.splice(0)) h.release();
  for (const p of opened.splice(0)) await p.kill().catch(() => undefined);
  // A kept log (a failed start) or anything a failed test left must not fail the next test too.
  await waitEmpty(server.registryDir, 3000).catch(() => {
    for (const f of filesIn(server.registryDir)) rmSync(join(server.registryDir, f), { force: true });
  });
});
beforeAll(() => {
  server = scope.server;
});

/**
 * A stand-in for node that says it started, then waits until the test releases it before it
 * goes on with `rest` (sh code): what happens in the pane meanwhile cannot have waited for Node.
 */
function heldNode(name: string, rest: string): { path: string; started: string; release(): void } {
  const path = join(server.baseDir, name);
  const started = `${path}.started`;
  const released = `${path}.released`;
  rmSync(started, { force: true });
  rmSync(released, { force: true });
  writeFileSync(path, `#!/bin/sh\n: > '${started}'\nwhile [ ! -e '${released}' ]; do sleep 0.05; done\n${rest}\n`, {
    mode: 0o700,
  });
  const node = { path, started, release: () => writeFileSync(released, '') };
  held.push(node);
  return node;
}

let slowCount = 0;
/** A node that starts only when the test releases it: a start that is still under way. */
const slowNode = (): ReturnType<typeof heldNode> =>
  heldNode(`slow-node-${++slowCount}`, `exec '${process.execPath}' "$@"`);

/** Nothing of an enrollment anywhere: no file, no helper (or its wrapper), nothing listed. */
async function expectNothingLeft(timeoutMs = 5000): Promise<void> {
  await waitEmpty(server.registryDir, timeoutMs);
  await waitUntil(() => helpersIn(server.baseDir).length === 0, timeoutMs, 'no helper process');
  expect(allCmdlines().filter((c) => c.argv.includes(server.registryDir))).toEqual([]);
  expect(await listed(server.registryDir)).toEqual([]);
}

describe('source returns at once', () => {
  // Proved by structure, not by a stopwatch: node is held back until the test lets it go, so a
  // `source` that waited for Node could not return, nor the prompt come back, before that.
  it('returns, and the prompt comes back, while node has not even started; the helper then enrolls the pane', async () => {
    const pane = await newPane();
    const shellPid = await pane.shellPid();
    const held = heldNode('held-node', `exec '${process.execPath}' "$@"`);
    expect(await pane.runWithStatus(`TMUX_RUN_NODE=${held.path} source ${SNIPPET}`)).toEqual({ output: '', status: 0 });
    // Back at the prompt, the helper started and still the wrapper waiting to exec node.
    await waitUntil(() => existsSync(held.started), 5000, 'the helper started');
    expect(await listed(server.registryDir)).toEqual([]);
    expect(await pane.run('print -r -- ok')).toBe('ok');
    held.release();
    const listing = await waitListed(pane, shellPid);
    expect(helperChildren(shellPid)).toEqual([listing.helper_pid]);
    await pane.kill();
    await waitEmpty(server.registryDir);
  });

  it('with a helper that fails to start, returns at once and shows the reason once', async () => {
    const pane = await newPane();
    const held = heldNode('failing-node', 'echo "this node is broken" >&2\nexit 1');
    expect(await pane.runWithStatus(`TMUX_RUN_NODE=${held.path} source ${SNIPPET}`)).toEqual({ output: '', status: 0 });
    // Returned before the helper could fail: it has not been let go yet, and nothing is said.
    await waitUntil(() => existsSync(held.started), 5000, 'the helper started');
    expect(await pane.capture()).not.toContain('this node is broken');
    held.release();
    const line =
      /^tmux-run: not enrolled: the helper exited before it was ready: this node is broken \(the helper's log: (\S+)\)$/m;
    // The line, then the prompt drawn again below it (a moment after the line, through the line editor).
    const screen = await pane.waitFor((s) => line.test(s) && s.split('\n').at(-1) === '$');
    expect(screen.split('\n').slice(-2)[1]).toBe('$');
    await pane.run('true');
    await pane.run('true');
    expect((await pane.capture()).split('\n').filter((l) => line.test(l))).toHaveLength(1);
    await pane.kill();
    // (The kept log goes with the next enrollment of the same shell; this shell is gone.)
    for (const f of filesIn(server.registryDir)) expect(f).toMatch(/^ch\.\d+\.\d+\.log$/);
    for (const f of filesIn(server.registryDir)) rmSync(join(server.registryDir, f));
    await expectNothingLeft();
  });
});

describe('a start that is interrupted, abandoned or repeated', () => {
  it('^C at the prompt during the start abandons it: said once, no file, no process; then it enrolls as usual', async () => {
    const pane = await newPane();
    const shellPid = await pane.shellPid();
    const slow = slowNode();
    expect(await pane.runWithStatus(`TMUX_RUN_NODE=${slow.path} source ${SNIPPET}`)).toEqual({ output: '', status: 0 });
    expect(helperChildren(shellPid)).toHaveLength(1);
    await server.tmux(['send-keys', '-t', pane.id, 'C-c']);
    const said = 'tmux-run: not enrolled: interrupted while the helper was starting';
    await pane.waitFor((s) => s.includes(said));
    await expectNothingLeft();
    expect(helperChildren(shellPid)).toEqual([]);
    slow.release(); // (the wrapper is gone: nothing comes back)
    await sleep(500);
    expect(await listed(server.registryDir)).toEqual([]);
    expect(await pane.run('print -r -- ${+functions[TRAPINT]} ${+_tmux_run_helper_pid}')).toBe('0 0');
    expect((await pane.capture()).split(said)).toHaveLength(2);
    // Enrolled once the helper answered: ^C of a command changes nothing, and no trap is left.
    expect((await pane.runWithStatus(SOURCE)).status).toBe(0);
    const listing = await waitListed(pane, shellPid);
    await pane.type('sleep 5', { enter: true });
    await sleep(100);
    await server.tmux(['send-keys', '-t', pane.id, 'C-c']);
    await pane.waitForPrompt();
    expect(await pane.run('print -r -- ${+functions[TRAPINT]}')).toBe('0');
    expect(helperChildren(shellPid)).toEqual([listing.helper_pid]);
    await pane.kill();
    await expectNothingLeft();
  });

  it("a person's own INT trap is left alone: ^C during the start runs theirs and the pane is enrolled", async () => {
    const pane = await newPane();
    const shellPid = await pane.shellPid();
    const theirs = join(server.baseDir, 'their-trap-ran');
    await pane.run(`trap 'print -r -- theirs >> ${theirs}' INT`);
    const slow = slowNode();
    expect(await pane.runWithStatus(`TMUX_RUN_NODE=${slow.path} source ${SNIPPET}`)).toEqual({ output: '', status: 0 });
    await server.tmux(['send-keys', '-t', pane.id, 'C-c']);
    await waitUntil(() => existsSync(theirs), 5000, 'their trap to run');
    slow.release();
    const listing = await waitListed(pane, shellPid);
    expect(helperChildren(shellPid)).toEqual([listing.helper_pid]);
    expect(await pane.run('print -r -- ${+functions[TRAPINT]}')).toBe('0');
    await pane.kill();
    await expectNothingLeft();
  });

  it('kill-pane during the start leaves no file and no process', async () => {
    const pane = await newPane();
    const slow = slowNode();
    expect((await pane.runWithStatus(`TMUX_RUN_NODE=${slow.path} source ${SNIPPET}`)).status).toBe(0);
    expect(filesIn(server.registryDir).length).toBeGreaterThan(0);
    expect(helpersIn(server.baseDir)).toHaveLength(1);
    await pane.kill();
    slow.release(); // node then starts and finds its shell gone
    await expectNothingLeft();
  });

  it('kill-pane while node itself starts (no wrapper) leaves no file and no process', async () => {
    for (let i = 0; i < 3; i++) {
      const pane = await newPane();
      await pane.type(`${SOURCE}`, { enter: true });
      await waitUntil(() => helpersIn(server.baseDir).length > 0, 5000, 'the helper to start');
      await pane.kill();
      await expectNothingLeft();
    }
  });

  it('`exec zsh -i` during the start leaves no file and no process; the new shell is not enrolled', async () => {
    const pane = await newPane();
    const slow = slowNode();
    expect((await pane.runWithStatus(`TMUX_RUN_NODE=${slow.path} source ${SNIPPET}`)).status).toBe(0);
    await pane.run('exec zsh -i');
    slow.release();
    await expectNothingLeft();
    expect(await pane.run('print -r -- ${+_tmux_run_helper_pid}')).toBe('0');
    await pane.kill();
  });

  it('tmux_run_unenroll during the start ends it: no file, no process', async () => {
    const pane = await newPane();
    const shellPid = await pane.shellPid();
    const slow = slowNode();
    expect((await pane.runWithStatus(`TMUX_RUN_NODE=${slow.path} source ${SNIPPET}`)).status).toBe(0);
    expect(await pane.runWithStatus('tmux_run_unenroll')).toEqual({
      output: `tmux-run: pane ${pane.id} unenrolled`,
      status: 0,
    });
    await expectNothingLeft();
    expect(helperChildren(shellPid)).toEqual([]);
    slow.release(); // (the wrapper is gone: nothing comes back)
    await sleep(500);
    expect(await listed(server.registryDir)).toEqual([]);
    expect(await pane.run('print -r -- ${+_tmux_run_helper_pid} ${#${(M)precmd_functions:#*tmux_run*}}')).toBe('0 0');
    await pane.kill();
  });

  it('sourced twice in .zshrc during the start: one helper, one enrollment, nothing printed', async () => {
    const slow = slowNode();
    const pane = await newPane({
      env: { TMUX_RUN_NODE: slow.path },
      zshrc: `PROMPT='$ '\nsource ${SNIPPET}\nsource ${SNIPPET}\n`,
    });
    const shellPid = await pane.shellPid();
    // From .zshrc the helper starts once the first prompt is drawn (shell/tmux-run.zsh, _tmux_run_defer).
    await waitUntil(() => helpersIn(server.baseDir).length > 0, 5000, 'the helper to start');
    expect(helpersIn(server.baseDir)).toHaveLength(1);
    slow.release();
    const listing = await waitListed(pane, shellPid);
    expect(await listed(server.registryDir)).toHaveLength(1);
    expect(helperChildren(shellPid)).toEqual([listing.helper_pid]);
    expect((await pane.capture()).trim()).toBe('$');
    await pane.kill();
    await expectNothingLeft();
  });

  it('a helper process that is not the child of the shell (a wrapper that forks) is refused with why', async () => {
    const pane = await newPane();
    const forking = join(server.baseDir, 'forking-node');
    writeFileSync(forking, `#!/bin/sh\n'${process.execPath}' "$@"\n`, { mode: 0o700 });
    expect((await pane.runWithStatus(`TMUX_RUN_NODE=${forking} source ${SNIPPET}`)).status).toBe(0);
    await pane.waitFor((s) => /not enrolled: the helper's parent \(pid \d+\) is not the shell that started it/.test(s));
    await pane.kill();
    for (const f of filesIn(server.registryDir)) expect(f).toMatch(/^ch\.\d+\.\d+\.log$/);
    for (const f of filesIn(server.registryDir)) rmSync(join(server.registryDir, f));
    await expectNothingLeft();
  });
});

// Set-ups that behave as popular ones do where it matters to the snippet (the plugins themselves
// are not installed here): each enrolls from .zshrc, prints nothing during start-up, and runs.
const SETUPS: Record<string, string> = {
  // powerlevel10k's instant prompt: stdout and stderr go to a file during start-up, and any
  // output there is "console output during zsh initialization" (a warning p10k prints).
  'instant prompt (powerlevel10k)': `
exec {__ip_out}>&1 {__ip_err}>&2 >$HOME/instant-prompt.out 2>&1
source ${SNIPPET}
__ip_done() { exec >&$__ip_out 2>&$__ip_err; precmd_functions=(\${precmd_functions:#__ip_done}) }
precmd_functions=(__ip_done $precmd_functions)
PROMPT='$ '`,
  // zsh-vi-mode / oh-my-zsh's vi-mode: vi keymap and line-init and keymap-select widgets that redraw.
  'vi-mode': `
PROMPT='$ '
bindkey -v
zle-line-init() { zle -K viins; }
zle-keymap-select() { zle reset-prompt; }
zle -N zle-line-init; zle -N zle-keymap-select
source ${SNIPPET}`,
  // zsh-autosuggestions: a suggestion in POSTDISPLAY after each change (cleared on accept-line),
  // widgets wrapped, and an asynchronous suggestion fetched through a zle -F handler of its own.
  autosuggestions: `
PROMPT='$ '
__as_fd=
__as_done() { local fd=$1 s; IFS= read -r -u $fd s; zle -F $fd; exec {fd}<&-; [[ -n $BUFFER ]] && POSTDISPLAY=$s; zle -R; }
__as_fetch() { [[ -n $__as_fd ]] && { zle -F $__as_fd; exec {__as_fd}<&- } 2>/dev/null; exec {__as_fd}< <(print -r -- " suggested"); zle -F -w $__as_fd __as_done; }
__as_modify() { zle .self-insert; __as_fetch; }
zle -N self-insert __as_modify; zle -N __as_done
__as_accept() { POSTDISPLAY=; zle .accept-line; }
zle -N accept-line __as_accept
zle-line-pre-redraw() { [[ -z $BUFFER ]] && POSTDISPLAY=; }
zle -N zle-line-pre-redraw
source ${SNIPPET}`,
  // oh-my-zsh with strict options: the framework's options, a precmd/preexec hook stack, and
  // options that break careless code (NO_UNSET, KSH_ARRAYS, WARN_CREATE_GLOBAL, ...).
  'oh-my-zsh-like, strict options': `
PROMPT='$ '
setopt auto_cd auto_pushd prompt_subst interactive_comments hist_ignore_space share_history
setopt no_unset ksh_arrays warn_create_global sh_word_split err_return pipe_fail no_clobber
autoload -Uz add-zsh-hook
__omz_title() { print -n ''; }
add-zsh-hook precmd __omz_title
add-zsh-hook preexec __omz_title
source ${SNIPPET}`,
};

describe('zsh set-ups people have', () => {
  for (const [name, zshrc] of Object.entries(SETUPS)) {
    it(`${name}: enrolls from .zshrc, prints nothing, and runs`, async () => {
      // What the set-up itself draws, without the snippet.
      const bare = await newPane({ zshrc: zshrc.replace(`source ${SNIPPET}`, '') + '\n' });
      await sleep(300);
      const drawn = await bare.capture();
      await bare.kill();
      const mcp = await scope.startMcp();
      const pane = await newPane({ zshrc: zshrc + '\n' });
      const shellPid = await pane.shellPid();
      const listing = await waitListed(pane, shellPid);
      expect(await pane.capture()).toBe(drawn);
      if (name.startsWith('instant prompt')) expect(await pane.run('cat $HOME/instant-prompt.out')).toBe('');
      const r = await callRun(mcp.client, listing, 'echo ran; pwd');
      expect(r.isError, JSON.stringify(r.structured)).toBe(false);
      expect(r.structured.data.stdout.data).toBe(`ran\n${server.home}\n`);
      // The person's next command runs. Read from a file, not the screen: the stand-in
      // autosuggestions redraws from a zle -F handler while keys arrive, and zsh 5.9 then drops a
      // character of the echoed line now and then with or without the snippet (7 lines of 300
      // typed into the bare set-up), so the screen's echo cannot be cut out reliably.
      const typed = join(server.home, `typed-${shellPid}`);
      await pane.type(`echo typed > ${typed}`, { enter: true });
      await waitUntil(
        () => existsSync(typed) && readFileSync(typed, 'utf8') === 'typed\n',
        10_000,
        'the typed command',
      );
      expect(processAlive(listing.helper_pid)).toBe(true);
      await pane.kill();
      await expectNothingLeft();
      await mcp.close();
    });
  }
});
