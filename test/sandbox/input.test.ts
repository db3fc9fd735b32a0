// Input runs in a sandboxed pane on the real stack (tmux, real zsh and bash panes, bwrap, the
// SDK's Client): a pipe run gets the agent's input in the walls; a terminal run gets a terminal of
// its own made inside the walls (never the pane's), walled exactly as any run; what it pushes into
// its own terminal (TIOCSTI) reaches neither the pane nor the helper; a Python REPL; cancel leaves
// nothing running; the perl waiter refuses a terminal run, saying why, never running it unwalled.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { enrolledBash } from '../bash/support.js';
import { cancel, finalOf, runIdOf, start } from '../long/support.js';
import { input, running, screenUntil } from '../input/support.js';
import { uniqueToken } from '../../lab/markers.js';
import { waitUntil } from '../../lab/waiting.js';
import { sleepsOf, uniqueSleep, useSandboxFixture } from './support.js';

describe('input runs in a sandboxed pane', () => {
  const fixture = useSandboxFixture();

  it('a pipe run echoes lines back in order and ends at eof, walled (nothing written outside its tree)', async () => {
    const fx = fixture();
    const project = fx.project();
    await fx.sandbox('workspace', project);
    const outside = join(fx.server.home, `outside-${uniqueToken()}`);
    const script = `touch ${outside} 2>/dev/null && echo wrote || echo refused; while IFS= read -r l; do echo "got $l"; done; echo eof > inside; cat inside`;
    const s = await start(fx.mcp.client, fx.listing, script, { input: 'pipe' });
    const id = runIdOf(s);
    expect(s.pending).toMatchObject({ input: 'pipe' });
    await input(fx.mcp.client, fx.listing, id, 'one\n');
    await running(fx.mcp.client, fx.listing, id);
    await input(fx.mcp.client, fx.listing, id, 'two\nthree\n');
    await input(fx.mcp.client, fx.listing, id, 'four\n', { eof: true });
    const final = await finalOf(fx.mcp.client, fx.listing, id);
    expect(final.data.stdout.data).toBe('refused\ngot one\ngot two\ngot three\ngot four\neof\n');
    expect(final.data.completion).toMatchObject({ state: 'exited', exit_status: 0 });
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(join(project, 'inside'))).toBe(true);
    expect(fx.audit().find((e) => e.run_id === id && e.event === 'start')).toMatchObject({
      sandbox: 'workspace',
      input: 'pipe',
    });
  });

  it("a terminal run is on its own pts of the asked size, not the pane's, walled like any run", async () => {
    const fx = fixture();
    const project = fx.project();
    const paneTty = (await fx.type('tty')).trim();
    await fx.sandbox('workspace', project);
    const outside = join(fx.server.home, `outside-${uniqueToken()}`);
    const script =
      'tty; stty size; for f in 0 1 2; do [ -t $f ] && echo "fd$f tty"; done; ls /dev/pts | tr "\\n" " "; echo; ' +
      `ps -o sid= -o pgid= -p $$; echo "pid $$"; touch ${outside} 2>/dev/null && echo wrote || echo refused; ` +
      'echo via-dev-tty > /dev/tty; touch ok-inside && echo wrote-inside; stat -c %d "$(tty)"';
    const s = await start(fx.mcp.client, fx.listing, script, {
      input: 'terminal',
      terminal_size: { cols: 90, rows: 20 },
    });
    const final = await finalOf(fx.mcp.client, fx.listing, runIdOf(s));
    const out: string = final.data.stdout.data;
    const lines = out.split('\r\n');
    expect(lines[0]).toMatch(/^\/dev\/pts\/\d+$/);
    // Not the pane's terminal. The walls' devpts (below) numbers its terminals from 0 as the host's
    // does, so the same name there is another terminal: told apart by the filesystem it is on.
    expect(lines[11]).toMatch(/^\d+$/);
    expect(`${lines[11]} ${lines[0]}`).not.toBe(`${statSync(paneTty).dev} ${paneTty}`);
    expect(lines.slice(1, 5)).toEqual(['20 90', 'fd0 tty', 'fd1 tty', 'fd2 tty']);
    // The walls' devpts is an instance of their own: only this run's terminal is there, none of the host's.
    expect(lines[5]?.trim().split(' ').sort()).toEqual([lines[0]!.slice('/dev/pts/'.length), 'ptmx'].sort());
    const pid = /pid (\d+)/.exec(out)?.[1];
    expect(lines[6]?.trim().split(/\s+/)).toEqual([pid, pid]);
    expect(lines.slice(8, 11)).toEqual(['refused', 'via-dev-tty', 'wrote-inside']);
    expect(final.data.completion).toMatchObject({ state: 'exited', exit_status: 0 });
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(join(project, 'ok-inside'))).toBe(true);
  });

  it('what a walled terminal run pushes into its terminal (TIOCSTI) reaches neither the pane nor the helper', async () => {
    const fx = fixture();
    const project = fx.project();
    await fx.sandbox('workspace', project);
    const marker = join(fx.server.home, `injected-${uniqueToken()}`);
    // Pushed into the run's own input queue: read back by the run's own shell (walled), or by nobody.
    const py = `import fcntl, termios\nfor c in b"touch ${marker}\\n": fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))\nprint("pushed")`;
    const script = `python3 -c '${py}' || echo no-tiocsti; read -r line; echo "read back: $line"`;
    const s = await start(fx.mcp.client, fx.listing, script, { input: 'terminal' });
    const final = await finalOf(fx.mcp.client, fx.listing, runIdOf(s));
    const out: string = final.data.stdout.data;
    expect(out).toMatch(/pushed|no-tiocsti/);
    if (out.includes('pushed')) expect(out).toContain(`read back: touch ${marker}`);
    await fx.type('true');
    expect(await fx.pane.capture()).not.toContain(marker);
    expect(existsSync(marker)).toBe(false);
  });

  it('drives a Python REPL in the walls through input and the screen', async () => {
    const fx = fixture();
    await fx.sandbox('read-only', fx.project());
    const id = runIdOf(await start(fx.mcp.client, fx.listing, 'exec python3 -q', { input: 'terminal' }));
    await screenUntil(fx.mcp.client, fx.listing, id, (d) => d.lines.some((l: string) => l === '>>>'), 'the prompt');
    await input(fx.mcp.client, fx.listing, id, 'print(6*7)\r');
    const d = await screenUntil(fx.mcp.client, fx.listing, id, (d) => d.lines.includes('42'), '42');
    expect(d.lines[d.lines.indexOf('42') - 1]).toBe('>>> print(6*7)');
    await input(fx.mcp.client, fx.listing, id, "open('/etc/tmux-run-ro-test', 'w')\r");
    await screenUntil(
      fx.mcp.client,
      fx.listing,
      id,
      (d) => d.lines.some((l: string) => /OSError|PermissionError|Read-only file system/.test(l)),
      'the write refused',
    );
    await input(fx.mcp.client, fx.listing, id, 'exit()\r');
    const final = await finalOf(fx.mcp.client, fx.listing, id);
    expect(final.data.completion).toMatchObject({ state: 'exited', exit_status: 0 });
  });

  it('cancel of a walled pipe or terminal run leaves nothing of it running', async () => {
    const fx = fixture();
    await fx.sandbox('workspace', fx.project());
    for (const mode of ['pipe', 'terminal'] as const) {
      const tag = uniqueSleep();
      const id = runIdOf(
        await start(fx.mcp.client, fx.listing, `sleep ${tag} & setsid sleep ${tag} & echo up; exec cat`, {
          input: mode,
        }),
      );
      await running(fx.mcp.client, fx.listing, id);
      await waitUntil(() => sleepsOf(tag).length === 2, 10_000, `${mode}: both sleeps up`);
      expect((await cancel(fx.mcp.client, fx.listing, id, 10_000)).error.code, mode).toBe('cancelled');
      await waitUntil(() => sleepsOf(tag).length === 0, 10_000, `${mode}: nothing left`);
      const r = await input(fx.mcp.client, fx.listing, id, 'late\n');
      expect(r.error?.code, mode).toBe('input_closed');
    }
    // The walls serve the next run.
    expect((await fx.run('echo next')).data.stdout.data).toBe('next\n');
  });

  it('a bash pane walls its pipe and terminal runs the same', async () => {
    const fx = fixture();
    const project = fx.project();
    const { pane, listing } = await enrolledBash(fx.server, { cwd: project });
    await pane.run(`TMUX_RUN_SANDBOX=workspace`);
    const outside = join(fx.server.home, `bash-outside-${uniqueToken()}`);
    const pipe = runIdOf(
      await start(
        fx.mcp.client,
        listing,
        `touch ${outside} 2>/dev/null || echo refused; while read l; do echo "<$l>"; done`,
        {
          input: 'pipe',
        },
      ),
    );
    await input(fx.mcp.client, listing, pipe, 'a\nb\n', { eof: true });
    expect((await finalOf(fx.mcp.client, listing, pipe)).data.stdout.data).toBe('refused\n<a>\n<b>\n');
    const term = runIdOf(
      await start(fx.mcp.client, listing, 'tty; stty size; read x; echo "x=$x"', { input: 'terminal' }),
    );
    const d = await screenUntil(fx.mcp.client, listing, term, (d) => d.lines[1] === '24 80', 'stty size');
    expect(d.lines[0]).toMatch(/^\/dev\/pts\/\d+$/);
    await input(fx.mcp.client, listing, term, 'yes\r');
    const final = await finalOf(fx.mcp.client, listing, term);
    expect(final.data.stdout.data).toContain('x=yes');
    expect(existsSync(outside)).toBe(false);
  });

  it('with the perl waiter (TMUX_RUN_SPAWN=node) a terminal run is refused, saying why, and a pipe run is walled', async () => {
    const fx = fixture();
    const project = fx.project();
    const { pane, listing: l } = await fx.extraPane({ env: { TMUX_RUN_SPAWN: 'node' }, cwd: project });
    await pane.run('TMUX_RUN_SANDBOX=workspace');
    const t = await finalOf(
      fx.mcp.client,
      l,
      runIdOf(await start(fx.mcp.client, l, 'echo ran', { input: 'terminal' })),
    );
    expect(t.error).toMatchObject({ code: 'sandbox_unavailable', effects: { state: 'none' } });
    expect(t.error.message).toMatch(/needs the C waiter .*perl one \(TMUX_RUN_SPAWN=node\)/);
    const p = runIdOf(await start(fx.mcp.client, l, 'cat; echo done', { input: 'pipe' }));
    await input(fx.mcp.client, l, p, 'hi\n', { eof: true });
    expect((await finalOf(fx.mcp.client, l, p)).data.stdout.data).toBe('hi\ndone\n');
  });
});
