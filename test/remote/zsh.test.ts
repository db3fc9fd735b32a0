// A pane on another host, end to end, zsh at the far end: a real sshd on 127.0.0.1 (test/remote/
// sshd.ts), a remote user of its own set up with `tmux-run setup --remote`, a local tmux pane
// where the person (send-keys) types `tmux-run ssh`, and a real MCP client that lists the far
// end's shell with its host and runs scripts there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync, chownSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { useServer } from '../../lab/lifecycle.js';
import { CLI_BIN, productEnv } from '../../lab/product.js';
import { ok } from '../mcp/support.js';
import { callRun, listedPanes } from '../../lab/mcp.js';
import { waitUntil } from '../../lab/waiting.js';
import { asUser, sshdAvailable, userCmdlines, startSshd, type RemoteUser, type Sshd } from './sshd.js';
import type { Pane } from '../../lab/pane.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { PaneListing } from '../../src/broker/registry.js';
import { expectFarRun, expectHalfTypedKept } from './support.js';

const run = promisify(execFile);
const skip = sshdAvailable();
const USER = 'trr-zsh';
const REMOTE_PROMPT = 'far> ';

describe.skipIf(skip !== undefined)('a pane on another host: zsh at the far end', () => {
  const scope = useServer(
    process.env.TMUX_RUN_SSH_LOG ? { env: { TMUX_RUN_SSH_LOG: process.env.TMUX_RUN_SSH_LOG } } : undefined,
  );
  let sshd: Sshd;
  let user: RemoteUser;
  let mcp: McpHandle;
  let pane: Pane;
  let listing: PaneListing;

  const cli = (args: string[]) =>
    run(process.execPath, [CLI_BIN, ...args], { env: productEnv(scope.server), encoding: 'utf8' });
  const sshLine = (): string => `${process.execPath} ${CLI_BIN} ssh -F ${sshd.clientConfig} ${USER}`;
  const remoteListings = async (): Promise<PaneListing[]> =>
    (await listedPanes(mcp.client)).filter((p) => p.host !== null);

  beforeAll(async () => {
    sshd = await startSshd({ users: [{ name: USER, shell: '/usr/bin/zsh' }], acceptEnv: 'fedora' });
    user = sshd.users[0]!;
    // The far user's own start-up file, before setup adds its line.
    const zshrc = join(user.home, '.zshrc');
    writeFileSync(zshrc, `PROMPT='${REMOTE_PROMPT}'\nHISTFILE=~/.zsh_history\nSAVEHIST=100\nHISTSIZE=100\n`);
    chownSync(zshrc, user.uid, user.uid);
    const out = await cli(['setup', '--remote', '-F', sshd.clientConfig, USER]);
    expect(out.stdout).toContain(`set up ${USER}`);
    mcp = await scope.startMcp();
  });
  afterAll(async () => {
    await sshd?.close();
  });

  it("setup --remote copies the far end into the user's own directory and adds one start-up line", async () => {
    const app = join(user.home, '.local/share/tmux-run/app');
    expect(existsSync(join(app, 'dist/generated/helper.cjs'))).toBe(true);
    expect(existsSync(join(app, 'dist/generated/peer-cred.node'))).toBe(true); // built there: the host has cc
    const rc = readFileSync(join(user.home, '.zshrc'), 'utf8');
    expect(rc.match(/tmux-run-remote\.zsh/g)?.length).toBe(2); // the test and the source, once
    // Again: updated in place, still one line.
    const again = await cli(['setup', '--remote', '-F', sshd.clientConfig, USER]);
    expect(again.stdout).toContain(`updated ${USER}`);
    expect(readFileSync(join(user.home, '.zshrc'), 'utf8').match(/>>> tmux-run remote/g)?.length).toBe(1);
    const hosts = join(scope.server.home, '.local/state/tmux-run/hosts');
    expect(readdirSync(hosts)).toHaveLength(1);
  });

  it('a plain ssh login enrolls nothing and prints nothing of tmux-run', async () => {
    // A socket another session left (stale: nothing listens) is older than this login's sshd.
    asUser(user, [
      'python3',
      '-c',
      `import socket; socket.socket(socket.AF_UNIX).bind('${user.home}/.local/share/tmux-run/f/${'0'.repeat(32)}.sock')`,
    ]);
    await new Promise((r) => setTimeout(r, 3500)); // older than the next login's sshd, to the filter's resolution (a second or two)
    pane = await scope.server.newPane();
    await pane.type(`ssh -F ${sshd.clientConfig} ${USER}`, { enter: true });
    await pane.waitFor((s) => s.endsWith(REMOTE_PROMPT.trimEnd()) || s.includes(REMOTE_PROMPT));
    await pane.type('echo plain-$((6*7))', { enter: true });
    const screen = await pane.waitFor((s) => s.includes('plain-42'));
    expect(screen).not.toContain('tmux-run:');
    expect(await remoteListings()).toEqual([]);
    // No helper runs for the far user.
    expect(userCmdlines(user.uid).filter((c) => c.includes('helper/main.js'))).toEqual([]);
    await pane.type('exit', { enter: true });
    await pane.waitForPrompt();
  });

  it("tmux-run ssh enrolls the far end's zsh: listed with its host", async () => {
    await pane.type(sshLine(), { enter: true });
    await pane.waitFor((s) => s.split('\n').filter((l) => l.startsWith(REMOTE_PROMPT)).length >= 2);
    const [l] = await waitUntil(
      async () => {
        const r = await remoteListings();
        return r.length === 1 ? r : undefined;
      },
      15_000,
      'the far end listed',
    );
    listing = l!;
    expect(listing.host).toEqual({ destination: USER, name: expect.any(String) });
    expect(listing.pane_id).toBe(pane.id);
    expect(listing.shell).toBe('zsh');
    expect(listing.editor_check).toBe('exact');
    expect(listing.cwd).toBe(user.home);
    // The person's table and the tool's text say which host it is on.
    expect((await cli(['panes'])).stdout).toContain(`zsh@${listing.host!.name}`);
    const text = await mcp.client.callTool({ name: 'tmux_enrolled_panes', arguments: {} });
    expect(JSON.stringify(text.content)).toContain(`host \\"${USER}\\"`);
  });

  it('runs there: exit status, separate streams, the remote user, the live cwd and an exported variable', async () => {
    await pane.type('cd /tmp && export TRR_SEEN=far-value', { enter: true });
    await waitUntil(async () => (await remoteListings())[0]?.cwd === '/tmp' || undefined, 10_000, 'the cwd moved');
    await expectFarRun(mcp, listing, pane, USER);
  });

  it('refuses a run while a half-typed line is at the prompt, and keeps the line', async () => {
    await expectHalfTypedKept(mcp, listing, pane, (s) => s.split('\n').includes(`${REMOTE_PROMPT}echo half-typ`));
  });

  it("sourced again at the far end, the snippet names the pane as the ssh session's (no tmux pane there)", async () => {
    await pane.type('source $_tmux_run_snippet', { enter: true });
    const screen = await pane.waitFor((s) => s.includes('is already enrolled'));
    expect(screen).toContain(
      `tmux-run: the pane of this ssh session is already enrolled (generation ${listing.generation})`,
    );
  });

  it('exec at the far end is a new generation: the old target is refused, the new shell serves', async () => {
    const old = listing;
    await pane.type('exec zsh', { enter: true });
    const fresh = await waitUntil(
      async () => (await remoteListings()).find((p) => p.generation !== old.generation),
      15_000,
      'the new shell listed',
    );
    expect(fresh.enrollment_generation).not.toBe(old.enrollment_generation);
    const stale = await callRun(mcp.client, old, 'true');
    expect(stale.isError).toBe(true);
    expect(['stale_generation', 'not_enrolled']).toContain(stale.structured.error.code);
    const d = ok((await callRun(mcp.client, fresh, 'printf %s "$TRR_SEEN"')).structured);
    expect(d.stdout.data).toBe('far-value'); // exported, so the new shell has it
    listing = fresh;
  });

  it('exit is not held up, and the pane is listed no more within seconds', async () => {
    await pane.type('exit', { enter: true });
    await waitUntil(async () => (await remoteListings()).length === 0 || undefined, 10_000, 'the far end unlisted');
    // The local shell has its prompt back: ssh, and tmux-run ssh, are gone.
    await pane.waitForPrompt();
    const left = readdirSync(scope.server.registryDir).filter((n) => n.startsWith('ssh.') || n.endsWith('.json'));
    expect(left).toEqual([]);
  });

  it('setup --remote --dry-run changes nothing; --undo takes the far end out and the record here', async () => {
    const rc = join(user.home, '.zshrc');
    const before = readFileSync(rc, 'utf8');
    const dry = await cli(['setup', '--remote', '--dry-run', '-F', sshd.clientConfig, USER]);
    expect(dry.stdout).toContain('would install into');
    expect(readFileSync(rc, 'utf8')).toBe(before);
    await cli(['setup', '--remote', '--undo', '-F', sshd.clientConfig, USER]);
    const after = readFileSync(rc, 'utf8');
    expect(after).not.toContain('tmux-run');
    expect(after).toContain(`PROMPT='${REMOTE_PROMPT}'`); // the person's own lines stay
    expect(existsSync(join(user.home, '.local/share/tmux-run'))).toBe(false);
    expect(readdirSync(join(scope.server.home, '.local/state/tmux-run/hosts'))).toEqual([]);
    // tmux-run ssh to it now: an ordinary session, said once.
    await pane.type(sshLine(), { enter: true });
    const screen = await pane.waitFor((s) => s.includes('will not be enrolled'));
    expect(screen).toContain(`tmux-run setup --remote ${USER}`);
    await pane.type('echo undone-$((5*5))', { enter: true });
    await pane.waitFor((s) => s.includes('undone-25'));
    await pane.type('exit', { enter: true });
    await pane.waitForPrompt();
  });
});
