// The helper's start-up, step by step: its arguments, the shell's module and channel, the pane
// it serves (checked against /proc and tmux), the record it publishes, the socket it listens on.
// helper/main.ts runs these steps in order.
import { chmodSync, closeSync, fstatSync, lstatSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { CHANNEL, channelFiles, checkRegistryDir, socketPath } from '../src/core/enrollment/layout.js';
import { bootId, procStat } from '../src/core/os/proc.js';
import { freshId, paneGeneration, processGeneration, serverGeneration } from '../src/core/enrollment/generation.js';
import { tmuxQuery } from '../src/core/os/tmux.js';
import { SHELL_NAMES, type Shell } from './shell/shell.js';
import type { ScreenSource } from './shell/shell.js';
import { shellFor } from './shell-for.js';
import { removeQuietly, type EnrollmentRecord } from '../src/core/enrollment/record.js';
import { LinkLimit } from '../src/core/protocol/transport.js';
import { MAX_REQUEST_FRAME } from '../src/core/protocol/limits.js';
import type { HelperService } from './service.js';
import { BUILD_ID } from '../src/core/protocol/build.js';
import { log } from './log/log.js';

/** Enrollment cannot go on; the shell has been told why. */
export class EnrollError extends Error {}

/**
 * The pane's ^C and ^Z and a closing terminal are not for the helper; it ends with its shell
 * instead (a helper started from bash's start-up files shares the shell's process group).
 */
export function ignoreTerminalSignals(): void {
  process.on('SIGINT', () => {});
  process.on('SIGHUP', () => {});
  process.on('SIGTSTP', () => {});
}

/** Links served at once; over it, a link that has not sent a whole request yet makes room. */
const MAX_CONNECTIONS = 64;

/** The request FIFO's write end the shell starts the helper with (shell/tmux-run.zsh). */
const STARTUP_FD = 9;

/** The helper's arguments: the channel path, the shell's pid, the shell's name (zsh when absent). */
export interface Args {
  base: string;
  shellPid: number;
  shellName: string;
}

export function parseArgs(argv: string[]): Args {
  const [base, pid, shellName = 'zsh'] = argv;
  const shellPid = Number(pid);
  if (!base || !Number.isInteger(shellPid) || shellPid <= 1) {
    log('usage: main.js CHANNEL-PATH SHELL-PID [SHELL] (started by shell/tmux-run.zsh, .bash or .fish)');
    process.exit(2);
  }
  return { base, shellPid, shellName };
}

/** How a failing start ends: files it made are removed, the shell is told (fail) or not (abandon). */
export interface Ending {
  made: string[];
  abandon: (why: string) => never;
  fail: (reason: string) => never;
  failing: () => boolean;
  shellGone: () => boolean;
}

export function endings(args: Args, shell: Shell): Ending {
  const made: string[] = [];
  let failing = false;
  const shellGone = (): boolean => {
    const st = procStat(args.shellPid);
    return st === undefined || st.state === 'Z';
  };
  // The shell is gone before the helper was ready (its pane closed, `exec zsh`): nobody will read
  // the channel or clean it up, so the helper removes it all, log included, and leaves.
  const abandon = (why: string): never => {
    log(`abandoned before it was ready: ${why}`);
    for (const path of made) removeQuietly(path);
    channelFiles(args.base).forEach(removeQuietly);
    process.exit(0);
  };
  const fail = (reason: string): never => {
    if (!failing) {
      failing = true;
      log(`enrollment failed: ${reason}`);
      for (const path of made) removeQuietly(path);
      if (shellGone()) abandon('its shell is gone');
      void shell.fail(reason).then(() => process.exit(1));
    }
    throw new EnrollError(reason);
  };
  return { made, abandon, fail, failing: () => failing, shellGone };
}

/**
 * The shell's module for its name, with its channel open; exits when there is none to open.
 * `screen`: where its screen check reads the pane when the pane's tmux is not here (a far end's).
 */
export async function openShell(args: Args, screen?: ScreenSource): Promise<Shell> {
  const tmuxEnv = (process.env.TMUX ?? '').split(',');
  const place = {
    base: args.base,
    shellPid: args.shellPid,
    tmuxSocket: tmuxEnv[0] ?? '',
    paneId: process.env.TMUX_PANE ?? '',
    ...(screen ? { screen } : {}),
  };
  const shell = await shellFor(args.shellName, place);
  if (!shell) {
    log(`no shell module for ${JSON.stringify(args.shellName)} (one of ${SHELL_NAMES.join(', ')})`);
    process.exit(2);
  }
  try {
    shell.open();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // ENXIO: no reader on the request FIFO, the shell's end of it is closed.
    if (process.ppid !== args.shellPid || code === 'ENXIO' || code === 'ENOENT') {
      log(`abandoned before it was ready: cannot open the shell channel ${args.base}: ${(e as Error).message}`);
      channelFiles(args.base).forEach(removeQuietly);
      process.exit(0);
    }
    log(`cannot open the shell channel ${args.base}: ${(e as Error).message}`);
    process.exit(1);
  }
  dropStartupFd(args.base + CHANNEL.request);
  return shell;
}

/** The pane the helper serves, as checked against /proc and one read-only question to tmux. */
export interface Place {
  dir: string;
  paneId: string;
  tmuxSocket: string;
  serverPid: number;
  shellStat: NonNullable<ReturnType<typeof procStat>>;
  serverStat: NonNullable<ReturnType<typeof procStat>>;
  shellTty: string;
}

export async function checkPlace(args: Args, fail: Ending['fail']): Promise<Place> {
  if (process.ppid !== args.shellPid) {
    fail(
      `the helper's parent (pid ${process.ppid}) is not the shell that started it (pid ${args.shellPid}); TMUX_RUN_NODE must exec node`,
    );
  }
  const dir = dirname(args.base);
  try {
    checkRegistryDir(dir);
  } catch (e) {
    fail((e as Error).message);
  }
  const shellStat = procStat(args.shellPid);
  const paneId = process.env.TMUX_PANE ?? '';
  const tmuxEnv = (process.env.TMUX ?? '').split(',');
  const tmuxSocket = tmuxEnv[0] ?? '';
  const serverPid = Number(tmuxEnv[1]);
  if (!shellStat) return fail('the shell that started the helper is gone');
  if (!/^%[0-9]+$/.test(paneId) || !tmuxSocket || !Number.isInteger(serverPid))
    fail('TMUX and TMUX_PANE do not name a tmux pane');
  const serverStat = procStat(serverPid);
  if (!serverStat) return fail(`the tmux server (pid ${serverPid}) is not running`);

  // One read-only question to tmux: does this pane exist on this server, with this shell's tty?
  let shellTty = '';
  try {
    const [id, tty, pid] = (
      await tmuxQuery(tmuxSocket, ['display-message', '-p', '-t', paneId, '#{pane_id}\t#{pane_tty}\t#{pid}'])
    )
      .trim()
      .split('\t');
    if (id !== paneId) fail(`tmux does not know pane ${paneId}`);
    if (Number(pid) !== serverPid) fail('TMUX names a different tmux server than the one answering on its socket');
    shellTty = tty ?? '';
    if (statSync(shellTty).rdev !== shellStat.ttyNr)
      fail(`this shell is not running on pane ${paneId}'s terminal (${shellTty})`);
  } catch (e) {
    if (e instanceof EnrollError) throw e;
    fail(`tmux could not describe pane ${paneId}: ${(e as Error).message}`);
  }
  return { dir, paneId, tmuxSocket, serverPid, shellStat, serverStat, shellTty };
}

/** The enrollment's record and secret: fresh generations for this pane, shell and enrollment. */
export function makeRecord(
  args: Args,
  place: Place,
  shell: Shell,
  fail: Ending['fail'],
): { record: EnrollmentRecord; secret: Buffer } {
  const boot = bootId();
  const enrollment = freshId();
  const gens = {
    server_generation: serverGeneration(place.tmuxSocket, place.serverPid, place.serverStat.startTicks, boot),
    pane_id: place.paneId,
    process_generation: processGeneration(args.shellPid, place.shellStat.startTicks, boot),
    enrollment_generation: enrollment,
  };
  const secret = randomBytes(32);
  const sock = socketPath(place.dir, enrollment);
  if (Buffer.byteLength(sock) > 107)
    fail(`the socket path ${sock} is too long for a Unix socket; set TMUX_RUN_DIR to a shorter directory`);
  const record: EnrollmentRecord = {
    version: 1,
    ...gens,
    generation: paneGeneration(gens),
    tmux_socket: place.tmuxSocket,
    tmux_server_pid: place.serverPid,
    shell_pid: args.shellPid,
    shell_start: place.shellStat.startTicks,
    shell_tty: place.shellTty,
    helper_pid: process.pid,
    socket: sock,
    channel: args.base,
    enrolled_at: new Date().toISOString(),
    secret: secret.toString('hex'),
    build: BUILD_ID,
    shell: shell.name,
    editor_check: shell.editorCheck,
    ...(shell.editorCheckReason !== undefined ? { editor_check_reason: shell.editorCheckReason } : {}),
  };
  return { record, secret };
}

/**
 * Whether the enrolled shell and the tmux server still run: the same processes (a zombie, dead
 * but not yet reaped, does not count), and the shell still its program: after an `exec` (the same
 * pid, another image) it is a new shell, which a signal-woken channel would not notice otherwise.
 */
export function liveness(args: Args, place: Place): () => boolean {
  const same = (pid: number, startTicks: string): boolean => {
    const st = procStat(pid);
    return st !== undefined && st.state !== 'Z' && st.startTicks === startTicks;
  };
  return () =>
    process.ppid === args.shellPid &&
    same(args.shellPid, place.shellStat.startTicks) &&
    procStat(args.shellPid)?.image === place.shellStat.image &&
    same(place.serverPid, place.serverStat.startTicks);
}

/** Listens on the record's socket (0600) for the broker's links. */
export async function listen(service: HelperService, sock: string, fail: Ending['fail']): Promise<Server> {
  const previousUmask = process.umask(0o077);
  const links = new LinkLimit(MAX_CONNECTIONS);
  const server = createServer({ allowHalfOpen: false }, (conn) => service.attach(links.admit(conn, MAX_REQUEST_FRAME)));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(sock, () => resolve());
  }).catch((e: Error) => fail(`cannot listen on ${sock}: ${e.message}`));
  process.umask(previousUmask);
  chmodSync(sock, 0o600);
  const st = lstatSync(sock);
  if (!st.isSocket() || (st.mode & 0o077) !== 0) fail(`the socket ${sock} did not get mode 0600`);
  return server;
}

/**
 * Closes the startup descriptor once the helper holds its own (close-on-exec) end of the request
 * FIFO, so that no command it runs inherits it; only when it is that FIFO.
 */
function dropStartupFd(request: string): void {
  try {
    const fd = fstatSync(STARTUP_FD);
    const own = lstatSync(request);
    if (fd.isFIFO() && fd.ino === own.ino && fd.dev === own.dev) closeSync(STARTUP_FD);
  } catch {
    /* not there (started by hand): nothing to drop */
  }
}
