// A remote pane's session kept to itself and its faults: two sessions to one host are two panes,
// each run in its own shell; a killed ssh ends the listing (calls: session_ended) and leaves no run on the host.
import { describe, expect, it, beforeAll } from 'vitest';
import { connect } from 'node:net';
import { encodeFrame } from '../../src/core/protocol/framing.js';
import { BUILD_ID } from '../../src/core/protocol/build.js';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useServer } from '../../lab/lifecycle.js';
import { callRun } from '../../lab/mcp.js';
import { ok } from '../mcp/support.js';
import { waitUntil } from '../../lab/waiting.js';
import { sshdAvailable, userCmdlines } from './sshd.js';
import { remoteListings, useRemote } from './support.js';
import type { Pane } from '../../lab/pane.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { PaneListing } from '../../src/broker/registry.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';

const skip = sshdAvailable();
const USER = 'trr-zsh-faults';
const PROMPT = 'far> ';

describe.skipIf(skip !== undefined)('a pane on another host: sessions and faults', () => {
  const scope = useServer();
  const remote = useRemote(scope, USER, '/usr/bin/zsh', { file: '.zshrc', text: `PROMPT='${PROMPT}'\n` });
  let mcp: McpHandle;
  const panes: Pane[] = [];
  const listing = new Map<string, PaneListing>();

  beforeAll(async () => {
    await remote.cli(['setup', '--remote', '-F', remote.sshd.clientConfig, USER]);
    mcp = await scope.startMcp();
  });

  it('setup --remote where the login fails: one line saying why and a non-zero exit, not a crash', async () => {
    // A user the far host does not have (the command line's -l over the config's User): ssh ends
    // while tar may still be writing the install to it.
    const failed = await remote
      .cli(['setup', '--remote', '-F', remote.sshd.clientConfig, '-l', 'trr-no-such-user', USER])
      .then(
        () => undefined,
        (e: { code?: number; stderr?: string }) => e,
      );
    expect(failed).toBeDefined();
    expect(failed!.code).toBe(1);
    const lines = failed!.stderr!.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^tmux-run: setup --remote ${USER}: .*Permission denied`));
    expect(failed!.stderr).not.toMatch(/EPIPE|at .*\.js:\d+/);
  });

  it('two sessions to one host are two panes, each run in its own shell', async () => {
    for (const who of ['left', 'right']) {
      const pane = await scope.server.newPane();
      panes.push(pane);
      await pane.type(remote.sshLine(), { enter: true });
      await pane.waitFor((s) => s.split('\n').some((l) => l === PROMPT.trimEnd()));
      await pane.type(`export WHO=${who}`, { enter: true });
      const l = await waitUntil(
        async () => (await remoteListings(mcp)).find((p) => p.pane_id === pane.id),
        15_000,
        `the ${who} session listed`,
      );
      listing.set(who, l);
    }
    expect(listing.get('left')!.generation).not.toBe(listing.get('right')!.generation);
    expect(listing.get('left')!.shell_pid).not.toBe(listing.get('right')!.shell_pid);
    for (const who of ['left', 'right']) {
      const d = ok((await callRun(mcp.client, listing.get(who)!, 'printf %s "$WHO"')).structured);
      expect(d.stdout.data).toBe(who);
    }
  });

  it("the relay serves only its own ssh client: another local process's hello is dropped unanswered", async () => {
    const dirs = readdirSync(scope.server.registryDir).filter((n) => n.startsWith('ssh.'));
    expect(dirs).toHaveLength(2);
    const before = (await remoteListings(mcp)).map((p) => p.generation).sort();
    // A well-formed hello of this build: from the session's ssh it would be answered (refused, the
    // pane being enrolled already); from anyone else it is not read at all.
    const hello = {
      type: 'hello',
      version: 1,
      build: BUILD_ID,
      hostname: 'impostor',
      boot: 'b',
      shell: 'zsh',
      editor_check: 'exact',
      shell_pid: 4242,
      shell_start: '1',
      helper_pid: 4243,
    };
    for (const d of dirs) {
      const got: Buffer[] = [];
      const sock = connect(join(scope.server.registryDir, d, 'l.sock'));
      await new Promise<void>((resolve) => {
        sock.on('connect', () => sock.write(encodeFrame(hello)));
        sock.on('data', (c) => got.push(c));
        sock.on('close', () => resolve());
        sock.on('error', () => resolve());
      });
      expect(Buffer.concat(got).length).toBe(0);
    }
    expect((await remoteListings(mcp)).map((p) => p.generation).sort()).toEqual(before);
  });

  it('a stalled link (the ssh client stopped) is an error within the call, and nothing runs late', async () => {
    const l = listing.get('left')!;
    const rec = JSON.parse(
      readFileSync(join(scope.server.registryDir, `${l.enrollment_generation}.json`), 'utf8'),
    ) as EnrollmentRecord;
    const marker = join(remote.user.home, `late-${process.pid}`);
    process.kill(rec.remote!.ssh_pid, 'SIGSTOP');
    let r;
    try {
      r = await callRun(mcp.client, l, `touch ${marker}`);
    } finally {
      process.kill(rec.remote!.ssh_pid, 'SIGCONT');
    }
    expect(r.isError).toBe(true);
    expect(r.structured.error.code).toBe('helper_unreachable');
    expect(r.structured.error.message).toMatch(/far end's helper/);
    // The link flows again: the request given up on is refused by the far end when it reads it
    // (its take-by time passed, on the far host's clock), and the pane serves the next call.
    const d = ok((await callRun(mcp.client, l, 'printf %s "$WHO"')).structured);
    expect(d.stdout.data).toBe('left');
    expect(existsSync(marker)).toBe(false);
  });

  it('a killed ssh: the pane is listed no more, the call fails, and no run is left on the host', async () => {
    const l = listing.get('right')!;
    const rec = JSON.parse(
      readFileSync(join(scope.server.registryDir, `${l.enrollment_generation}.json`), 'utf8'),
    ) as EnrollmentRecord;
    const marker = `sleep 301.${process.pid}`; // a command line of its own
    const call = callRun(mcp.client, l, marker);
    await waitUntil(
      () => userCmdlines(remote.user.uid).some((c) => c.includes(marker)),
      10_000,
      'the run started there',
    );
    process.kill(rec.remote!.ssh_pid, 'SIGKILL');
    const r = await call;
    expect(r.isError).toBe(true);
    expect(r.structured.error).toMatchObject({ code: 'session_ended', effects: { state: 'unknown' } });
    await waitUntil(async () => !(await remoteListings(mcp)).some((p) => p.pane_id === l.pane_id), 10_000, 'unlisted');
    await waitUntil(
      () => !userCmdlines(remote.user.uid).some((c) => c.includes(marker)),
      10_000,
      'the run stopped there',
    );
    // The local shell has its prompt back; the other session goes on.
    await panes[1]!.waitForPrompt();
    const d = ok((await callRun(mcp.client, listing.get('left')!, 'printf %s "$WHO"')).structured);
    expect(d.stdout.data).toBe('left');
    // A target of the ended session is refused, never retargeted.
    const again = await callRun(mcp.client, l, 'true');
    expect(again.isError).toBe(true);
    expect(again.structured.error).toMatchObject({ code: 'session_ended', delivery: 'not_sent' });
    expect(readdirSync(scope.server.registryDir).filter((n) => n.includes(l.enrollment_generation))).toEqual([]);
  });

  it('exit in the remaining session is not held up', async () => {
    await panes[0]!.type('exit', { enter: true });
    await panes[0]!.waitForPrompt();
    await waitUntil(async () => (await remoteListings(mcp)).length === 0 || undefined, 10_000, 'none listed');
  });

  it('a far end of another build is refused by name, and the session is an ordinary one', async () => {
    // The far end's build id as another build would have it (its bundle then is not used either).
    const file = join(remote.user.home, '.local/share/tmux-run/app/dist/generated/build-id.cjs');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/BUILD_ID = "[0-9a-f]+"/, `BUILD_ID = "${'0'.repeat(16)}"`));
    const pane = await scope.server.newPane();
    await pane.type(remote.sshLine(), { enter: true });
    const screen = await pane.waitFor((s) => s.includes('tmux-run: not enrolled'), 20_000);
    expect(screen).toContain(`the far end's tmux-run is build ${'0'.repeat(16)}`);
    expect(screen).toContain(`tmux-run setup --remote ${USER}`);
    expect(screen).toContain('remote_unavailable');
    expect(await remoteListings(mcp)).toEqual([]);
    await pane.type('echo still-$((2*21))', { enter: true });
    await pane.waitFor((s) => s.includes('still-42'));
    await pane.type('exit', { enter: true });
    await pane.waitForPrompt();
  });
});
