// Walls around a run (continued from test/sandbox/escape.test.ts): what a sandboxed script must
// not reach — the person's secrets and sockets, the network, the person's processes — and the
// links (hard and symbolic) that must open no way. Each check is known to be able to fail where it
// costs one more run (the same script with the sandbox off gets out).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createSocket } from 'node:dgram';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { socketPath } from '../../src/core/enrollment/layout.js';
import { helperChildren } from '../../lab/enrollment.js';
import { killHard, processAlive } from '../../lab/processes.js';
import { waitUntil } from '../../lab/waiting.js';
import {
  connectCommand,
  expectSandboxRefusal,
  fresh,
  listen,
  observed,
  processesWith,
  sleepsOf,
  startRun,
  ran,
  textOf,
  uniqueSleep,
} from './support.js';

import { gitInit, out, psOf, useEscapeFixture } from './escape-support.js';

const { fx, sockets } = useEscapeFixture();

describe('sandbox: secrets and the person’s sockets', () => {
  it('cannot read ~/.ssh/id_ed25519 or the other credential files (off: it can)', async () => {
    const { server, secrets } = fx();
    const others: Array<[string, string]> = [
      ['.aws/credentials', 'AWS-SECRET'],
      ['.netrc', 'NETRC-SECRET'],
      ['.config/gh/hosts.yml', 'GH-SECRET'],
      ['.gnupg/private-keys-v1.d/k.key', 'GPG-SECRET'],
      ['.kube/config', 'KUBE-SECRET'],
      ['.docker/config.json', 'DOCKER-SECRET'],
    ];
    for (const [rel, text] of others) {
      mkdirSync(dirname(join(server.home, rel)), { recursive: true, mode: 0o700 });
      writeFileSync(join(server.home, rel), `${text}\n`, { mode: 0o600 });
    }
    const proj = fx().project();
    const script = [
      'cat ~/.ssh/id_ed25519; ls -la ~/.ssh; cp ~/.ssh/id_ed25519 ./stolen',
      ...others.map(([rel]) => `cat ~/${rel}`),
      `cat "$XDG_RUNTIME_DIR/keyring-secret"`,
      'true',
    ].join('\n');
    const secretLine = secrets.keyText.split('\n')[1] as string;

    await fx().sandbox('off', proj);
    expect(out(ran(await fx().run(script)))).toContain(secretLine);
    rmSync(join(proj, 'stolen'));

    await fx().sandbox('workspace', proj);
    const d = ran(await fx().run(script));
    observed(expect.getState().currentTestName ?? '', d);
    expect(out(d)).not.toContain(secretLine);
    for (const [, text] of others) expect(out(d)).not.toContain(text);
    expect(out(d)).not.toContain('RUNTIME-SECRET');
    expect(textOf(join(proj, 'stolen')) ?? '').not.toContain(secretLine);
  });

  it('cannot undo the walls from inside (no capabilities; umount, remount read-write, also in a nested user and mount namespace)', async () => {
    const { server, secrets } = fx();
    const proj = fx().project();
    const planted = join(server.home, fresh('planted'));
    const undo = [
      'umount ~/.ssh; umount -l ~/.ssh',
      `mount -o remount,rw /; mount -o remount,bind,rw "${server.home}"`,
      'cat ~/.ssh/id_ed25519',
      `echo x > "${planted}"; echo "write $?"`,
    ].join('; ');
    const script = [
      'grep -E "^(CapEff|NoNewPrivs)" /proc/self/status',
      `sh -c '${undo}'`,
      `unshare --user --map-root-user --mount sh -c '${undo}'; echo "unshare $?"`,
      'true',
    ].join('\n');
    await fx().sandbox('workspace', proj);
    const d = ran(await fx().run(script));
    observed(expect.getState().currentTestName ?? '', d);
    expect(out(d)).not.toContain(secrets.keyText.split('\n')[1]);
    expect(existsSync(planted)).toBe(false);
    // No capability at all, also when the person (or CI) is root: bwrap run by root keeps them unless told.
    expect(d.stdout.data).toMatch(/^CapEff:\s+0+$/m);
    // No new privileges: a setuid program raises none.
    expect(d.stdout.data).toMatch(/^NoNewPrivs:\s+1$/m);
  });

  it('cannot type into the person’s pane with tmux -S <the real socket> send-keys', async () => {
    const { server, pane } = fx();
    const proj = fx().project();
    const probe = `tmux -S '${server.socket}' display -p -t '${pane.id}' 'reached #{pane_id}'`;
    await fx().sandbox('off', proj);
    expect(ran(await fx().run(probe)).stdout.data).toBe(`reached ${pane.id}\n`);

    await fx().sandbox('workspace', proj);
    const paneTty = (await server.tmux(['display-message', '-p', '-t', pane.id, '#{pane_tty}'])).trim();
    const screenBefore = await pane.capture();
    const token = fresh('PWNED');
    const d = ran(
      await fx().run(
        [
          probe,
          `tmux -S '${server.socket}' send-keys -t '${pane.id}' 'echo ${token}' Enter; echo "send $?"`,
          `tmux send-keys -t "$TMUX_PANE" 'echo ${token}' Enter; echo "send-env $?"`,
          `tmux -S "\${TMUX%%,*}" send-keys 'echo ${token}' Enter; echo "send-tmux-var $?"`,
          `ls -la '${dirname(server.socket)}'`,
          `echo 'echo ${token}' > '${paneTty}'; echo "tty $?"`,
          'true',
        ].join('\n'),
      ),
    );
    observed(expect.getState().currentTestName ?? '', d);
    expect(d.stdout.data).not.toContain('reached');
    expect(d.stdout.data).toMatch(/^send [1-9]/m);
    expect(d.stdout.data).toMatch(/^send-env [1-9]/m);
    expect(d.stdout.data).toMatch(/^send-tmux-var [1-9]/m);
    expect(d.stdout.data).toMatch(/^tty [1-9]/m);
    expect(await pane.capture()).toBe(screenBefore);
    expect(screenBefore).not.toContain(token);
  });

  // A socket file outside the hidden places stays reachable (docs/sandbox.md: add it to TMUX_RUN_SANDBOX_HIDE):
  // the remedy docs/sandbox.md gives must hold.
  it('cannot type into another tmux server of the person’s once its socket is in TMUX_RUN_SANDBOX_HIDE (off: it can)', async () => {
    const { server } = fx();
    const dir = join(server.home, '.tmux');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const other = join(dir, fresh('other'));
    const tmux = (...args: string[]): string =>
      execFileSync('tmux', ['-S', other, '-f', '/dev/null', ...args], { env: server.env, encoding: 'utf8' });
    tmux('new-session', '-d', '-s', 'other', '-x', '80', '-y', '20', 'sleep 600');
    fx().scope.defer(() => {
      try {
        tmux('kill-server');
      } catch {
        // gone already
      }
    });
    const probe = `tmux -S '${other}' display -p -t other 'reached #{session_name}'`;
    await fx().sandbox('off', fx().project());
    expect(ran(await fx().run(probe)).stdout.data).toBe('reached other\n');
    const before = tmux('capture-pane', '-p', '-t', 'other');
    await fx().type(`TMUX_RUN_SANDBOX=workspace TMUX_RUN_SANDBOX_HIDE=('${join(server.home, '.ssh')}' '${other}')`);
    const token = fresh('PWNED');
    const d = ran(
      await fx().run(`${probe}\ntmux -S '${other}' send-keys -t other 'echo ${token}' Enter; echo "send $?"`),
    );
    observed(expect.getState().currentTestName ?? '', d);
    await fx().type('unset TMUX_RUN_SANDBOX_HIDE');
    expect(d.stdout.data).not.toContain('reached');
    expect(d.stdout.data).toMatch(/^send [1-9]/m);
    expect(tmux('capture-pane', '-p', '-t', 'other')).toBe(before);
  });

  it('cannot read an enrollment record or connect to a helper socket (off: it can)', async () => {
    const { server, listing } = fx();
    const proj = fx().project();
    const sock = socketPath(server.registryDir, listing.enrollment_generation);
    expect(statSync(sock).isSocket()).toBe(true);
    const script = [
      `cat '${server.registryDir}/${listing.enrollment_generation}.json'; echo`,
      `ls '${server.registryDir}'`,
      connectCommand(`'${sock}'`),
      connectCommand(`"$TMUX_RUN_DIR/${listing.enrollment_generation}.sock"`),
    ].join('\n');
    await fx().sandbox('off', proj);
    const control = ran(await fx().run(script));
    expect(control.stdout.data).toContain(listing.pane_id);
    expect(control.stdout.data).toContain('CONNECTED');

    await fx().sandbox('workspace', proj);
    const d = ran(await fx().run(script));
    observed(expect.getState().currentTestName ?? '', d);
    expect(d.stdout.data).not.toContain(listing.enrollment_generation);
    expect(d.stdout.data).not.toContain('CONNECTED');
    expect(d.stdout.data).toMatch(/REFUSED/);
  });

  it('cannot use SSH_AUTH_SOCK or the session bus (off: it can)', async () => {
    const proj = fx().project();
    const script = [
      'echo "agent=$SSH_AUTH_SOCK"',
      connectCommand('"$SSH_AUTH_SOCK"'),
      connectCommand('"${DBUS_SESSION_BUS_ADDRESS#unix:path=}"'),
    ].join('\n');
    await fx().sandbox('off', proj);
    const before = [sockets().agent.connections, sockets().bus.connections];
    expect(ran(await fx().run(script)).stdout.data).toMatch(/CONNECTED\nCONNECTED/);
    await waitUntil(
      () => sockets().agent.connections > before[0]! && sockets().bus.connections > before[1]!,
      5000,
      'the listeners to count',
    );

    await fx().sandbox('workspace', proj);
    const seen = [sockets().agent.connections, sockets().bus.connections];
    const d = ran(await fx().run(script));
    observed(expect.getState().currentTestName ?? '', d);
    expect(d.stdout.data).not.toContain('CONNECTED');
    expect([sockets().agent.connections, sockets().bus.connections]).toEqual(seen);
  });
});

