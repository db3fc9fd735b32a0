// A pane on another host, its trail and its endings: the far end's audit entries in the local
// trail with the host (the far end keeps its copy), the modes of the sockets at each end, nothing
// of the agent's in the remote history, who cannot stand in for the session (a live socket of
// another process beside it, the person's ControlMaster, another process of the remote user on the
// session's socket), a session through the person's ProxyJump, and the two endings a person meets
// besides `exit` and a killed ssh: a closed pane and a dropped network. In each, the pane is listed no more within seconds, calls are refused
// `session_ended`, and the far helper stops the process group of every run it started (checked by
// its pgid in /proc: the far end is this machine under another user).
import { describe, expect, it, beforeAll } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { chownSync, existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { useServer } from '../../lab/lifecycle.js';
import { callRun } from '../../lab/mcp.js';
import { auditEntries } from '../../lab/audit.js';
import { ok } from '../mcp/support.js';
import { waitUntil } from '../../lab/waiting.js';
import { groupGone, groupMembers } from '../../lab/processes.js';
import { CLI_BIN, productEnv } from '../../lab/product.js';
import { asUser, sshdAvailable } from './sshd.js';
import { encodeFrame } from '../../src/core/protocol/framing.js';
import { remoteListings, useRemote } from './support.js';
import { start, wait, runIdOf } from '../long/support.js';
import { LINK_SILENT_MS } from '../../src/core/enrollment/remote-link.js';
import type { Pane } from '../../lab/pane.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { PaneListing } from '../../src/broker/registry.js';

const run = promisify(execFile);
const skip = sshdAvailable();
const USER = 'trr-zsh-endings';
const PROMPT = 'far> ';

/** The ppid of a process, from /proc. */
const ppidOf = (pid: number): number => {
  const st = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
};

describe.skipIf(skip !== undefined)('a pane on another host: its trail and its endings', () => {
  const scope = useServer();
  const remote = useRemote(scope, USER, '/usr/bin/zsh', {
    file: '.zshrc',
    text: `PROMPT='${PROMPT}'\nHISTFILE=~/.zsh_history\nSAVEHIST=100\nHISTSIZE=100\n`,
  });
  let mcp: McpHandle;

  beforeAll(async () => {
    await remote.cli(['setup', '--remote', '-F', remote.sshd.clientConfig, USER]);
    mcp = await scope.startMcp();
  });

  /** The far end's forward directory, as the host's record here says. */
  function forwardDir(): string {
    const dir = join(scope.server.home, '.local/state/tmux-run/hosts');
    return (JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]!), 'utf8')) as { forward_dir: string }).forward_dir;
  }

  /** A new local pane with a `tmux-run ssh` session (extra ssh options first), its far end listed. */
  async function session(options = ''): Promise<{ pane: Pane; listing: PaneListing }> {
    const pane = await scope.server.newPane();
    const line = remote.sshLine().replace(' ssh ', ` ssh ${options} `);
    await pane.type(line, { enter: true });
    await pane.waitFor((s) => s.split('\n').some((l) => l === PROMPT.trimEnd()), 20_000);
    const listing = await waitUntil(
      async () => (await remoteListings(mcp)).find((p) => p.pane_id === pane.id),
      15_000,
      'the far end listed',
    );
    return { pane, listing };
  }

  /** A `sleep 1000` started with tmux_run_start at the far end: its run id and process group (its `sh -c`'s pid there). */
  async function sleeper(listing: PaneListing, tag: string): Promise<{ runId: string; pgid: number }> {
    const file = join(remote.user.home, `pgid-${tag}-${process.pid}`);
    rmSync(file, { force: true }); // the user's home may outlive a test run
    const s = await start(mcp.client, listing, `echo $$ > ${file}; sleep 1000`, { wait_ms: 0 });
    const runId = runIdOf(s);
    const pgid = await waitUntil(
      () => (existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) || undefined : undefined),
      10_000,
      'the run started there',
    );
    expect(groupMembers(pgid).length).toBeGreaterThan(0);
    return { runId, pgid };
  }

  it("a run's entries reach the local trail with the host, the far end keeps its copy, and tmux-run log shows the host", async () => {
    const hist = join(remote.user.home, '.zsh_history');
    rmSync(hist, { force: true }); // the user's home may outlive a test run
    const { pane, listing } = await session();
    // The modes at each end while the session lives: the far forward directory and its socket, the relay's.
    const forward = forwardDir();
    const fst = statSync(forward);
    expect([fst.mode & 0o777, fst.uid]).toEqual([0o700, remote.user.uid]);
    const socks = readdirSync(forward).filter((n) => n.endsWith('.sock'));
    expect(socks.length).toBeGreaterThan(0);
    for (const n of socks) expect(statSync(join(forward, n)).mode & 0o777).toBe(0o600);
    const priv = readdirSync(scope.server.registryDir).filter((n) => n.startsWith('ssh.'));
    expect(priv).toHaveLength(1);
    expect(statSync(join(scope.server.registryDir, priv[0]!)).mode & 0o777).toBe(0o700);
    expect(statSync(join(scope.server.registryDir, priv[0]!, 'l.sock')).mode & 0o777).toBe(0o600);

    const r = ok((await callRun(mcp.client, listing, 'echo audited; exit 4')).structured);
    const runId = r.authorization.run_id as string;
    const host = { destination: USER, name: listing.host!.name };
    const local = await waitUntil(
      () => {
        const es = auditEntries(scope.server).filter((e) => e.run_id === runId);
        return es.some((e) => e.event === 'end') ? es : undefined;
      },
      10_000,
      'the end entry here',
    );
    expect(local.map((e) => e.event)).toEqual(['start', 'end']);
    for (const e of local)
      expect(e).toMatchObject({ pane_id: pane.id, host, script_digest: r.authorization.script_digest });
    expect(local[1]).toMatchObject({ outcome: 'exited', exit_status: 4 });
    expect(JSON.stringify(local)).not.toContain('echo audited');
    // The far end's own copy (the remote user's trail), without a host.
    const far = readFileSync(join(remote.user.home, '.local/state/tmux-run/audit.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => e.run_id === runId);
    expect(far.map((e) => e.event)).toEqual(['start', 'end']);
    expect(far.every((e) => e.host === undefined)).toBe(true);
    // The person's view.
    const log = await run(process.execPath, [CLI_BIN, 'log', '--run', runId.slice(0, 8)], {
      env: productEnv(scope.server),
      encoding: 'utf8',
    });
    expect(log.stdout).toContain(`${pane.id}@${host.name}`);
    const json = await run(process.execPath, [CLI_BIN, 'log', '--json', '--run', runId], {
      env: productEnv(scope.server),
      encoding: 'utf8',
    });
    expect(
      json.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { host: unknown }).host),
    ).toEqual([host, host]);

    // Nothing of the agent's in the remote history: the person's line is there, the script is not.
    const marker = `agent-marker-${process.pid}`;
    ok((await callRun(mcp.client, listing, `echo ${marker}`)).structured);
    await pane.type(`echo typed-by-the-person-${process.pid}`, { enter: true });
    await pane.waitFor((s) => s.includes(`\ntyped-by-the-person-${process.pid}`));
    // A run still going when the person types exit: stopped, and its end entry still reaches here.
    const held = await sleeper(listing, 'exit');
    await pane.type('exit', { enter: true });
    await pane.waitForPrompt(); // exit is not held up
    await groupGone(held.pgid, 10_000);
    const stoppedEnd = await waitUntil(
      () => auditEntries(scope.server).find((e) => e.run_id === held.runId && e.event === 'end'),
      10_000,
      "the stopped run's end entry here",
    );
    expect(stoppedEnd).toMatchObject({ pane_id: pane.id, host, outcome: 'shell_exited' });
    const text = await waitUntil(
      () =>
        existsSync(hist) && readFileSync(hist, 'utf8').includes(`typed-by-the-person-${process.pid}`)
          ? readFileSync(hist, 'utf8')
          : undefined,
      10_000,
      'the history written',
    );
    expect(text).not.toContain(marker);
    expect(text).not.toContain('pgid-');
    await waitUntil(async () => !(await remoteListings(mcp)).some((p) => p.pane_id === pane.id), 10_000, 'unlisted');
  });

  it("a live socket of another process beside the session's, and the person's ControlMaster, cannot stand in for the session", async () => {
    // A process of the remote user listening on a socket named as a session's, made just before the
    // session (so the start-up line's age filter keeps it): the helper connects, finds that its
    // listener is not its own sshd, and says nothing to it.
    const forward = forwardDir();
    const fake = join(forward, `${'f'.repeat(32)}.sock`);
    const heard = join(remote.user.home, `impostor-${process.pid}`);
    rmSync(fake, { force: true });
    const impostor = spawn(
      '/usr/sbin/runuser',
      [
        '-u',
        USER,
        '--',
        'python3',
        '-c',
        `import socket\ns=socket.socket(socket.AF_UNIX)\ns.bind('${fake}')\ns.listen(8)\nwhile True:\n c,_=s.accept()\n d=c.recv(65536)\n open('${heard}','ab').write(b'connection:'+d+b'\\n')\n c.close()\n`,
      ],
      { stdio: 'ignore' },
    );
    // The person's own shared master to the same host, live.
    const master = `/tmp/trr-cm-${process.pid}`;
    await run('/usr/bin/ssh', ['-F', remote.sshd.clientConfig, '-M', '-S', master, '-fN', USER]);
    try {
      await waitUntil(() => existsSync(fake) || undefined, 10_000, 'the impostor listening');
      await run('/usr/bin/ssh', ['-F', remote.sshd.clientConfig, '-S', master, '-O', 'check', USER]);
      // Enrolled at all means the forward came through this session's own ssh client: through the
      // master, the relay's peer would be the master's ssh, not its child, and nothing would enroll.
      const { pane, listing } = await session(`-o ControlMaster=auto -o ControlPath=${master}`);
      const d = ok((await callRun(mcp.client, listing, 'id -un')).structured);
      expect(d.stdout.data).toBe(`${USER}\n`);
      const said = existsSync(heard) ? readFileSync(heard, 'utf8') : '';
      expect(said.replace(/connection:\n/g, '')).toBe(''); // at most connected to, never spoken to
      await pane.type('exit', { enter: true });
      await pane.waitForPrompt();
    } finally {
      impostor.kill('SIGKILL');
      await run('/usr/bin/ssh', ['-F', remote.sshd.clientConfig, '-S', master, '-O', 'exit', USER]).catch(() => {});
      rmSync(fake, { force: true });
    }
  });

  it("through the person's ProxyJump (ssh -J): enrolled, a run as the remote user, exit not held", async () => {
    // The jump is the same sshd (the host's own alias): the forwarded socket still belongs to the
    // session's own ssh client, the jump's `ssh -W` beside it carries only the connection.
    const { pane, listing } = await session(`-J ${USER}`);
    const d = ok((await callRun(mcp.client, listing, 'id -un; echo "$SSH_CONNECTION" >&2')).structured);
    expect(d.completion).toEqual({ state: 'exited', exit_status: 0, signal: null });
    expect(d.stdout.data).toBe(`${USER}\n`);
    expect(d.stderr.data).toMatch(/^127\.0\.0\.1 \d+ 127\.0\.0\.1 \d+\n$/);
    await pane.type('exit', { enter: true });
    await pane.waitForPrompt();
    await waitUntil(async () => !(await remoteListings(mcp)).some((p) => p.pane_id === pane.id), 10_000, 'unlisted');
  });

  it("another process of the remote user on the session's socket can write no audit entry here and gets no data link", async () => {
    const { pane, listing } = await session();
    const forged = 'f'.repeat(32);
    const frames = join(remote.user.home, `frames-${process.pid}`);
    const got = join(remote.user.home, `got-${process.pid}`);
    // Each frame on a connection of its own, as the first thing said on it: an audit entry (only the
    // control link may carry one), a data link with a key that is not the enrollment's.
    const list = [
      encodeFrame({ type: 'audit', entry: { event: 'start', run_id: forged, outcome: 'started' } }),
      encodeFrame({ type: 'data', key: '0'.repeat(32) }),
    ];
    writeFileSync(
      frames,
      Buffer.concat(list.map((f) => Buffer.concat([Buffer.from([f.length >> 8, f.length & 255]), f]))),
    );
    chownSync(frames, remote.user.uid, remote.user.uid);
    const script = [
      'import socket, os, glob',
      `data = open('${frames}', 'rb').read()`,
      'frames = []',
      'while data:',
      '  n = data[0] * 256 + data[1]; frames.append(data[2:2 + n]); data = data[2 + n:]',
      'out = []',
      `for path in glob.glob('${forwardDir()}/*.sock'):`,
      '  for f in frames:',
      '    s = socket.socket(socket.AF_UNIX)',
      '    try:',
      '      s.connect(path)',
      '    except OSError:',
      '      break',
      '    s.sendall(f); s.settimeout(5)',
      '    try:',
      "      r = 'closed' if s.recv(65536) == b'' else 'answered'",
      '    except socket.timeout:',
      "      r = 'open'",
      '    except OSError:',
      "      r = 'closed'",
      "    out.append('%s %s' % (os.path.basename(path), r))",
      '    s.close()',
      `open('${got}', 'w').write('\\n'.join(out))`,
    ].join('\n');
    asUser(remote.user, ['python3', '-c', script]);
    const answers = readFileSync(got, 'utf8').split('\n').filter(Boolean);
    expect(answers.length).toBeGreaterThanOrEqual(2); // the live session's socket, each frame
    for (const a of answers) expect(a).toMatch(/ closed$/); // nothing answered: the relay dropped the connection
    await new Promise((r) => setTimeout(r, 300));
    expect(auditEntries(scope.server).filter((e) => e.run_id === forged)).toEqual([]);
    // The session goes on.
    expect(ok((await callRun(mcp.client, listing, 'echo still')).structured).stdout.data).toBe('still\n');
    await pane.type('exit', { enter: true });
    await pane.waitForPrompt();
  });

  it('a closed pane: unlisted within seconds, calls refused session_ended, no run left on the host', async () => {
    const { pane, listing } = await session();
    const held = await sleeper(listing, 'closed');
    const marker = join(remote.user.home, `queued-${process.pid}`);
    const queued = callRun(mcp.client, listing, `touch ${marker}`); // behind the sleep, in the far end's queue
    await new Promise((r) => setTimeout(r, 300));
    await scope.server.tmux(['kill-pane', '-t', pane.id]);
    const q = await queued;
    expect(q.isError).toBe(true);
    expect(q.structured.error).toMatchObject({ code: 'session_ended', effects: { state: 'unknown' } });
    expect(['possibly_sent', 'observed']).toContain(q.structured.error.delivery);
    expect(q.structured.error.message).toMatch(/ssh session to trr-zsh-endings/);
    await waitUntil(async () => !(await remoteListings(mcp)).some((p) => p.pane_id === pane.id), 10_000, 'unlisted');
    await groupGone(held.pgid, 10_000);
    const w = await wait(mcp.client, listing, held.runId, 0);
    expect(w.error).toMatchObject({ code: 'session_ended', delivery: 'not_sent', effects: { state: 'none' } });
    const again = await callRun(mcp.client, listing, 'true');
    expect(again.structured.error).toMatchObject({ code: 'session_ended', delivery: 'not_sent' });
    expect(existsSync(marker)).toBe(false);
    await waitUntil(
      () => readdirSync(scope.server.registryDir).every((n) => !n.startsWith('ssh.')) || undefined,
      10_000,
      "the relay's private directory removed",
    );
  });

  it('a dropped network: the client gives up, the pane is unlisted, calls refused, and the far helper stops its runs on its own', async () => {
    // What a person's drop looks like: the far host stops answering and the local ssh notices by its
    // keep-alive (ServerAliveInterval) and exits, while the far sshd, which gets no FIN, notices
    // nothing for a long time (no ClientAliveInterval in a stock sshd_config). Played by stopping this
    // session's sshd processes at the far end (the user's `sshd: USER@pts/N` and its privileged monitor).
    const { pane, listing } = await session('-o ServerAliveInterval=1 -o ServerAliveCountMax=2');
    const held = await sleeper(listing, 'dropped');
    const sshdUser = ppidOf(listing.shell_pid);
    const sshdMonitor = ppidOf(sshdUser);
    const stopped = [sshdMonitor, sshdUser];
    for (const p of stopped) process.kill(p, 'SIGSTOP');
    try {
      await pane.waitForPrompt(30_000); // the local ssh gave up: the person's shell is back
      await waitUntil(async () => !(await remoteListings(mcp)).some((p) => p.pane_id === pane.id), 10_000, 'unlisted');
      const w = await wait(mcp.client, listing, held.runId, 0);
      expect(w.error).toMatchObject({ code: 'session_ended', delivery: 'not_sent', effects: { state: 'none' } });
      expect(w.error.message).toMatch(/stops the process group of every run it started/);
      // The far end hears no beat on its link: it ends and stops the run, its sshd still stopped.
      await groupGone(held.pgid, LINK_SILENT_MS + 15_000);
      expect(stopped.every((p) => readFileSync(`/proc/${p}/stat`, 'latin1').includes(') T '))).toBe(true);
    } finally {
      for (const p of stopped) {
        try {
          process.kill(p, 'SIGCONT');
        } catch {
          /* gone */
        }
      }
    }
  });

  it('doctor says remote_unavailable for a host set up with another build, with the fix', async () => {
    const dir = join(scope.server.home, '.local/state/tmux-run/hosts');
    const file = join(dir, readdirSync(dir)[0]!);
    const before = readFileSync(file, 'utf8');
    writeFileSync(file, before.replace(/"build": "[0-9a-f]+"/, `"build": "${'0'.repeat(16)}"`));
    try {
      const r = await run(process.execPath, [CLI_BIN, 'doctor', '--json'], {
        env: productEnv(scope.server),
        encoding: 'utf8',
      }).catch((e: { stdout: string }) => e);
      const hosts = (
        JSON.parse(r.stdout) as Array<{ check: string; detail: string; fix: string; warning?: boolean }>
      ).find((c) => c.check === 'hosts')!;
      expect(hosts).toMatchObject({ warning: true });
      expect(hosts.detail).toContain(`remote_unavailable: ${USER} has build ${'0'.repeat(16)}`);
      expect(hosts.fix).toContain(`tmux-run setup --remote ${USER}`);
    } finally {
      writeFileSync(file, before);
    }
  });
});
