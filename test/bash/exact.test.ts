// The exact line check in a bash pane: the builtin _tmux_run_line (helper/shell/bash/bash-line.c),
// loaded by the snippet, reads readline's own state from the WINCH trap. A typed line, one moved
// over with ^A, a reverse search, a pending prefix key (ESC) and a continuation line are each
// refused with nothing run and the line kept; an empty line runs 30 times in a row; notices keep
// the half-typed line and leave one line per run; ask mode asks in the pane.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callRun } from '../../lab/mcp.js';
import { QUESTION, press, questionShown } from '../ask/support.js';
import { waitUntil } from '../../lab/waiting.js';
import { BASH_SNIPPET, bashFixture, bashPane, ok, refusal, type BashFixture } from './support.js';
import { waitListed } from '../../lab/enrollment.js';
import { checkRunResult } from '../mcp/support.js';
import { NOTICE_WAIT_MS } from '../../helper/shell/signal/notice-wait.js';

let fx: BashFixture;
let n = 0;
const marker = (): string => join(fx.server.home, `exact-marker-${++n}`);
const lastLine = (screen: string): string | undefined => screen.split('\n').at(-1);
const keys = (...k: string[]): Promise<string> => fx.server.tmux(['send-keys', '-t', fx.pane.id, ...k]);

beforeAll(async () => {
  fx = await bashFixture();
});
afterAll(async () => {
  expect(await fx.scope.close()).toEqual([]);
});

/** Refused editor_not_empty by the exact check (message matching `why`), observed, nothing run. */
async function refused(why: RegExp): Promise<void> {
  const m = marker();
  const e = refusal(await fx.run(`touch ${m}`));
  expect(e.code).toBe('editor_not_empty');
  expect(e.delivery).toBe('observed');
  expect(e.effects.state).toBe('none');
  expect(e.message).toMatch(why);
  expect(e.message).not.toMatch(/screen check/);
  expect(existsSync(m)).toBe(false);
}

