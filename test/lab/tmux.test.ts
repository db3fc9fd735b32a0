// The harness itself: real tmux, real zsh and bash panes, nothing left behind.
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { descendantsOf, processAlive } from '../../lab/processes.js';
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from '../../lab/run-root.js';
import { openScope } from '../../lab/scope.js';
import { assertNoLeftovers, startServer, type TmuxServer } from '../../lab/server.js';

describe('tmux test harness', () => {
  let server: TmuxServer | undefined;

  afterEach(async () => {
    await server?.kill();
    server = undefined;
  });

  it('runs a command in a zsh pane and cleans up completely', async () => {
    server = await startServer();
    const pane = await server.newPane();
    expect(pane.id).toMatch(/^%\d+$/);

    const pid = await pane.shellPid();
    expect(processAlive(pid)).toBe(true);
    expect(descendantsOf(server.pid)).toContain(pid);

    expect(await pane.run('echo hello')).toBe('hello');
    expect(await pane.run('print -r -- "$TMUX_RUN_DIR|$HOME|$ZDOTDIR|$TERM|$LANG"')).toBe(
      `${server.registryDir}|${server.home}|${server.home}|xterm-256color|C.UTF-8`,
    );
    expect(await pane.runWithStatus('false')).toEqual({ output: '', status: 1 });
    expect(await pane.run('print a; print; print b;')).toBe('a\n\nb');
    expect(await pane.run('echo hello')).toBe('hello');
    expect(await pane.run('exec zsh -i')).toBe(''); // a new shell in the same pane
    expect(await pane.shellPid()).toBe(pid);
    expect(await pane.run('echo again')).toBe('again');

    await server.kill();
    expect(processAlive(pid)).toBe(false);
    expect(assertNoLeftovers(server)).toEqual([]);
  });

  it('keeps the test runner environment out of panes', async () => {
    process.env.HARNESS_SHOULD_NOT_LEAK = 'leaked';
    try {
      server = await startServer({ env: { EXTRA: 'yes' } });
      const pane = await server.newPane({ env: { PER_PANE: 'p', TMUX_RUN_NOTIFY: undefined } });
      expect(
        await pane.run('print -r -- "${HARNESS_SHOULD_NOT_LEAK-unset} $EXTRA $PER_PANE ${TMUX_RUN_NOTIFY-unset}"'),
      ).toBe('unset yes p unset');
    } finally {
      delete process.env.HARNESS_SHOULD_NOT_LEAK;
    }
  });

  it('runs a bash pane and several panes side by side', async () => {
    server = await startServer();
    const [bash, zsh] = await Promise.all([
      server.newPane({ shell: ['bash', '--norc', '-i'] }),
      server.newPane({ zshrc: "PROMPT='$ '\nexport FROM_ZSHRC=1\n" }),
    ]);
    expect(bash.id).not.toBe(zsh.id);
    expect(await bash.run('echo "$BASH_VERSION" | cut -d. -f1')).toMatch(/^\d+$/);
    expect(await bash.runWithStatus('(exit 3)')).toEqual({ output: '', status: 3 });
    expect(await zsh.run('echo $FROM_ZSHRC')).toBe('1');

    const bashPid = await bash.shellPid();
    await bash.kill();
    expect(processAlive(bashPid)).toBe(false);
    expect(await zsh.run('echo still here;')).toBe('still here');

    await server.kill();
    expect(assertNoLeftovers(server)).toEqual([]);
  });

  it('runs a shell without the completion marker (dash) by reading the screen', async () => {
    server = await startServer();
    const sh = await server.newPane({ shell: ['dash', '-i'], env: { PS1: '$ ' } });
    expect(await sh.run('echo one; echo two')).toBe('one\ntwo');
    expect(await sh.runWithStatus('sleep 0.2; echo late')).toEqual({ output: 'late', status: undefined });
    await server.kill();
    expect(assertNoLeftovers(server)).toEqual([]);
  });

  it('types like a person and sees it on the screen', async () => {
    server = await startServer();
    const pane = await server.newPane();
    await pane.type('echo half-typed');
    await pane.waitFor((screen) => screen.endsWith('$ echo half-typed'));
    await pane.type('', { enter: true });
    await pane.waitFor((screen) => /^half-typed$/m.test(screen));
    await pane.waitForPrompt();
    // a background job of the shell is hung up with it when the server goes
    await pane.run('sleep 1000 &');
    await server.kill();
    expect(assertNoLeftovers(server)).toEqual([]);
  });

  it('reports a process that outlives the server, then stops it', async () => {
    server = await startServer();
    const pane = await server.newPane();
    await pane.run('sleep 1000 &!'); // disowned: survives the hangup, as it would for a person
    const [pid] = descendantsOf(await pane.shellPid());
    expect(pid).toBeDefined();
    await server.kill({ timeoutMs: 500 });
    expect(assertNoLeftovers(server)).toEqual([
      `pid ${pid} (sleep 1000): started by the server; still running after kill()`,
    ]);
    expect(processAlive(pid ?? 0)).toBe(false);
  });

  it('restarts a server on the same socket after it died', async () => {
    server = await startServer();
    const first = await server.serverPid();
    await server.tmux(['kill-server']);
    await server.restart();
    expect(server.pid).not.toBe(first);
    expect(processAlive(server.pid)).toBe(true);
    expect(await (await server.newPane()).run('echo back')).toBe('back');
    await server.kill();
    expect(processAlive(first)).toBe(false);
    expect(assertNoLeftovers(server)).toEqual([]);
  });

  it('sweeps a run root: stops the servers a test forgot and removes the root', async () => {
    const root = makeRunRoot('tmux-run-sweep-');
    const saved = process.env[RUN_ROOT_VAR];
    process.env[RUN_ROOT_VAR] = root;
    try {
      server = await startServer();
    } finally {
      if (saved === undefined) delete process.env[RUN_ROOT_VAR];
      else process.env[RUN_ROOT_VAR] = saved;
    }
    expect(server.baseDir.startsWith(`${root}/`)).toBe(true);
    const pid = server.pid;
    const found = await sweepRunRoot(root);
    expect(found).toContain(`tmux server on ${server.socket} was still running`);
    expect(processAlive(pid)).toBe(false);
    expect(existsSync(root)).toBe(false);
  });

  it('closes a scope: its brokers first, then the server, and nothing is left', async () => {
    const scope = await openScope();
    server = scope.server;
    const mcp = await scope.startMcp();
    expect(mcp.pid).not.toBeNull();
    expect(processAlive(mcp.pid!)).toBe(true);
    expect(await scope.close()).toEqual([]);
    expect(processAlive(mcp.pid!)).toBe(false);
  });
});
