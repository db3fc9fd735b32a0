// The far end for the remote suites: a real OpenSSH server that the test run starts itself on
// 127.0.0.1 (its own host key, its own sshd_config with a stock AcceptEnv, an ephemeral port),
// a client config for `ssh -F` that reads neither /etc/ssh/ssh_config nor ~/.ssh, and remote users
// of their own (useradd -m -s SHELL -p '*': a login shell of each kind, an authorized key), so that
// nothing of the local side is reachable to the far end by accident. Runs as root (here and in CI).
// close() kills sshd and every process of the users it made, and removes its files.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitUntil } from '../../lab/waiting.js';

/** The two kinds of stock `AcceptEnv` (FACTS.md): Debian's and Ubuntu's, Fedora's and RHEL's. */
export const ACCEPT_ENV = {
  debian: 'LANG LC_*',
  fedora:
    'LANG LC_CTYPE LC_NUMERIC LC_TIME LC_COLLATE LC_MONETARY LC_MESSAGES LC_PAPER LC_NAME LC_ADDRESS LC_TELEPHONE LC_MEASUREMENT LC_IDENTIFICATION LC_ALL LANGUAGE XMODIFIERS',
} as const;

export const SSHD = '/usr/sbin/sshd';

/** Whether this machine can run the remote suites: root, sshd, ssh, ssh-keygen, useradd. */
export function sshdAvailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'the remote suites run as root (they create users and start sshd)';
  for (const p of [SSHD, '/usr/bin/ssh', '/usr/bin/ssh-keygen', '/usr/sbin/useradd'])
    if (!existsSync(p)) return `${p} is missing (install openssh-server and openssh-client)`;
  return undefined;
}

export interface RemoteUser {
  name: string;
  uid: number;
  home: string;
  shell: string;
}