describe('sandbox: network', () => {
  it('workspace cannot reach a listener on 127.0.0.1 or a host abstract socket; workspace+net reaches 127.0.0.1', async () => {
    const tcp = await listen('127.0.0.1');
    const abstract = await listen(`\0${fresh('tmux-run-sbtests')}`);
    fx().scope.defer(() => tcp.close());
    fx().scope.defer(() => abstract.close());
    const proj = fx().project();
    const script = `${connectCommand(`'${tcp.address}'`)}\n${connectCommand(`'${abstract.address}'`)}`;

    await fx().sandbox('off', proj);
    expect(ran(await fx().run(script)).stdout.data).toBe('CONNECTED\nCONNECTED\n');
    await waitUntil(() => tcp.connections === 1 && abstract.connections === 1, 5000, 'the listeners to count');

    await fx().sandbox('workspace', proj);
    const d = ran(await fx().run(script));
    observed(expect.getState().currentTestName ?? '', d);
    expect(d.stdout.data).toMatch(/^REFUSED \S+\nREFUSED \S+\n$/);
    expect([tcp.connections, abstract.connections]).toEqual([1, 1]);

    // UDP to the host: nothing arrives.
    const got: string[] = [];
    const udp = createSocket('udp4');
    udp.on('message', (m) => got.push(m.toString()));
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
    fx().scope.defer(() => new Promise<void>((r) => udp.close(() => r())));
    const send = (text: string): string =>
      `node -e "const s=require('dgram').createSocket('udp4');s.send('${text}',${udp.address().port},'127.0.0.1',e=>{console.log(e?'UDP '+e.code:'UDP sent');s.close()})"`;
    observed('udp', ran(await fx().run(send('from-workspace'))));
    await fx().sandbox('off');
    ran(await fx().run(send('from-off')));
    await waitUntil(() => got.includes('from-off'), 5000, 'the unconfined datagram');
    expect(got).toEqual(['from-off']);

    await fx().sandbox('workspace+net', proj);
    expect(ran(await fx().run(connectCommand(`'${tcp.address}'`))).stdout.data).toBe('CONNECTED\n');
    await waitUntil(() => tcp.connections === 2, 5000, 'the listener to count');
  });
});

