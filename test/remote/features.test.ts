// What a local pane offers, shown for zsh at the far end of one `tmux-run ssh` session (kept for the
// whole file; the cases do not interfere): a terminal run (a Python REPL) driven through
// tmux_run_input and tmux_run_screen, `tmux-run attach` from a local window, long, queued, cancelled
// and background runs with live output, tmux_runs and `tmux-run runs` / `stop`, `watch`, notices and
// ask mode drawn by the remote shell in the pane, and the far host's sandbox.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { useServer } from '../../lab/lifecycle.js';
import { callRun, type McpHandle } from '../../lab/mcp.js';
import { waitUntil } from '../../lab/waiting.js';
import { ok } from '../mcp/support.js';
import { cancel, finalOf, readAll, readOutput, runIdOf, start } from '../long/support.js';
import { press, QUESTION } from '../ask/support.js';
import { sshdAvailable, userCmdlines } from './sshd.js';
import { notice } from '../../lab/notices.js';
import { itShowsTheSharedCases, remoteListings, typeAtFar, useRemote, type Far } from './support.js';
import type { Pane } from '../../lab/pane.js';
import type { PaneListing } from '../../src/broker/registry.js';

const skip = sshdAvailable();
const USER = 'trr-zsh-features';
const PROMPT = 'far> ';

