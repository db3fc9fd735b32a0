// `tmux-run ssh [SSH_OPTIONS...] DESTINATION`: the person's own ssh, its far end enrolled
// (docs/remote.md). Runs ssh with their options unchanged, plus `-R` to the relay's socket
// (src/remote/relay.ts) and two settings that keep the session its own (no shared master);
// stays as ssh's parent while it runs, and exits with ssh's status. Whatever keeps the pane from
// being enrolled (not inside tmux, a host never set up, an unusable registry) is said once, then
// the person gets an ordinary ssh session all the same.
import { spawn } from 'node:child_process';
import { appendFileSync, statSync } from 'node:fs';
import { constants as os } from 'node:os';
import { checkRegistryDir, resolveRegistryDir } from '../core/enrollment/layout.js';
import { procStat } from '../core/os/proc.js';
import { tmuxQuery } from '../core/os/tmux.js';
import { UsageError } from '../cli/common/errors.js';
import type { Io } from '../cli/common/output.js';
import { noShellReason, parseSshLine, SshArgsError } from './ssh-args.js';
import { readHost } from './hosts.js';
import { auditPath } from '../core/audit/audit-log.js';
import { Relay, type LocalPane } from './relay.js';
import { sshProgram } from './ssh-program.js';

export const HELP = `Usage: tmux-run ssh [SSH_OPTIONS...] DESTINATION

Your own ssh (your config, keys, agent, ProxyJump and known hosts; SSH_OPTIONS are passed on
unchanged), with the login shell at the far end enrolled for tmux-run in this pane: an agent's
tmux_run runs there with the same guarantees as in a local pane, and nothing is typed into the
terminal. Run it in a tmux pane; the host must have been set up once with
'tmux-run setup --remote DESTINATION'. A remote command after DESTINATION is refused.

tmux-run adds '-R' (a Unix socket of its own, forwarded for this session only), and
'-o ControlPath=none' (a shared master would carry another session's forwards). If the pane cannot
be enrolled, it says why once and you get an ordinary ssh session. The exit status is ssh's.

Options: ssh's own (see ssh(1)); -h, --help shows this help.
`;

/** Why this pane cannot be enrolled through ssh here, or the pane. */
async function localPane(env: NodeJS.ProcessEnv): Promise<LocalPane | string> {
  const [tmuxSocket = '', pid = ''] = (env.TMUX ?? '').split(',');
  const paneId = env.TMUX_PANE ?? '';
  if (!tmuxSocket || !/^%[0-9]+$/.test(paneId)) return 'this is not a tmux pane (TMUX and TMUX_PANE are unset)';
  const serverPid = Number(pid);
  const server = procStat(serverPid);
  if (!server) return `the tmux server (pid ${pid}) is not running`;
  try {
    const [id, tty, spid] = (
      await tmuxQuery(tmuxSocket, ['display-message', '-p', '-t', paneId, '#{pane_id}\t#{pane_tty}\t#{pid}'])
    )
      .trim()
      .split('\t');
    if (id !== paneId || Number(spid) !== serverPid) return `tmux does not know pane ${paneId} on this server`;
    // The pane's terminal is this process's (the person typed tmux-run ssh in it).
    const own = procStat(process.pid);
    if (!tty || !own || statSync(tty).rdev !== own.ttyNr)
      return `tmux-run ssh is not running on pane ${paneId}'s terminal`;
    return { paneId, tmuxSocket, serverPid, serverStart: server.startTicks, paneTty: tty };
  } catch (e) {
    return `tmux could not describe pane ${paneId}: ${(e as Error).message}`;
  }
}

/** A log for the relay, only when TMUX_RUN_SSH_LOG names a file (the terminal is ssh's). */
function relayLog(env: NodeJS.ProcessEnv): (line: string) => void {
  const file = env.TMUX_RUN_SSH_LOG;
  if (!file) return () => {};
  return (line) => {
    try {
      appendFileSync(file, `${new Date().toISOString()} tmux-run-ssh[${process.pid}]: ${line}\n`, { mode: 0o600 });
    } catch {
      /* a log that cannot be written is no reason to disturb the session */
    }
  };
}

/** Runs ssh with `args`, the terminal its own; resolves its exit status (128+N for a signal). */
function runSsh(args: string[], onStart: (pid: number) => void): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(sshProgram(), args, { stdio: 'inherit' });
    // The terminal's signals are ssh's: it puts the terminal in raw mode and sends keys on. The
    // relay only ends with it; a closing pane (HUP) or a TERM is passed on.
    for (const sig of ['SIGINT', 'SIGQUIT', 'SIGTSTP'] as const) process.on(sig, () => {});
    for (const sig of ['SIGHUP', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
    child.on('error', (e) => {
      process.stderr.write(`tmux-run: cannot run ${sshProgram()}: ${e.message}\n`);
      resolve(255);
    });
    if (child.pid !== undefined) onStart(child.pid);
    child.on('exit', (code, signal) => resolve(code ?? 128 + (signal ? (os.signals[signal] ?? 0) : 0)));
  });
}

/** ssh's arguments: the person's options and destination, with what tmux-run needs around them. */
function sshArgs(options: string[], destination: string, forward: string): string[] {
  return [
    // First: ssh keeps the first value it is given, and a shared master would carry another session's forwards.
    '-o',
    'ControlPath=none',
    '-o',
    'ClearAllForwardings=no',
    ...options,
    // After the person's: a refused forward still leaves an ordinary session, unless they said otherwise.
    '-o',
    'ExitOnForwardFailure=no',
    '-R',
    forward,
    '--',
    destination,
  ];
}

export async function sshCommand(
  argv: readonly string[],
  io: Io,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let line;
  try {
    line = parseSshLine(argv);
  } catch (e) {
    throw new UsageError(`ssh: ${(e as SshArgsError).message}`);
  }
  const no = noShellReason(line);
  if (no) throw new UsageError(`ssh: ${no}`);
  const plain = [...line.options, '--', line.destination];
  const notEnrolled = (why: string): Promise<number> => {
    io.err(`tmux-run: this ssh session will not be enrolled: ${why}\n`);
    return runSsh(plain, () => {});
  };
  const host = readHost(line.destination, env);
  if (!host)
    return notEnrolled(
      `${line.destination} was never set up (run: tmux-run setup --remote ${line.destination}) (remote_unavailable)`,
    );
  const pane = await localPane(env);
  if (typeof pane === 'string') return notEnrolled(pane);
  let registryDir: string;
  try {
    registryDir = checkRegistryDir(resolveRegistryDir(env), { create: true });
  } catch (e) {
    return notEnrolled((e as Error).message);
  }
  const relay = new Relay({
    destination: line.destination,
    registryDir,
    forwardDir: host.forward_dir,
    pane,
    log: relayLog(env),
    auditPath: auditPath(env),
  });
  try {
    await relay.listen();
  } catch (e) {
    relay.close();
    return notEnrolled(`cannot listen in ${registryDir}: ${(e as Error).message}`);
  }
  const args = sshArgs(line.options, line.destination, relay.forwardSpec());
  try {
    return await runSsh(args, (pid) => relay.setSsh(pid));
  } finally {
    relay.close();
  }
}
