// The harness itself: the private sshd takes a key login with `ssh -F`, and forwards a Unix
// socket with `ssh -R` (what tmux-run ssh rides on).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asUser, sshdAvailable, startSshd, type Sshd } from './sshd.js';
import { waitUntil } from '../../lab/waiting.js';

const skip = sshdAvailable();

describe.skipIf(skip !== undefined)('the test sshd', () => {
  let sshd: Sshd;
  beforeAll(async () => {
    sshd = await startSshd({ users: [{ name: 'trr-smoke', shell: '/usr/bin/zsh' }] });
  });
  afterAll(async () => {
    await sshd?.close();
  });

  it('takes a key login as the remote user through ssh -F', () => {
    const out = execFileSync('/usr/bin/ssh', ['-F', sshd.clientConfig, 'trr-smoke', 'id -un; echo $0'], {
      encoding: 'utf8',
    });
    expect(out.split('\n').slice(0, 1)).toEqual(['trr-smoke']);
  });

  it('forwards a Unix socket with -R to a local listener', async () => {
    const local = mkdtempSync(join(tmpdir(), 'trr-fwd-'));
    // A fresh name: OpenSSH cannot bind a path that is there already (a stale one of an earlier run).
    const remoteSock = `/tmp/trr-smoke-${randomBytes(8).toString('hex')}.sock`;
    const got: string[] = [];
    const server: Server = createServer((c) => c.on('data', (d) => got.push(d.toString())));
    await new Promise<void>((r) => server.listen(join(local, 'l.sock'), () => r()));
    const ssh = spawn(
      '/usr/bin/ssh',
      [
        '-F',
        sshd.clientConfig,
        '-N',
        '-o',
        'ExitOnForwardFailure=yes',
        '-R',
        `${remoteSock}:${join(local, 'l.sock')}`,
        'trr-smoke',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const sshErr: string[] = [];
    ssh.stderr.on('data', (c: Buffer) => sshErr.push(c.toString()));
    try {
      // Connect until the forward's socket is there (once: a line sent before the last one arrived
      // through ssh must not be sent again), then wait for the line.
      await waitUntil(
        () => {
          if (ssh.exitCode !== null) throw new Error(`ssh exited ${ssh.exitCode}: ${sshErr.join('')}`);
          try {
            asUser(sshd.users[0]!, [
              'sh',
              '-c',
              `printf hello | perl -MIO::Socket::UNIX -e 'my $s=IO::Socket::UNIX->new(Peer=>shift) or exit 1; print $s <STDIN>' ${remoteSock}`,
            ]);
            return true;
          } catch (e) {
            if (ssh.exitCode !== null) throw e;
            return false;
          }
        },
        10_000,
        'a connection through the forward',
      );
      await waitUntil(() => got.join('').length >= 'hello'.length, 10_000, 'a line through the forward');
      expect(got.join('')).toBe('hello');
    } finally {
      ssh.kill();
      server.close();
      rmSync(local, { recursive: true, force: true });
      rmSync(remoteSock, { force: true });
    }
  });
});