export interface Sshd {
  port: number;
  /** The client config (`ssh -F`) with one Host block per user, named after the user. */
  clientConfig: string;
  /** The private key each user's authorized_keys holds. */
  identity: string;
  dir: string;
  pid: number;
  users: RemoteUser[];
  /** sshd's log (-E). */
  log(): string;
  close(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released for sshd to take). */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** Creates the user when missing (idempotent): login shell `shell`, a home, no password but key logins allowed. */
export function ensureUser(name: string, shell: string): RemoteUser {
  const found = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  if (!found) execFileSync('/usr/sbin/useradd', ['-m', '-s', shell, '-p', '*', name], { stdio: 'pipe' });
  else execFileSync('/usr/sbin/usermod', ['-s', shell, '-p', '*', name], { stdio: 'pipe' });
  const fields = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`))!
    .split(':');
  return { name, uid: Number(fields[2]), home: fields[5]!, shell };
}

/** Runs `argv` as `user` (runuser, a login-free environment of that user): stdout. */
export function asUser(user: RemoteUser, argv: string[], input?: string): string {
  return execFileSync(
    '/usr/sbin/runuser',
    [
      '-u',
      user.name,
      '--',
      'env',
      '-i',
      `HOME=${user.home}`,
      `USER=${user.name}`,
      'PATH=/usr/local/bin:/usr/bin:/bin',
      ...argv,
    ],
    { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] },
  );
}

/** The command lines of every process of `uid` (by /proc). */
export function userCmdlines(uid: number): string[] {
  const out: string[] = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      if (/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${n}/status`, 'utf8'))?.[1] !== String(uid)) continue;
      out.push(readFileSync(`/proc/${n}/cmdline`, 'utf8').split('\0').join(' ').trim());
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Every process of `uid` (by /proc), killed by pid with SIGKILL until none is left. */
export async function killUserProcesses(uid: number): Promise<void> {
  const of = (): number[] =>
    readdirSync('/proc')
      .filter((n) => /^\d+$/.test(n))
      .filter((n) => {
        try {
          return /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${n}/status`, 'utf8'))?.[1] === String(uid);
        } catch {
          return false;
        }
      })
      .map(Number);
  await waitUntil(
    () => {
      const pids = of();
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      return pids.length === 0;
    },
    10_000,
    `every process of uid ${uid} gone`,
  );
}

/** Gives `user` the authorized key `pub` (their own ~/.ssh, 0700, the file 0600). */
function authorize(user: RemoteUser, pub: string): void {
  const ssh = join(user.home, '.ssh');
  mkdirSync(ssh, { recursive: true, mode: 0o700 });
  writeFileSync(join(ssh, 'authorized_keys'), pub, { mode: 0o600 });
  chmodSync(ssh, 0o700);
  chownSync(ssh, user.uid, user.uid);
  chownSync(join(ssh, 'authorized_keys'), user.uid, user.uid);
}

export interface SshdOptions {
  /** The users to log in as: name and login shell. */
  users: Array<{ name: string; shell: string }>;
  /** Which stock AcceptEnv the server has (debian unless said). */
  acceptEnv?: keyof typeof ACCEPT_ENV;
}

/** Starts sshd on 127.0.0.1 and an ephemeral port, with the users, their keys and a client config. */
export async function startSshd(opts: SshdOptions): Promise<Sshd> {
  const dir = mkdtempSync(join(tmpdir(), 'tmux-run-sshd-'));
  chmodSync(dir, 0o755);
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const hostKey = join(dir, 'host_ed25519');
  const identity = join(dir, 'id_ed25519');
  execFileSync('/usr/bin/ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'tmux-run-test-host', '-f', hostKey]);
  execFileSync('/usr/bin/ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'tmux-run-test-client', '-f', identity]);
  const users = opts.users.map((u) => ensureUser(u.name, u.shell));
  for (const u of users) authorize(u, readFileSync(`${identity}.pub`, 'utf8'));
  const port = await freePort();
  const pidFile = join(dir, 'sshd.pid');
  const logFile = join(dir, 'sshd.log');
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `ListenAddress 127.0.0.1:${port}`,
      `HostKey ${hostKey}`,
      `PidFile ${pidFile}`,
      'UsePAM no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'AuthorizedKeysFile .ssh/authorized_keys',
      `AllowUsers ${users.map((u) => u.name).join(' ')}`,
      // A stock server's: nothing of tmux-run's own is accepted (FACTS.md).
      `AcceptEnv ${ACCEPT_ENV[opts.acceptEnv ?? 'debian']}`,
      'PrintMotd no',
      'PrintLastLog no',
      'LogLevel VERBOSE',
      'Subsystem sftp internal-sftp',
      '',
    ].join('\n'),
  );
  const knownHosts = join(dir, 'known_hosts');
  writeFileSync(knownHosts, `tmux-run-test-sshd ${readFileSync(`${hostKey}.pub`, 'utf8')}`);
  const clientConfig = join(dir, 'ssh_config');
  writeFileSync(
    clientConfig,
    users
      .map((u) =>
        [
          `Host ${u.name}`,
          '  HostName 127.0.0.1',
          `  Port ${port}`,
          `  User ${u.name}`,
          `  IdentityFile ${identity}`,
          '  IdentitiesOnly yes',
          `  UserKnownHostsFile ${knownHosts}`,
          '  HostKeyAlias tmux-run-test-sshd',
          '  StrictHostKeyChecking yes',
          '  BatchMode yes',
          '  LogLevel ERROR',
          '',
        ].join('\n'),
      )
      .join('\n'),
  );
  chmodSync(clientConfig, 0o600);
  const child: ChildProcess = spawn(SSHD, ['-D', '-f', config, '-E', logFile], { stdio: 'ignore' });
  const log = (): string => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  await waitUntil(
    () => log().includes(`Server listening on 127.0.0.1 port ${port}`) || child.exitCode !== null,
    10_000,
    'sshd listening',
  );
  if (child.exitCode !== null) throw new Error(`sshd exited (${child.exitCode}): ${log()}`);
  return {
    port,
    clientConfig,
    identity,
    dir,
    pid: child.pid!,
    users,
    log,
    async close() {
      child.kill('SIGTERM');
      await waitUntil(() => child.exitCode !== null || child.signalCode !== null, 5000, 'sshd gone');
      for (const u of users) await killUserProcesses(u.uid);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
