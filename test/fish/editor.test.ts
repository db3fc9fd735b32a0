// The person's line in a fish pane: a half-typed line, a continuation line, a busy shell, the
// completion pager: refused with nothing run, the line still there to finish; a resize (a real
// SIGWINCH) disturbs neither the line nor the next run; the set-ups people run (vi key bindings,
// a right prompt, their own SIGWINCH handler) keep working and the check still holds; a run's
// wake (SIGURG) reaches neither the person's WINCH handler nor fish's own, which repaints the
// prompt in a full start-up.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../mcp/support.js';
import { waitUntil } from '../../lab/waiting.js';
import type { PaneListing } from '../../src/broker/registry.js';
import { waitListed } from '../../lab/enrollment.js';
import type { Pane } from '../../lab/pane.js';
import { enrollFish, fishFixture, fishPane, FISH_SOURCE, screenOf, type FishFixture } from './support.js';

/** A right prompt (once show_right is set) and a SIGWINCH handler of the person's that counts. */
const PERSON = `function fish_right_prompt; set -q show_right; and echo RIGHT; end
set -g winches 0
function my_winch --on-signal SIGWINCH; set -g winches (math $winches + 1); end
`;

let fx: FishFixture;
beforeAll(async () => {
  fx = await fishFixture({ config: PERSON });
});
afterAll(async () => {
  await fx?.close();
});

/** A run that would leave `marker` behind; expects `code`, with nothing run. */
async function refused(code: string): Promise<void> {
  const marker = join(fx.server.home, `m-${Math.random().toString(16).slice(2)}`);
  const s = await fx.run(`touch ${marker}`);
  expect(s.ok, JSON.stringify(s)).toBe(false);
  expect(s.error).toMatchObject({ code, delivery: 'observed', effects: { state: 'none' } });
  expect(existsSync(marker)).toBe(false);
}

const key = (k: string) => fx.server.tmux(['send-keys', '-t', fx.pane.id, k]);

/** Types the rest of a half-typed line and Enter, then waits for `output` below the whole line. */
async function finish(rest: string, line: string, output: string): Promise<void> {
  await fx.pane.type(rest, { enter: true });
  await fx.pane.waitFor((s) => s.includes(`${line}\n${output}\n`));
  await fx.pane.waitForPrompt();
}

