// input terminal on the real stack (tmux, zsh, the SDK's Client): a run with a pseudo-terminal of
// its own, never the pane's; its screen read through tmux_run_screen as a terminal emulator
// renders it: a Python REPL, a full-screen program, a password prompt with echo off.
import { beforeAll, describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { finalOf, runIdOf, start } from '../long/support.js';
import { answeredAtPrompt, expectPasswordPrompt, input, screen, screenUntil } from './support.js';

describe('input terminal', () => {
  const scope = useServer();
  let listing: PaneListing;
  let pane: Pane;
  let mcp: McpHandle;

  beforeAll(async () => {
    ({ pane, listing } = await enrolledPane(scope.server, { env: { TMUX_RUN_NOTIFY: 'on' } }));
    mcp = await scope.startMcp();
  });

  it("runs on a terminal of its own: its own pts, the asked size, all three descriptors, TERM the emulator's", async () => {
    const paneTty = (await pane.run('tty')).trim();
    const script =
      'tty; stty size; for f in 0 1 2; do [ -t $f ] && echo "fd$f tty"; done; echo "TERM=$TERM"; echo err >&2; ps -o sid= -o pgid= -p $$; echo "pid $$"';
    const s = await start(mcp.client, listing, script, { input: 'terminal', terminal_size: { cols: 100, rows: 30 } });
    const final = await finalOf(mcp.client, listing, runIdOf(s));
    const out: string = final.data.stdout.data;
    const lines = out.split('\r\n');
    expect(lines[0]).toMatch(/^\/dev\/pts\/\d+$/);
    expect(lines[0]).not.toBe(paneTty);
    expect(lines[1]).toBe('30 100');
    expect(lines.slice(2, 5)).toEqual(['fd0 tty', 'fd1 tty', 'fd2 tty']);
    expect(lines[5]).toBe('TERM=xterm-256color');
    // stderr goes to the terminal too: stdout carries everything, stderr stays empty.
    expect(lines[6]).toBe('err');
    expect(final.data.stderr).toMatchObject({ data: '', bytes: 0 });
    // The session leader of its terminal: its sid and pgid are its own pid.
    const pid = /pid (\d+)/.exec(out)?.[1];
    expect(lines[7]?.trim().split(/\s+/)).toEqual([pid, pid]);
    expect(final.data.completion).toMatchObject({ state: 'exited', exit_status: 0 });
  });

  it('keeps the terminal up until the run has exited: one that closes it first is not hung up (SIGHUP)', async () => {
    // The end of output (EIO) comes when the run closes its terminal; closing the master then would
    // SIGHUP the session while its leader still runs (cat closes its descriptors at ^D, then exits).
    const script = 'echo bye; exec 0<&- 1>&- 2>&-; sleep 0.5; exit 7';
    const final = await finalOf(
      mcp.client,
      listing,
      runIdOf(await start(mcp.client, listing, script, { input: 'terminal' })),
    );
    expect(final.data.stdout.data).toBe('bye\r\n');
    expect(final.data.completion).toMatchObject({ state: 'exited', exit_status: 7 });
  });

  it('drives a Python REPL through input and reads it through the screen; exit() ends it with 0', async () => {
    const s = await start(mcp.client, listing, 'exec python3 -q', { input: 'terminal' });
    const id = runIdOf(s);
    expect(s.pending).toMatchObject({ input: 'terminal', attached: false, echo: true });
    await screenUntil(mcp.client, listing, id, (d) => d.lines.some((l: string) => l === '>>>'), 'the REPL prompt');
    await input(mcp.client, listing, id, 'print(6*7)\r');
    const d = await screenUntil(
      mcp.client,
      listing,
      id,
      (d) => answeredAtPrompt(d.lines, '42'),
      '42, then the REPL prompt, on the screen',
    );
    const at = d.lines.indexOf('42');
    expect(d.lines[at - 1]).toBe('>>> print(6*7)');
    expect(d.lines[at + 1]).toBe('>>>');
    expect(d).toMatchObject({ cols: 80, rows: 24, alternate: false, echo: true, attached: false, finished: false });
    expect(d.cursor).toEqual({ x: 4, y: at + 1, visible: true });
    await input(mcp.client, listing, id, 'exit()\r');
    const final = await finalOf(mcp.client, listing, id);
    expect(final.data.completion).toMatchObject({ state: 'exited', exit_status: 0 });
    // The screen stays readable while the run is held.
    const after = await screen(mcp.client, listing, id);
    expect(after.data).toMatchObject({ finished: true });
    expect(after.data.lines).toContain('42');
  });

  it('sees a full-screen program as the alternate screen, and the normal screen back after it', async () => {
    const script = `printf 'before\\n'; printf '\\033]0;my title\\007\\033[?1049h\\033[2J\\033[H\\033[?25lFULL SCREEN'; read x; printf '\\033[?25h\\033[?1049l'; echo after; read y`;
    const id = runIdOf(await start(mcp.client, listing, script, { input: 'terminal' }));
    const full = await screenUntil(mcp.client, listing, id, (d) => d.alternate === true, 'the alternate screen');
    expect(full.lines[0]).toBe('FULL SCREEN');
    expect(full.title).toBe('my title');
    expect(full.cursor.visible).toBe(false);
    await input(mcp.client, listing, id, '\r');
    const back = await screenUntil(mcp.client, listing, id, (d) => d.lines.includes('after'), 'the normal screen');
    expect(back.alternate).toBe(false);
    expect(back.lines[0]).toBe('before');
    expect(back.cursor.visible).toBe(true);
    await input(mcp.client, listing, id, '\r');
    await finalOf(mcp.client, listing, id);
  });

  it('a password prompt shows echo: false, the pane names tmux-run attach, and the input is not echoed', () =>
    expectPasswordPrompt(mcp.client, listing, pane));
});