describe('sandbox: the session bus at an abstract address', () => {
  it('workspace+net cannot reach the bus DBUS_SESSION_BUS_ADDRESS names as unix:abstract= (off: it can)', async () => {
    const name = fresh('tmux-run-sbtests-bus');
    const abstractBus = await listen(`\0${name}`);
    fx().scope.defer(() => abstractBus.close());
    const proj = fx().project();
    const script = `a=\${DBUS_SESSION_BUS_ADDRESS#unix:abstract=}; a=\${a%%,*}\n${connectCommand('"@$a"')}`;
    await fx().type(`cd '${proj}' && export DBUS_SESSION_BUS_ADDRESS='unix:abstract=${name},guid=0123456789abcdef'`);
    try {
      await fx().sandbox('off');
      expect(ran(await fx().run(script)).stdout.data).toBe('CONNECTED\n');
      await waitUntil(() => abstractBus.connections === 1, 5000, 'the bus to count');
      await fx().sandbox('workspace+net');
      const s = await fx().run(script);
      // Refusing the run (sandbox_unavailable) holds the wall too; a run that starts must not reach the bus.
      if (s.ok === false) expectSandboxRefusal(s);
      else {
        observed(expect.getState().currentTestName ?? '', s.data);
        expect(s.data.stdout.data).not.toContain('CONNECTED');
      }
      expect(abstractBus.connections).toBe(1);
    } finally {
      await fx().type(`export DBUS_SESSION_BUS_ADDRESS='unix:path=${sockets().bus.address}'`);
    }
  });
});

