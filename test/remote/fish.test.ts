// A pane on another host, end to end, fish at the far end: a user whose login shell is fish, set
// up with `tmux-run setup --remote` (a file of its own in ~/.config/fish/conf.d/); the person
// (send-keys) types `tmux-run ssh` in a local pane, a real MCP client lists the far end's fish
// with its host and runs scripts there. fish's handler cannot see its line, so every run waits on
// the screen check, which reads the local pane through the session's relay.
import { beforeAll, describe, expect, it } from 'vitest';
import { chownSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync, rmSync } from 'node:fs';
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
const USER = 'trr-fish';
const REMOTE_PROMPT = 'far> ';
const CONFIG = `set -g fish_greeting\nfunction fish_prompt; printf '${REMOTE_PROMPT}'; end\n`;

describe.skipIf(skip !== undefined)('a pane on another host: fish at the far end', () => {
  const scope = useServer();
  // (fish reads no ~/.profile; the person's config.fish is written below, in its own directory.)
  const remote = useRemote(scope, USER, '/usr/bin/fish', { file: '.profile', text: '' });
  let mcp: McpHandle;
  let pane: Pane;
  let listing: PaneListing;
  const listed = async (pred: (p: PaneListing) => boolean, what: string): Promise<PaneListing> =>
    waitUntil(async () => (await remoteListings(mcp)).find(pred), 15_000, what);
  const home = (...p: string[]): string => join(remote.user.home, ...p);

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
    // The person's own config.fish (a prompt, no greeting), and a history of their own from before.
    const { uid } = remote.user;
    for (const d of ['.config', '.config/fish', '.local', '.local/share', '.local/share/fish']) {
      mkdirSync(home(d), { recursive: true, mode: 0o700 });
      chownSync(home(d), uid, uid);
    }
    writeFileSync(home('.config/fish/config.fish'), CONFIG);
    chownSync(home('.config/fish/config.fish'), uid, uid);
    writeFileSync(home('.local/share/fish/fish_history'), '');
    chownSync(home('.local/share/fish/fish_history'), uid, uid);
    const out = await remote.cli(['setup', '--remote', '-F', remote.sshd.clientConfig, USER]);
    expect(out.stdout).toContain(`set up ${USER}`);
    expect(out.stdout).toContain('conf.d/tmux-run-remote.fish');
    mcp = await scope.startMcp();
  });

  it('setup --remote adds a file of its own to conf.d; again replaces it', async () => {
    await remote.cli(['setup', '--remote', '-F', remote.sshd.clientConfig, USER]);
    const rc = readFileSync(home('.config/fish/conf.d/tmux-run-remote.fish'), 'utf8');
    expect(rc.match(/>>> tmux-run remote/g)?.length).toBe(1);
    expect(rc).toContain('tmux-run-remote.fish');
    expect(readFileSync(home('.config/fish/config.fish'), 'utf8')).toBe(CONFIG);
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
    await pane.type('echo plain-(math 6 \\* 7)-"$_tmux_run_remote"-end', { enter: true });
    const screen = await pane.waitFor((s) => s.includes('plain-42-'));
    expect(screen.split('\n')).toContain('plain-42--end');
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
      await pane.type('echo seen-"$_tmux_run_remote"', { enter: true });
      await pane.waitFor((s) => s.includes(`seen-${remote.user.home}/.local/share/tmux-run/f`));
      await pane.type('echo quiet-(math 1 + 1)', { enter: true });
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

  it("tmux-run ssh enrolls the far end's fish, on the screen check: listed with its host", async () => {
    await pane.type(remote.sshLine(), { enter: true });
    listing = await listed(() => true, 'the far end listed');
    expect(listing.host).toEqual({ destination: USER, name: expect.any(String) });
    expect(listing.pane_id).toBe(pane.id);
    expect(listing.shell).toBe('fish');
    expect(listing.editor_check).toBe('screen');
    expect(listing.cwd).toBe(remote.user.home);
  });

  it('runs there: exit status, separate streams, the remote user, the live cwd and an exported variable', async () => {
    await pane.type('cd /tmp; and set -gx TRR_SEEN far-value', { enter: true });
    await waitUntil(async () => (await remoteListings(mcp))[0]?.cwd === '/tmp' || undefined, 10_000, 'the cwd moved');
    await expectFarRun(mcp, listing, pane, USER);
  });

  it('refuses a run while a half-typed line is at the prompt (read through the relay), and keeps the line', async () => {
    await expectHalfTypedKept(mcp, listing, pane);
  });

  it('exec fish at the far end is a new generation: the old target is refused, the new shell serves', async () => {
    const old = listing;
    await pane.type('exec fish', { enter: true });
    const fresh = await listed((p) => p.generation !== old.generation, 'the new shell listed');
    expect(fresh.enrollment_generation).not.toBe(old.enrollment_generation);
    const stale = await callRun(mcp.client, old, 'true');
    expect(stale.isError).toBe(true);
    expect(['stale_generation', 'not_enrolled']).toContain(stale.structured.error.code);
    const d = ok((await callRun(mcp.client, fresh, 'printf %s "$TRR_SEEN"; exit 5')).structured);
    expect(d.stdout.data).toBe('far-value');
    expect(d.completion).toEqual({ state: 'exited', exit_status: 5, signal: null });
    listing = fresh;
  });

  it("exit is not held up, the pane is listed no more, and no run's script is in fish's history", async () => {
    await pane.type('exit', { enter: true });
    await waitUntil(async () => (await remoteListings(mcp)).length === 0 || undefined, 10_000, 'the far end unlisted');
    await pane.waitForPrompt();
    const left = readdirSync(scope.server.registryDir).filter((n) => n.startsWith('ssh.') || n.endsWith('.json'));
    expect(left).toEqual([]);
    // fish keeps what the person typed, none of the scripts.
    const history = readFileSync(home('.local/share/fish/fish_history'), 'utf8');
    expect(history).toContain('echo half-typed');
    expect(history).not.toContain('id -un');
    expect(history).not.toContain('TRR_SEEN"');
  });

  it('setup --remote --undo removes the conf.d file and the far end', async () => {
    await remote.cli(['setup', '--remote', '--undo', '-F', remote.sshd.clientConfig, USER]);
    expect(existsSync(home('.config/fish/conf.d/tmux-run-remote.fish'))).toBe(false);
    expect(readFileSync(home('.config/fish/config.fish'), 'utf8')).toBe(CONFIG);
    expect(existsSync(home('.local/share/tmux-run'))).toBe(false);
  });
});