describe('the line in a fish pane', () => {
  it('lists the pane with shell fish and editor_check screen', () => {
    expect(fx.listing).toMatchObject({ shell: 'fish', editor_check: 'screen', state: 'idle' });
  });

  it('refuses a half-typed line editor_not_empty, and the line is still there to finish', async () => {
    await fx.pane.type('echo half');
    await fx.pane.waitFor((s) => s.includes('$ echo half'));
    await refused('editor_not_empty');
    // The cursor moved back to the start: text after the cursor still counts.
    await key('C-a');
    await refused('editor_not_empty');
    await key('C-e');
    await finish(' typed', '$ echo half typed', 'half typed');
    expect(ok(await fx.run('echo after')).stdout.data).toBe('after\n');
  });

  it('refuses a continuation line editor_not_empty, and the command still completes', async () => {
    await fx.pane.type('begin', { enter: true });
    await fx.pane.type('echo inside');
    await fx.pane.waitFor((s) => /echo inside\s*$/.test(s));
    await refused('editor_not_empty');
    await key('Enter');
    await finish('end', '  end', 'inside');
  });

  it('refuses a busy shell shell_busy, and the completion pager editor_not_empty', async () => {
    await fx.pane.type('sleep 3', { enter: true });
    await waitUntil(async () => (await screenOf(fx.pane)).endsWith('\n$ sleep 3'), 5000, 'sleep to start');
    await refused('shell_busy');
    await fx.pane.waitForPrompt(10_000);
    await fx.pane.type('ls /');
    await key('Tab');
    await key('Tab');
    await refused('editor_not_empty');
    await key('C-c');
    await fx.pane.waitForPrompt();
    // fish tells a handler the editor's state as of the keys before the last one, so the pager
    // still counts until the next key; the check fails closed (refused, never run) till then.
    await key('Enter');
    await fx.pane.waitForPrompt();
    expect(ok(await fx.run('echo free')).stdout.data).toBe('free\n');
  });

  it('a resize disturbs neither a half-typed line nor the next run; the person handler fires for resizes only', async () => {
    const before = Number(await fx.pane.run('echo $winches'));
    await fx.pane.type('echo keep');
    await fx.server.tmux(['resize-window', '-t', fx.pane.id, '-x', '150', '-y', '40']);
    await refused('editor_not_empty');
    await fx.server.tmux(['resize-window', '-t', fx.pane.id, '-x', '200', '-y', '50']);
    await finish(' this', '$ echo keep this', 'keep this');
    expect(ok(await fx.run('echo run')).stdout.data).toBe('run\n');
    // The two resizes reached the person's own handler; the runs' wakes (SIGURG) do not.
    // (tmux may resize the pane's terminal a moment after resize-window: the count settles first.)
    let resized = Number(await fx.pane.run('echo $winches'));
    for (let last = -1; last !== resized;) {
      last = resized;
      await new Promise((r) => setTimeout(r, 500));
      resized = Number(await fx.pane.run('echo $winches'));
    }
    expect(resized).toBeGreaterThanOrEqual(before + 1);
    for (let i = 0; i < 5; i++) expect(ok(await fx.run('true')).completion).toMatchObject({ exit_status: 0 });
    expect(Number(await fx.pane.run('echo $winches'))).toBe(resized);
  });

  it("a run does not make a full fish start-up repaint its prompt (fish's own WINCH handler), and still refuses a typed line", async () => {
    // fish's __fish_winch_handler (its interactive start-up, under tmux) repaints the prompt at
    // every SIGWINCH; woken by SIGWINCH, every run rendered the prompt again (a slow prompt each time).
    const config = "set -g prompts 0\nfunction fish_prompt; set -g prompts (math $prompts + 1); printf 'F> '; end\n";
    const pane = await fishPane(fx.server, { full: true, prompt: 'F> ', config, env: { TMUX_RUN_NOTIFY: 'off' } });
    const listing = await enrollFish(pane);
    const count = async () => Number(await pane.run('echo $prompts'));
    // (A first run: the enrollment's prompt probe is over.)
    expect(ok(await fx.run('true', listing)).completion).toMatchObject({ exit_status: 0 });
    // What typing the count costs (the prompt drawn after it), then the same around ten runs: one
    // rendering more (the first run's answer renders the prompt once, kept for the others), two
    // should a screen read under load ask for it fresh; woken by SIGWINCH, one more per run.
    const first = await count();
    const typed = (await count()) - first;
    const before = await count();
    for (let i = 0; i < 10; i++) expect(ok(await fx.run('true', listing)).completion).toMatchObject({ exit_status: 0 });
    expect((await count()) - before).toBeLessThanOrEqual(typed + 2);
    await pane.type('echo typed');
    await pane.waitFor((s) => s.includes('F> echo typed'));
    const marker = join(fx.server.home, 'full-marker');
    const s = await fx.run(`touch ${marker}`, listing);
    expect(s.error).toMatchObject({ code: 'editor_not_empty', effects: { state: 'none' } });
    expect(existsSync(marker)).toBe(false);
    await pane.kill();
  });

  it('holds with vi key bindings (the mode indicator) and a right prompt, in a full fish start-up', async () => {
    const pane = await fishPane(fx.server, { full: true, prompt: '[I] $ ', config: `${PERSON}fish_vi_key_bindings\n` });
    await pane.type('set -g show_right 1', { enter: true });
    const listing = await enrollVi(pane);
    const keys = (k: string) => fx.server.tmux(['send-keys', '-t', pane.id, k]);
    const last = async () => (await screenOf(pane)).split('\n').at(-1) ?? '';
    const shows = (re: RegExp) => waitUntil(async () => re.test(await last()), 10_000, `the line to match ${re}`);
    await shows(/^\[I\] \$ +RIGHT$/);
    expect(ok(await fx.run('echo vi', listing)).stdout.data).toBe('vi\n');
    await pane.type('echo v');
    await shows(/^\[I\] \$ echo v +RIGHT$/);
    const marker = join(fx.server.home, 'vi-marker');
    const refusedHere = async () => {
      const s = await fx.run(`touch ${marker}`, listing);
      expect(s.error).toMatchObject({ code: 'editor_not_empty', effects: { state: 'none' } });
    };
    await refusedHere();
    // Normal mode: the indicator changes, the line is kept.
    await keys('Escape');
    await shows(/^\[N\] \$ echo v +RIGHT$/);
    await refusedHere();
    await keys('A');
    await shows(/^\[I\] \$ echo v +RIGHT$/);
    await pane.type('i > $HOME/vi.out', { enter: true });
    await waitUntil(() => existsSync(join(fx.server.home, 'vi.out')), 5000, 'the finished line to run');
    await shows(/^\[I\] \$ +RIGHT$/);
    expect(ok(await fx.run('cat $HOME/vi.out', listing)).stdout.data).toBe('vi\n');
    expect(existsSync(marker)).toBe(false);
  });
});

describe('prompts of several lines', () => {
  it('checks a two-line prompt that shows the last status (rendered with the status the person saw)', async () => {
    const config = `function fish_prompt; set -l s $status; echo top; printf '[%s] $ ' $s; end\n`;
    const pane = await fishPane(fx.server, { config, prompt: '[0] $ ' });
    const listing = await enrollFish(pane);
    await pane.type('false', { enter: true });
    await waitUntil(async () => (await screenOf(pane)).endsWith('false\ntop\n[1] $'), 10_000, 'the prompt after false');
    expect(ok(await fx.run('echo two', listing)).stdout.data).toBe('two\n');
    await pane.type('x');
    const marker = join(fx.server.home, 'two-marker');
    const s = await fx.run(`touch ${marker}`, listing);
    expect(s.error).toMatchObject({ code: 'editor_not_empty', effects: { state: 'none' } });
    expect(existsSync(marker)).toBe(false);
    await pane.kill();
  });
});

/** Enrolls a pane whose prompt is not the harness's: typed, then waited for in the listing. */
async function enrollVi(pane: Pane): Promise<PaneListing> {
  await waitUntil(async () => /\$ +RIGHT$/.test(await screenOf(pane)), 10_000, 'the first prompt');
  await pane.type(FISH_SOURCE, { enter: true });
  return waitListed(pane, await pane.shellPid());
}