describe('sandbox: processes', () => {
  it('cannot see or signal the person’s shell, its helper or the tmux server (off: kill -0 works)', async () => {
    const { pane, server } = fx();
    const shellPid = await pane.shellPid();
    const [helperPid] = helperChildren(shellPid);
    expect(helperPid).toBeDefined();
    const tmuxPid = await server.serverPid();
    const proj = fx().project();
    await fx().sandbox('off', proj);
    expect(ran(await fx().run(`kill -0 ${shellPid}; echo "kill0 $?"`)).stdout.data).toBe('kill0 0\n');

    await fx().sandbox('workspace', proj);
    const d = ran(
      await fx().run(
        [
          ...[shellPid, helperPid, tmuxPid].map((p) => `kill -0 ${p}; echo "kill0 ${p} $?"`),
          `kill -TERM ${shellPid}; echo "term $?"`,
          `cat /proc/${shellPid}/environ /proc/${shellPid}/cmdline >/dev/null; echo "proc $?"`,
          `echo "pids $(ls -d /proc/[0-9]* | wc -l)"`,
        ].join('\n'),
      ),
    );
    observed(expect.getState().currentTestName ?? '', d);
    for (const p of [shellPid, helperPid, tmuxPid]) expect(d.stdout.data).toMatch(new RegExp(`^kill0 ${p} [1-9]`, 'm'));
    expect(d.stdout.data).toMatch(/^term [1-9]/m);
    expect(d.stdout.data).toMatch(/^proc [1-9]/m);
    expect(Number(/^pids (\d+)/m.exec(d.stdout.data)?.[1])).toBeLessThan(10);
    expect(processAlive(shellPid) && processAlive(tmuxPid) && processAlive(helperPid!)).toBe(true);
    expect(await pane.run('echo alive')).toBe('alive');
  });

  it('a setsid sleep 600 & (or nohup, or a double fork) left behind is gone when the run ends (off: it stays)', async () => {
    const proj = fx().project();
    const durations = [uniqueSleep(), uniqueSleep(), uniqueSleep()];
    const script = (ds: string[]): string =>
      [
        `setsid sleep ${ds[0]} </dev/null >/dev/null 2>&1 &`,
        `nohup sleep ${ds[1]} </dev/null >/dev/null 2>&1 &`,
        `( setsid sleep ${ds[2]} </dev/null >/dev/null 2>&1 & ) &`,
        'sleep 0.2; echo left',
      ].join('\n');

    const offDurations = [uniqueSleep(), uniqueSleep(), uniqueSleep()];
    await fx().sandbox('off', proj);
    ran(await fx().run(script(offDurations)));
    const survivors = offDurations.flatMap((d) => processesWith(`sleep ${d}`));
    expect(survivors.length, 'off: the setsid sleep survives its run').toBeGreaterThan(0);
    for (const pid of survivors) killHard(pid);

    await fx().sandbox('workspace', proj);
    expect(ran(await fx().run(script(durations))).stdout.data).toBe('left\n');
    const left = [...new Set(durations.flatMap((d) => processesWith(`sleep ${d}`)))];
    if (left.length > 0) {
      // Say what was left and whether it went soon after: bwrap's outer process exits as soon as
      // its init reports the first child's status, before the kernel has ended the namespace's
      // other processes, so a run can be reported ended while its leftovers still run.
      const ps = psOf(left);
      const later = await waitUntil(() => left.every((pid) => !processAlive(pid)), 2000).then(
        () => 'all gone within 2 s',
        () => 'still there 2 s later',
      );
      for (const pid of left) killHard(pid);
      expect.fail(`left behind when the run ended (${later}):\n${ps}`);
    }
  });

  it('a helper killed with SIGKILL takes its sandboxed run (and what the run left in its own session) with it', async () => {
    const { pane: extra, listing } = await fx().extraPane();
    try {
      const proj = fx().project();
      await extra.run(`cd '${proj}' && TMUX_RUN_SANDBOX=workspace`);
      const [detached, inGroup] = [uniqueSleep(), uniqueSleep()];
      const s = await startRun(
        fx().mcp.client,
        listing,
        `setsid sleep ${detached} </dev/null >/dev/null 2>&1 &\nsleep ${inGroup}`,
        {
          wait_ms: 0,
        },
      );
      expect(s.pending, JSON.stringify(s)).toBeDefined();
      // The sleeps themselves: bwrap's own argv holds the script, so matching it would kill the
      // helper before the sandbox exists, and the test would not test a running sandbox.
      await waitUntil(
        () => sleepsOf(detached).length > 0 && sleepsOf(inGroup).length > 0,
        10_000,
        'the sandboxed sleeps to start',
      );
      const shellPid = await extra.shellPid();
      const [helperPid] = helperChildren(shellPid);
      expect(helperPid).toBeDefined();
      killHard(helperPid!);
      await waitUntil(
        () => [detached, inGroup].every((d) => processesWith(`sleep ${d}`).length === 0),
        10_000,
        'the sandboxed run to end with its helper',
      ).catch((e: Error) => {
        const left = [...new Set([detached, inGroup].flatMap((d) => processesWith(`sleep ${d}`)))];
        const ps = left.length === 0 ? '' : psOf(left);
        for (const pid of left) killHard(pid);
        const helper = `helper ${helperPid} ${processAlive(helperPid!) ? 'still alive' : 'gone'}`;
        throw new Error(`${e.message}; ${helper}; still running:\n${ps}`);
      });
    } finally {
      await extra.kill();
    }
  });
});