describe.skipIf(skip !== undefined)('a pane on another host: the features of a local pane, through ssh', () => {
  const scope = useServer();
  const remote = useRemote(scope, USER, '/usr/bin/zsh', { file: '.zshrc', text: `PROMPT='${PROMPT}'\n` });
  let mcp: McpHandle;
  let pane: Pane;
  let person: Pane;
  let listing: PaneListing;

  /** The person types `cmd` at the far prompt; done when it has run and the prompt is back. */
  const typed = (cmd: string): Promise<void> => typeAtFar(pane, PROMPT, cmd);
  /** The suite as the shared cases use it. */
  const far = (): Far => ({
    mcp,
    scope,
    listing,
    user: remote.user,
    pane,
    person,
    start: (script, extra) => start(mcp.client, listing, script, extra),
    run: (script) => callRun(mcp.client, listing, script),
  });

  beforeAll(async () => {
    await remote.cli(['setup', '--remote', '-F', remote.sshd.clientConfig, USER]);
    mcp = await scope.startMcp();
    pane = await scope.server.newPane();
    await pane.type(remote.sshLine(), { enter: true });
    await pane.waitFor((s) => s.split('\n').some((l) => l === PROMPT.trimEnd()));
    listing = await waitUntil(
      async () => (await remoteListings(mcp)).find((p) => p.pane_id === pane.id),
      15_000,
      'the far end listed',
    );
    person = await scope.server.newPane(); // a local window of the person's
  });
  afterAll(async () => {
    await pane?.type('exit', { enter: true });
  });

  itShowsTheSharedCases(far);

  it('a long run: pending after wait_ms with a tail, its output read live, then tmux_run_wait has the result', async () => {
    const s = await start(mcp.client, listing, 'echo first; echo warn >&2; sleep 2; echo second; exit 4', {
      wait_ms: 1000,
    });
    const id = runIdOf(s);
    expect(s.pending).toMatchObject({ state: 'running' });
    expect(s.pending.stdout_tail).toEqual({ from: 0, encoding: 'utf-8', data: 'first\n' });
    expect(s.pending.stderr_tail).toEqual({ from: 0, encoding: 'utf-8', data: 'warn\n' });
    const early = await readOutput(mcp.client, listing, { run_id: id, stream: 'stdout' });
    expect(early.data).toMatchObject({ from: 0, finished: false });
    expect(early.data.data).toBe('first\n');
    const final = await finalOf(mcp.client, listing, id);
    expect(final.data.completion).toEqual({ state: 'exited', exit_status: 4, signal: null });
    expect(final.data.stdout.data).toBe('first\nsecond\n');
    expect(final.data.stderr.data).toBe('warn\n');
    expect((await readAll(mcp.client, listing, id, 'stdout')).bytes.toString()).toBe('first\nsecond\n');
  });

  it('tmux_run_cancel stops a far run: its process group is gone from the host', async () => {
    const marker = `sleep 302.${process.pid}`;
    const id = runIdOf(await start(mcp.client, listing, marker, { wait_ms: 0 }));
    await waitUntil(() => userCmdlines(remote.user.uid).some((c) => c.includes(marker)), 10_000, 'it runs there');
    const r = await cancel(mcp.client, listing, id, 10_000);
    expect(r.error).toMatchObject({ code: 'cancelled', delivery: 'observed' });
    expect(r.error.effects).toMatchObject({ state: 'known', completion: { state: 'signaled', signal: 15 } });
    expect(userCmdlines(remote.user.uid).some((c) => c.includes(marker))).toBe(false);
    // The queue is free again.
    expect(ok((await callRun(mcp.client, listing, 'echo after')).structured).stdout.data).toBe('after\n');
  });

  it("notices: the far shell draws a run's start and end in the pane", async () => {
    const id = runIdOf(await start(mcp.client, listing, 'sleep 1; exit 5', { wait_ms: 0 }));
    const id8 = id.slice(0, 8);
    await pane.waitFor((s) => s.includes(notice.started(id8)));
    const final = await finalOf(mcp.client, listing, id);
    expect(final.data.completion).toEqual({ state: 'exited', exit_status: 5, signal: null });
    await pane.waitFor((s) => notice.exited(id8, 5).test(s));
  });

  it('ask mode at the far end: the remote shell asks in the pane, the key typed here answers', async () => {
    await typed('TMUX_RUN_APPROVE=ask');
    try {
      const marker = join(remote.user.home, `asked-${process.pid}`);
      const call = callRun(mcp.client, listing, `touch ${marker}; echo approved`);
      const q = await pane.waitFor((s) => s.includes(QUESTION));
      expect(q).toContain('an agent (tmux-run-tests 1.0.0) asks to run a script in this shell (TMUX_RUN_APPROVE=ask)');
      expect(existsSync(marker)).toBe(false);
      expect((await remoteListings(mcp)).find((p) => p.pane_id === pane.id)).toMatchObject({
        state: 'awaiting_approval',
        mode: 'ask',
      });
      await press(pane, 'y');
      const d = ok((await call).structured);
      expect(d.stdout.data).toBe('approved\n');
      expect(existsSync(marker)).toBe(true);
      // A no: nothing run.
      const denied = callRun(mcp.client, listing, `touch ${marker}-no`);
      await pane.waitFor((s) => s.includes(QUESTION));
      await press(pane, 'n');
      const r = await denied;
      expect(r.structured.error).toMatchObject({ code: 'denied', delivery: 'observed' });
      expect(existsSync(`${marker}-no`)).toBe(false);
    } finally {
      await typed('unset TMUX_RUN_APPROVE');
    }
  });

  it("the far host's sandbox: read-only refuses a write outside its private /tmp, hides ~/.ssh and the forward directory", async () => {
    // The forward directory holds this session's socket, which leads to the relay here: hidden too.
    const forward = join(remote.user.home, '.local/share/tmux-run/f');
    expect(ok((await callRun(mcp.client, listing, `ls -A ${forward} | wc -l`)).structured).stdout.data).not.toBe('0\n');
    await typed('TMUX_RUN_SANDBOX=read-only');
    try {
      expect((await remoteListings(mcp)).find((p) => p.pane_id === pane.id)).toMatchObject({ sandbox: 'read-only' });
      const marker = join(remote.user.home, `walled-${process.pid}`);
      const d = ok(
        (
          await callRun(
            mcp.client,
            listing,
            `touch ${marker} 2>/dev/null; echo "home=$?"; echo x > /tmp/w && cat /tmp/w; ls -A ~/.ssh | wc -l; ls -A ${forward} | wc -l`,
          )
        ).structured,
      );
      expect(d.stdout.data).toBe('home=1\nx\n0\n0\n');
      expect(existsSync(marker)).toBe(false);
      expect(existsSync(join(remote.user.home, '.ssh/authorized_keys'))).toBe(true);
      // A terminal run goes into the walls too (the far end built the C waiter).
      const t = runIdOf(
        await start(mcp.client, listing, `touch ${marker} 2>/dev/null; echo "term=$?"; tty`, { input: 'terminal' }),
      );
      const final = await finalOf(mcp.client, listing, t);
      expect(final.data.stdout.data).toMatch(/^term=1\r\n\/dev\/pts\/\d+\r\n$/);
      expect(existsSync(marker)).toBe(false);
    } finally {
      await typed('unset TMUX_RUN_SANDBOX');
    }
    // Unwalled again.
    const marker = join(remote.user.home, `free-${process.pid}`);
    ok((await callRun(mcp.client, listing, `touch ${marker}`)).structured);
    expect(existsSync(marker)).toBe(true);
  });
});
