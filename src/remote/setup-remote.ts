// `tmux-run setup --remote [SSH_OPTIONS...] DESTINATION` (--undo, --dry-run): puts what the far
// end needs (the built helper and its bundle, the snippets, the native parts' sources, built there
// when the host has a compiler, and the few packages the helper loads at run time) into the remote
// user's own directory, over the person's own ssh: one `ssh [OPTIONS] DEST sh -c ...` with a tar on
// its stdin, running shell/remote/far-setup.sh there. Then records the host here
// (src/remote/hosts.ts) for `tmux-run ssh`. Running it again updates the far end.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../core/os/package-root.js';
import { BUILD_ID } from '../core/protocol/build.js';
import { CliError, UsageError } from '../cli/common/errors.js';
import { escapeControls } from '../core/protocol/escape.js';
import type { Io } from '../cli/common/output.js';
import { noShellReason, parseSshLine, SshArgsError } from './ssh-args.js';
import { readHost, removeHost, writeHost, type HostRecord } from './hosts.js';
import { sshProgram } from './ssh-program.js';

export const HELP = `Usage: tmux-run setup --remote [--undo] [--dry-run] [SSH_OPTIONS...] DESTINATION

Set up DESTINATION's far end for 'tmux-run ssh', once per host and user, over your own ssh
(your config, keys, agent, ProxyJump and known hosts; SSH_OPTIONS are passed to ssh unchanged):
copies the helper, the snippets and the native parts' sources (built there when the host has a
C compiler) into ~/.local/share/tmux-run/ of the remote user, makes a private forward directory
(0700), and adds a line to the remote login shell's start-up file that enrolls only in a session
started by 'tmux-run ssh' (a plain ssh login prints nothing and starts nothing). Records here
where it went (~/.local/state/tmux-run/hosts/). Run it again after upgrading tmux-run: a far end
of another build is refused by name.

The far end needs Linux and Node 20 or newer; its login shell zsh, bash (the line goes in
~/.bashrc, which a login bash reads through ~/.profile or ~/.bash_profile) or fish (a file in
~/.config/fish/conf.d/). See docs/remote.md.

Options:
  --undo      remove the start-up line and the files at the far end, and this host's record here
  --dry-run   say what would be done there (asks the host), change nothing
  -h, --help  show this help
`;

/** The files of this install the far end needs, relative to the package root. */
const SHIPPED = [
  'package.json',
  'dist',
  'shell',
  // The native parts' sources, in the rooms they serve (scripts/native-parts.mjs lists them).
  'helper/run',
  'helper/walls',
  'helper/shell/bash',
  'helper/remote',
  'scripts/native-parts.mjs',
  'scripts/build-native.mjs',
  'node_modules/ajv',
  'node_modules/fast-deep-equal',
  'node_modules/fast-uri',
  'node_modules/json-schema-traverse',
  'node_modules/require-from-string',
  'node_modules/@xterm',
];
/** Built here for this machine: the far end builds its own (or goes without). */
const NOT_SHIPPED = ['dist/generated/*.node', 'dist/generated/walls-waiter', 'dist/generated/bash-line.so'];

type Mode = 'install' | 'undo' | 'dry-run';

/** Splits setup's own flags from the ssh line (they come before DESTINATION; ssh's never start with --). */
function parse(argv: readonly string[]): { mode: Mode; ssh: string[] } {
  let undo = false;
  let dry = false;
  const ssh: string[] = [];
  for (const a of argv) {
    if (a === '--remote') continue;
    else if (a === '--undo') undo = true;
    else if (a === '--dry-run') dry = true;
    else if (a.startsWith('--') && a !== '--')
      throw new UsageError(`setup --remote: unknown option ${escapeControls(a)}`);
    else ssh.push(a);
  }
  return { mode: dry ? 'dry-run' : undo ? 'undo' : 'install', ssh };
}

/** The one remote command: the far end's script, decoded there (any login shell parses this line). */
function remoteCommand(mode: Mode): string {
  const script = readFileSync(join(packageRoot(), 'shell', 'remote', 'far-setup.sh'), 'utf8');
  const b64 = Buffer.from(`MODE=${mode}\n${script}`).toString('base64');
  return `sh -c 'eval "$(printf %s ${b64} | base64 -d)"'`;
}