describe('sandbox: hard links', () => {
  it('a hard link made in the cwd to ~/.zshrc or to the repository’s .git/config opens no way', async () => {
    const { server } = fx();
    const repo = fx().project('repo');
    gitInit(server, repo);
    const zshrc = join(server.home, '.zshrc');
    const before = [textOf(zshrc), textOf(join(repo, '.git', 'config'))];
    await fx().sandbox('workspace', repo);
    const d = ran(
      await fx().run(
        [
          `ln '${zshrc}' z && echo evil >> z; echo "zshrc $?"`,
          `ln .git/config c && echo '[core] fsmonitor = evil' >> c; echo "config $?"`,
          'true',
        ].join('\n'),
      ),
    );
    observed(expect.getState().currentTestName ?? '', d);
    expect([textOf(zshrc), textOf(join(repo, '.git', 'config'))]).toEqual(before);
  });
});

describe('sandbox: symlinks', () => {
  it('a symlink in the cwd pointing at ~/.ssh, ~/.zshrc or outside opens no way (off: it does)', async () => {
    const { server, secrets } = fx();
    const proj = fx().project();
    const outside = join(server.home, fresh('outside'));
    mkdirSync(outside);
    symlinkSync(join(server.home, '.ssh'), join(proj, 'ssh'));
    symlinkSync(outside, join(proj, 'out'));
    symlinkSync(join(server.home, '.zshrc'), join(proj, 'zrc'));
    const zshrcBefore = textOf(join(server.home, '.zshrc'));
    const script = [
      'cat ssh/id_ed25519',
      'echo x > out/planted; echo "out $?"',
      `ln -s ~/.ssh/id_ed25519 mine && cat mine`,
      `ln -s / root && echo x > "root${outside}/planted2"; echo "root $?"`,
      'true',
    ].join('\n');
    const secretLine = secrets.keyText.split('\n')[1] as string;

    await fx().sandbox('off', proj);
    expect(out(ran(await fx().run(script)))).toContain(secretLine);
    expect(existsSync(join(outside, 'planted'))).toBe(true);
    rmSync(join(outside, 'planted'));
    rmSync(join(outside, 'planted2'));
    rmSync(join(proj, 'mine'));
    rmSync(join(proj, 'root'));

    await fx().sandbox('workspace', proj);
    const d = ran(await fx().run(`${script}\necho 'evil' >> zrc; echo "zrc $?"`));
    observed(expect.getState().currentTestName ?? '', d);
    expect(out(d)).not.toContain(secretLine);
    expect(existsSync(join(outside, 'planted'))).toBe(false);
    expect(existsSync(join(outside, 'planted2'))).toBe(false);
    expect(textOf(join(server.home, '.zshrc'))).toBe(zshrcBefore);
    expect(d.stdout.data).toMatch(/^out [1-9]/m);
  });
});