describe('the exact check in a bash pane (the builtin)', () => {
  it('is listed exact, with no reason', () => {
    expect(fx.listing.shell).toBe('bash');
    expect(fx.listing.editor_check).toBe('exact');
    expect(fx.listing.editor_check_reason).toBeNull();
  });

  it('runs at the idle empty prompt, 30 times in a row, nothing on the screen or in history', async () => {
    await fx.pane.run('history -c; TMUX_RUN_NOTIFY=off');
    const screen = await fx.pane.capture();
    for (let i = 0; i < 30; i++) expect(ok(await fx.run(`echo run-${i}`)).stdout.data).toBe(`run-${i}\n`);
    expect(await fx.pane.capture()).toBe(screen);
    expect(await fx.pane.run('history')).not.toMatch(/_tmux_run|run-\d/);
    await fx.pane.run('unset TMUX_RUN_NOTIFY');
  });

  it('refuses a typed line, keeps it, and the person finishes it', async () => {
    await fx.pane.type('echo half');
    await fx.pane.waitFor((s) => lastLine(s) === '$ echo half');
    await refused(/text in the shell's line editor/);
    expect(lastLine(await fx.pane.capture())).toBe('$ echo half');
    await fx.pane.type('-done', { enter: true });
    await fx.pane.waitFor((s) => /^half-done$/m.test(s));
    await fx.pane.waitForPrompt();
    // The prompt is drawn a moment before readline reads keys; a run asked for in that moment is
    // refused (context:not_reading, nothing run), as any line the check cannot call empty: ask again.
    let r = await fx.run('true');
    for (let i = 0; i < 20 && /context:not_reading/.test(String(r.error?.message)); i++) {
      await new Promise((res) => setTimeout(res, 100));
      r = await fx.run('true');
    }
    ok(r);
  });

  it('refuses a line typed and then moved over with ^A', async () => {
    await fx.pane.type('echo after');
    await fx.pane.waitFor((s) => lastLine(s) === '$ echo after');
    await keys('C-a');
    await waitUntil(
      async () => (await fx.server.tmux(['display-message', '-p', '-t', fx.pane.id, '#{cursor_x}'])).trim() === '2',
    );
    await refused(/text in the shell's line editor/);
    await keys('C-e');
    await fx.pane.type('-wards', { enter: true });
    await fx.pane.waitFor((s) => /^after-wards$/m.test(s));
    await fx.pane.waitForPrompt();
  });

  it('refuses during a reverse search (^R) on an empty line', async () => {
    await keys('C-r');
    await fx.pane.waitFor((s) => /reverse-i-search/.test(lastLine(s) ?? ''));
    await refused(/history_search/);
    await keys('C-g');
    await fx.pane.waitForPrompt();
    ok(await fx.run('true'));
  });

  it('refuses while a prefix key (ESC) waits for the rest of its sequence', async () => {
    await keys('Escape');
    await new Promise((r) => setTimeout(r, 100));
    await refused(/key_sequence/);
    await keys('C-g');
    await fx.pane.waitForPrompt();
    ok(await fx.run('true'));
  });

  it('refuses a continuation line, and the command still completes as typed', async () => {
    await fx.pane.type('echo "one', { enter: true });
    await fx.pane.waitFor((s) => lastLine(s) === '>');
    await refused(/continuation/);
    await fx.pane.type('two"', { enter: true });
    await fx.pane.waitFor((s) => /^one\ntwo$/m.test(s));
    await fx.pane.waitForPrompt();
    ok(await fx.run('true'));
  });

  it('draws notices above the prompt: the half-typed line is intact, one line per run is left', async () => {
    // A fresh screen (readline's clear-screen) and no scrollback, to count what is left, once the
    // last test's last notice is drawn (a run's notice waits NOTICE_WAIT_MS).
    await new Promise((r) => setTimeout(r, 4 * NOTICE_WAIT_MS));
    await keys('C-l');
    await fx.server.tmux(['clear-history', '-t', fx.pane.id]);
    await fx.pane.waitFor((s) => s === '$');
    await fx.pane.type('echo typed');
    await fx.pane.waitFor((s) => lastLine(s) === '$ echo typed');
    // Refused runs draw nothing; runs at an empty line draw their notices.
    refusal(await fx.run('true'));
    await keys('C-u');
    // (readline takes the key when it reads it: the line is empty once the screen says so.)
    await fx.pane.waitFor((s) => lastLine(s) === '$');
    for (let i = 0; i < 3; i++) ok(await fx.run('true'));
    await fx.pane.type('echo still');
    // (A run's notice is drawn NOTICE_WAIT_MS after it is due: the last run's end in its start's place.)
    const screen = await fx.pane.waitFor((s) => lastLine(s) === '$ echo still' && s.includes('tmux-run: '));
    const notices = screen.split('\n').filter((l) => l.startsWith('tmux-run: '));
    // At most one line per run is left (here: one, the last run's end, at this same prompt).
    expect(notices.length).toBeGreaterThanOrEqual(1);
    expect(notices.length).toBeLessThanOrEqual(3);
    expect(screen.split('\n').filter((l) => l.startsWith('$')).length).toBe(1);
    expect(Number(await fx.server.tmux(['display-message', '-p', '-t', fx.pane.id, '#{history_size}']))).toBe(0);
    await fx.pane.type(' here', { enter: true });
    await fx.pane.waitFor((s) => /^still here$/m.test(s));
    await fx.pane.waitForPrompt();
  });

  it('a two-line prompt: a notice redraws both lines once, nothing left behind, nothing in the scrollback', async () => {
    const ps1 = '\\[\\e[34m\\]~/two\\[\\e[0m\\] on main\\n$ ';
    const pane = await bashPane(fx.server, { rc: `unset TMUX_RUN_NOTIFY\nPS1='${ps1}'\nsource ${BASH_SNIPPET}` });
    const listing = await waitListed(pane, await pane.shellPid());
    const run = async (script: string) => checkRunResult((await callRun(fx.mcp.client, listing, script)).result);
    await fx.server.tmux(['send-keys', '-t', pane.id, 'C-l']);
    await pane.waitFor((s) => s.endsWith('~/two on main\n$'));
    await fx.server.tmux(['clear-history', '-t', pane.id]);
    await pane.type('echo typed');
    await pane.waitFor((s) => s.endsWith('\n$ echo typed'));
    refusal(await run('true'));
    await fx.server.tmux(['send-keys', '-t', pane.id, 'C-u']);
    for (let i = 0; i < 3; i++) ok(await run('true'));
    await pane.type('echo still');
    const screen = await pane.waitFor((s) => s.endsWith('\n$ echo still'));
    expect(screen).toMatch(/^tmux-run: run [0-9a-f]{8} .*exited 0 .*\n~\/two on main\n\$ echo still$/);
    expect(Number(await fx.server.tmux(['display-message', '-p', '-t', pane.id, '#{history_size}']))).toBe(0);
    await pane.kill();
  });

  it('asks in ask mode: y runs it, n refuses it (denied), the line comes back', async () => {
    await fx.pane.run('TMUX_RUN_APPROVE=ask TMUX_RUN_NOTIFY=off');
    const yes = marker();
    const call = callRun(fx.mcp.client, fx.listing, `touch ${yes}`);
    const asked = await questionShown(fx.pane);
    expect(asked).toMatch(/asks to run a script in this shell/);
    expect(asked).toContain(`| touch ${yes}`);
    await press(fx.pane, 'y');
    expect((await call).isError).toBe(false);
    expect(existsSync(yes)).toBe(true);
    await fx.pane.waitFor((s) => !s.includes(QUESTION));
    const no = marker();
    const call2 = callRun(fx.mcp.client, fx.listing, `touch ${no}`);
    await questionShown(fx.pane);
    await press(fx.pane, 'n');
    const r = await call2;
    expect(r.isError).toBe(true);
    expect((r.structured.error as Record<string, any>).code).toBe('denied');
    expect(existsSync(no)).toBe(false);
    await fx.pane.waitFor((s) => !s.includes(QUESTION));
    await fx.pane.waitForPrompt();
    expect(lastLine(await fx.pane.capture())).toBe('$');
    await fx.pane.run('unset TMUX_RUN_APPROVE TMUX_RUN_NOTIFY');
    ok(await fx.run('true'));
  });

  it('^C while the question is up refuses the run (denied); the prompt and its empty line come back, the shell goes on', async () => {
    await fx.pane.run('TMUX_RUN_APPROVE=ask TMUX_RUN_NOTIFY=off');
    const before = await fx.pane.capture();
    const m = marker();
    const call = callRun(fx.mcp.client, fx.listing, `touch ${m}`);
    await questionShown(fx.pane);
    await keys('C-c');
    const r = await call;
    expect(r.isError).toBe(true);
    expect((r.structured.error as Record<string, any>).code).toBe('denied');
    expect(existsSync(m)).toBe(false);
    await fx.pane.waitFor((s) => !s.includes(QUESTION));
    expect(await fx.pane.capture()).toBe(before);
    expect(await fx.pane.run('echo after-interrupt')).toBe('after-interrupt');
    await fx.pane.run('unset TMUX_RUN_APPROVE TMUX_RUN_NOTIFY');
    ok(await fx.run('true'));
  });
});
