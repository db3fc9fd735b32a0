// A pane on another host, end to end, bash at the far end: a stock user (Debian's skeleton
// ~/.profile sourcing ~/.bashrc, whose non-interactive return comes first), set up with
// `tmux-run setup --remote`; the person (send-keys) types `tmux-run ssh` in a local pane, a real
// MCP client lists the far end's bash with its host and runs scripts there. With the builtin built
// at the far end the check is exact; with it off (TMUX_RUN_NATIVE=off) the screen check reads the
// local pane through the session's relay.
import { beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { useServer } from '../../lab/lifecycle.js';
import { ok } from '../mcp/support.js';
import { callRun } from '../../lab/mcp.js';
import { waitUntil } from '../../lab/waiting.js';
import { asUser, sshdAvailable, userCmdlines } from './sshd.js';
import { expectFarRun, expectHalfTypedKept, remoteListings, useRemote } from './support.js';
import type { Pane } from '../../lab/pane.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { PaneListing } from '../../src/broker/registry.js';

const skip = sshdAvailable();
const USER = 'trr-bash';
const REMOTE_PROMPT = 'far> ';

describe.skipIf(skip !== undefined)('a pane on another host: bash at the far end', () => {
  const scope = useServer();
  // Debian's stock ~/.bashrc, the person's prompt after it; setup adds its block at the end.
  const remote = useRemote(scope, USER, '/bin/bash', {
    file: '.bashrc',
    text: `${readFileSync('/etc/skel/.bashrc', 'utf8')}\nPS1='${REMOTE_PROMPT}'\n`,
  });
  let mcp: McpHandle;
  let pane: Pane;
  let listing: PaneListing;
  const listed = async (pred: (p: PaneListing) => boolean, what: string): Promise<PaneListing> =>
    waitUntil(async () => (await remoteListings(mcp)).find(pred), 15_000, what);

  /** A socket of the forward directory listened on by another process of the user's (not an sshd), made now. */
  function foreignListener(): { stop(): void } {
    const path = `${remote.user.home}/.local/share/tmux-run/f/${'f'.repeat(32)}.sock`;
    const p = spawn('/usr/sbin/runuser', [
      '-u',
      remote.user.name,
      '--',
      'python3',
      '-c',
      `import socket, time\ns = socket.socket(socket.AF_UNIX)\ns.bind('${path}')\ns.listen()\ntime.sleep(60)`,
    ]);
    return {
      stop: () => {
        p.kill('SIGKILL');
        rmSync(path, { force: true });
      },
    };
  }

  beforeAll(async () => {
    const out = await remote.cli(['setup', '--remote', '-F', remote.sshd.clientConfig, USER]);
    expect(out.stdout).toContain(`set up ${USER}`);
    expect(out.stdout).toContain('.bashrc');
    expect(out.stdout).not.toContain('note:'); // the stock ~/.profile sources ~/.bashrc
    mcp = await scope.startMcp();
  });

  it('setup --remote builds the builtin there and adds one block to ~/.bashrc; again updates it', async () => {
    const app = join(remote.user.home, '.local/share/tmux-run/app');
    expect(existsSync(join(app, 'dist/generated/bash-line.so'))).toBe(true); // built there: the host has cc
    expect(readFileSync(join(remote.user.home, '.profile'), 'utf8')).toContain('.bashrc');
    await remote.cli(['setup', '--remote', '-F', remote.sshd.clientConfig, USER]);
    const rc = readFileSync(join(remote.user.home, '.bashrc'), 'utf8');
    expect(rc.match(/>>> tmux-run remote/g)?.length).toBe(1);
    expect(rc).toContain('tmux-run-remote.bash');
  });

  it('a plain ssh login enrolls nothing, starts nothing and prints nothing of tmux-run (a stale socket beside it)', async () => {
    // A socket another session left (stale: nothing listens) is older than this login's sshd.
    asUser(remote.user, [
      'python3',
      '-c',
      `import socket; socket.socket(socket.AF_UNIX).bind('${remote.user.home}/.local/share/tmux-run/f/${'0'.repeat(32)}.sock')`,
    ]);
    await new Promise((r) => setTimeout(r, 3500)); // older than the next login's sshd, to the filter's resolution
    pane = await scope.server.newPane();
    await pane.type(`ssh -F ${remote.sshd.clientConfig} ${USER}`, { enter: true });
    await pane.waitFor((s) => s.endsWith(REMOTE_PROMPT.trimEnd()));
    // The start-up line's filter let nothing through: the snippet was not even read.
    await pane.type('echo plain-$((6*7))-${_tmux_run_remote-none}', { enter: true });
    const screen = await pane.waitFor((s) => s.includes('plain-42-'));
    expect(screen.split('\n')).toContain('plain-42-none');
    expect(screen).not.toContain('tmux-run:');
    expect(await remoteListings(mcp)).toEqual([]);
    expect(userCmdlines(remote.user.uid).filter((c) => c.includes('helper/main.js'))).toEqual([]);
    await pane.type('exit', { enter: true });
    await pane.waitForPrompt();
  });

  it("a login let through by the start-up line's filter, with no socket of its own sshd, starts the helper and stays silent", async () => {
    // A socket made just before the login (so not older than its sshd, to the second), listened on by
    // another process: the filter lets the login through, the helper finds no socket of its own sshd.
    const other = foreignListener();
    try {
      await waitUntil(
        () => existsSync(`${remote.user.home}/.local/share/tmux-run/f/${'f'.repeat(32)}.sock`),
        5000,
        'the socket made',
      );
      await pane.type(`ssh -F ${remote.sshd.clientConfig} ${USER}`, { enter: true });
      await pane.waitFor((s) => s.endsWith(REMOTE_PROMPT.trimEnd()));
      await new Promise((r) => setTimeout(r, 2000)); // the helper starts at the first prompt, and ends
      await pane.type('echo seen-${_tmux_run_remote-none}', { enter: true });
      await pane.waitFor((s) => s.includes(`seen-${remote.user.home}/.local/share/tmux-run/f`));
      await pane.type('echo quiet-$((1+1))', { enter: true });
      const screen = await pane.waitFor((s) => s.includes('quiet-2'));
      expect(screen).not.toContain('tmux-run:');
      expect(await remoteListings(mcp)).toEqual([]);
      await waitUntil(
        () => userCmdlines(remote.user.uid).filter((c) => c.includes('helper/main.js')).length === 0,
        5000,
        'no helper left',
      );
      await pane.type('exit', { enter: true });
      await pane.waitForPrompt();
    } finally {
      other.stop();
    }
  });

  it("tmux-run ssh enrolls the far end's bash, with its exact check: listed with its host", async () => {
    await pane.type(remote.sshLine(), { enter: true });
    listing = await listed(() => true, 'the far end listed');
    expect(listing.host).toEqual({ destination: USER, name: expect.any(String) });
    expect(listing.pane_id).toBe(pane.id);
    expect(listing.shell).toBe('bash');
    expect(listing.editor_check).toBe('exact');
    expect(listing.cwd).toBe(remote.user.home);
  });

  it('runs there: exit status, separate streams, the remote user, the live cwd and an exported variable', async () => {
    await pane.type('cd /tmp && export TRR_SEEN=far-value', { enter: true });
    await waitUntil(async () => (await remoteListings(mcp))[0]?.cwd === '/tmp' || undefined, 10_000, 'the cwd moved');
    await expectFarRun(mcp, listing, pane, USER);
  });

  it('refuses a run while a half-typed line is at the prompt, and keeps the line', async () => {
    await expectHalfTypedKept(mcp, listing, pane);
  });

  it('exec bash at the far end is a new generation: the old target is refused, the new shell serves', async () => {
    const old = listing;
    await pane.type('exec bash', { enter: true });
    const fresh = await listed((p) => p.generation !== old.generation, 'the new shell listed');
    expect(fresh.enrollment_generation).not.toBe(old.enrollment_generation);
    const stale = await callRun(mcp.client, old, 'true');
    expect(stale.isError).toBe(true);
    expect(['stale_generation', 'not_enrolled']).toContain(stale.structured.error.code);
    const d = ok((await callRun(mcp.client, fresh, 'printf %s "$TRR_SEEN"')).structured);
    expect(d.stdout.data).toBe('far-value');
    listing = fresh;
  });

  it('without the builtin the screen check reads the local pane through the relay: an empty line runs, a typed one is refused and kept', async () => {
    const old = listing;
    await pane.type('TMUX_RUN_NATIVE=off exec bash', { enter: true });
    listing = await listed((p) => p.generation !== old.generation, 'the bash without its builtin listed');
    expect(listing.editor_check).toBe('screen');
    expect(listing.editor_check_reason).toContain('TMUX_RUN_NATIVE=off');
    const d = ok((await callRun(mcp.client, listing, 'echo screen-checked; exit 4')).structured);
    expect(d.completion).toEqual({ state: 'exited', exit_status: 4, signal: null });
    expect(d.stdout.data).toBe('screen-checked\n');
    await pane.type('echo by-the-scr');
    await pane.waitFor((s) => s.endsWith('echo by-the-scr'));
    const r = await callRun(mcp.client, listing, 'true');
    expect(r.isError).toBe(true);
    expect(r.structured.error.code).toBe('editor_not_empty');
    await pane.type('een', { enter: true });
    await pane.waitFor((s) => s.includes('by-the-screen'));
    expect(await pane.capture()).not.toContain('screen-checked');
  });

  it("exit is not held up, the pane is listed no more, and no run's script is in bash's history", async () => {
    await pane.type('exit', { enter: true });
    await waitUntil(async () => (await remoteListings(mcp)).length === 0 || undefined, 10_000, 'the far end unlisted');
    await pane.waitForPrompt();
    const left = readdirSync(scope.server.registryDir).filter((n) => n.startsWith('ssh.') || n.endsWith('.json'));
    expect(left).toEqual([]);
    // bash wrote its history when it exited: what the person typed, none of the scripts.
    const history = readFileSync(join(remote.user.home, '.bash_history'), 'utf8');
    expect(history).toContain('echo by-the-screen');
    expect(history).not.toContain('id -un');
    expect(history).not.toContain('screen-checked');
  });

  it('setup --remote --undo takes the block out of ~/.bashrc and the far end away', async () => {
    await remote.cli(['setup', '--remote', '--undo', '-F', remote.sshd.clientConfig, USER]);
    const rc = readFileSync(join(remote.user.home, '.bashrc'), 'utf8');
    expect(rc).not.toContain('tmux-run');
    expect(rc).toContain(`PS1='${REMOTE_PROMPT}'`);
    expect(existsSync(join(remote.user.home, '.local/share/tmux-run'))).toBe(false);
  });
});