/** Runs ssh with the far end's script; resolves its stdout (the KEY=VALUE lines) or throws. */
function runFar(options: string[], destination: string, mode: Mode, io: Io): Promise<string> {
  return new Promise((resolve, reject) => {
    const ssh = spawn(sshProgram(), [...options, '--', destination, remoteCommand(mode)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    ssh.stdout.on('data', (c: Buffer) => out.push(c));
    ssh.stderr.on('data', (c: Buffer) => err.push(c));
    // ssh that ends early (a login refused) closes its stdin while tar may still write the
    // install to it: ssh's status and complaint say what went wrong, not the broken pipe.
    ssh.stdin.on('error', () => undefined);
    let tar: { exitCode: number | null; kill(): boolean } | undefined;
    ssh.on('error', (e) => reject(new CliError(`cannot run ssh: ${e.message}`)));
    ssh.on('close', (code) => {
      if (tar && tar.exitCode === null) tar.kill();
      const stderr = Buffer.concat(err).toString('utf8').trim();
      if (code === 0) return resolve(Buffer.concat(out).toString('utf8'));
      // The far script's error, else ssh's last line (its complaint comes after any warnings).
      const why =
        /tmux-run-setup: error: (.*)/.exec(stderr)?.[1] ??
        (stderr.split('\n').pop() || `ssh exited with status ${code}`);
      reject(new CliError(`setup --remote ${destination}: ${why}`));
    });
    if (mode === 'install') {
      const pack = spawn(
        'tar',
        // What this install has of the list (a package installed elsewhere may hoist a dependency).
        [
          '-C',
          packageRoot(),
          ...NOT_SHIPPED.map((p) => `--exclude=${p}`),
          '-cf',
          '-',
          ...SHIPPED.filter((p) => existsSync(join(packageRoot(), p))),
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      tar = pack;
      pack.stdout.pipe(ssh.stdin);
      pack.stderr.on('data', (c: Buffer) => io.err(`tmux-run: tar: ${c.toString('utf8')}`));
      pack.on('close', (code) => {
        if (code !== 0) reject(new CliError(`setup --remote: tar could not pack this install (status ${code})`));
      });
    } else ssh.stdin.end();
  });
}

/** The KEY=VALUE lines the far end printed. */
function facts(out: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of out.split('\n')) {
    const kv = /^tmux-run-setup: ([a-z_]+)=(.*)$/.exec(line);
    if (kv) m.set(kv[1]!, kv[2]!);
  }
  return m;
}

export async function setupRemote(argv: readonly string[], io: Io): Promise<number> {
  const { mode, ssh } = parse(argv);
  let line;
  try {
    line = parseSshLine(ssh);
  } catch (e) {
    throw new UsageError(`setup --remote: ${(e as SshArgsError).message}`);
  }
  const no = noShellReason(line);
  if (no) throw new UsageError(`setup --remote: ${no}`);
  const dest = line.destination;
  const out = await runFar(line.options, dest, mode, io);
  if (mode === 'dry-run') {
    for (const l of out.split('\n')) if (l.startsWith('tmux-run-setup: ')) io.out(`${escapeControls(l.slice(16))}\n`);
    io.out(`would record the host here, and copy build ${BUILD_ID}\n`);
    return 0;
  }
  if (mode === 'undo') {
    const had = removeHost(dest);
    io.out(`tmux-run: removed tmux-run from ${escapeControls(dest)}${had ? ' and its record here' : ''}\n`);
    return 0;
  }
  const f = facts(out);
  const need = (k: string): string => {
    const v = f.get(k);
    if (v === undefined) throw new CliError(`setup --remote ${dest}: the far end did not report ${k}`);
    return v;
  };
  const host: HostRecord = {
    version: 1,
    destination: dest,
    remote_dir: need('remote_dir'),
    forward_dir: need('forward_dir'),
    build: need('build'),
    hostname: need('hostname'),
    node: need('node'),
    native: need('native').split(' ').filter(Boolean),
    shell: need('shell'),
    installed_at: new Date().toISOString(),
  };
  if (host.build !== BUILD_ID)
    throw new CliError(`setup --remote ${dest}: the far end reports build ${host.build}, not this one (${BUILD_ID})`);
  const before = readHost(dest);
  writeHost(host);
  const e = escapeControls;
  io.out(
    `tmux-run: ${before ? 'updated' : 'set up'} ${e(dest)} (${e(host.hostname)}): ${e(host.remote_dir)}, build ${host.build}\n` +
      `  forward directory: ${e(host.forward_dir)}\n` +
      `  node: ${host.node ? e(host.node) : 'none of version 20 or newer on PATH there: the far end cannot enroll until it has one'}\n` +
      `  native parts built there: ${host.native.length ? host.native.join(', ') : 'none (no compiler)'}\n` +
      (f.get('rc')
        ? `  start-up line added to ${e(f.get('rc')!)}: it enrolls only a session started with 'tmux-run ssh ${e(dest)}'\n`
        : `  no start-up line: the login shell there is ${e(host.shell)}, not zsh, bash or fish\n`) +
      (f.get('rc_note') ? `  note: ${e(f.get('rc_note')!)}\n` : ''),
  );
  return 0;
}
