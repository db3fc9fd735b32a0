// The per-pane helper: started by shell/tmux-run.zsh with the channel path; publishes the
// enrollment, serves the broker on a 0600 socket, and ends with its shell.
import { chmodSync, closeSync, fstatSync, lstatSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import {
  CHANNEL,
  channelFiles,
  checkRegistryDir,
  journalPath,
  recordPath,
  socketPath,
} from '../src/enrollment/layout.js';
import { bootId, procStat } from '../src/os/proc.js';
import { freshId, paneGeneration, processGeneration, serverGeneration } from '../src/enrollment/generation.js';
import { tmuxQuery } from '../src/os/tmux.js';
import { ShellChannel } from './shell/channel.js';
import { removeQuietly, writeRecord, type EnrollmentRecord } from '../src/enrollment/record.js';
import { AuditLog, auditPath } from '../src/audit/audit-log.js';
import { LinkLimit } from '../src/protocol/transport.js';
import { MAX_REQUEST_FRAME } from '../src/protocol/limits.js';
import { HelperService } from './service.js';
import { RunJournal } from '../src/enrollment/run-journal.js';
import { BUILD_ID } from '../src/protocol/build.js';

/** Enrollment cannot go on; the shell has been told why. */
class EnrollError extends Error {}

/** Links served at once; over it, a link that has not sent a whole request yet makes room. */
const MAX_CONNECTIONS = 64;
/** How often the helper checks that its shell (and the tmux server) still exist. */
const WATCH_MS = 500;

const log = (msg: string): void => {
  process.stderr.write(`${new Date().toISOString()} tmux-run-helper[${process.pid}]: ${msg}\n`);
};

// The pane's ^C and a closing terminal are not for the helper; it ends with its shell instead.
process.on('SIGINT', () => {});
process.on('SIGHUP', () => {});

/** The request FIFO's write end the shell starts the helper with (shell/tmux-run.zsh). */
const STARTUP_FD = 9;

async function main(): Promise<void> {
  const base = process.argv[2];
  const shellPid = Number(process.argv[3]);
  if (!base || !Number.isInteger(shellPid) || shellPid <= 1) {
    log('usage: main.js CHANNEL-PATH SHELL-PID (started by shell/tmux-run.zsh)');
    process.exit(2);
  }
  // Files this helper made before it is enrolled; a failed enrollment leaves none of them.
  const made: string[] = [];
  const shellGone = (): boolean => {
    const st = procStat(shellPid);
    return st === undefined || st.state === 'Z';
  };
  // The shell is gone before the helper was ready (its pane closed, `exec zsh`): nobody will read
  // the channel or clean it up, so the helper removes it all, log included, and leaves.
  const abandon = (why: string): never => {
    log(`abandoned before it was ready: ${why}`);
    for (const path of made) removeQuietly(path);
    channelFiles(base).forEach(removeQuietly);
    process.exit(0);
  };
  const shell = new ShellChannel(base);
  try {
    shell.open();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // ENXIO: no reader on the request FIFO, the shell's end of it is closed.
    if (process.ppid !== shellPid || code === 'ENXIO' || code === 'ENOENT')
      abandon(`cannot open the shell channel ${base}: ${(e as Error).message}`);
    log(`cannot open the shell channel ${base}: ${(e as Error).message}`);
    process.exit(1);
  }
  dropStartupFd(base + CHANNEL.request);
  shell.onclose = () => abandon('the shell closed its channel');
  let failing = false;
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
  // Until it is enrolled, SIGTERM (the shell gave up waiting, or was interrupted) just undoes.
  const earlyTerm = (): void => {
    log('stopped before it was ready');
    for (const path of made) removeQuietly(path);
    process.exit(0);
  };
  process.on('SIGTERM', earlyTerm);
  internalFail = (e: Error) => fail(`internal error: ${e.message}`);
  if (process.ppid !== shellPid) {
    if (shellGone()) abandon(`its shell (pid ${shellPid}) is gone`);
    fail(
      `the helper's parent (pid ${process.ppid}) is not the shell that started it (pid ${shellPid}); TMUX_RUN_NODE must exec node`,
    );
  }

  const dir = dirname(base);
  try {
    checkRegistryDir(dir);
  } catch (e) {
    fail((e as Error).message);
  }
  const shellStat = procStat(shellPid);
  const paneId = process.env.TMUX_PANE ?? '';
  const tmuxEnv = (process.env.TMUX ?? '').split(',');
  const tmuxSocket = tmuxEnv[0] ?? '';
  const serverPid = Number(tmuxEnv[1]);
  if (!shellStat) fail('the shell that started the helper is gone');
  if (!/^%[0-9]+$/.test(paneId) || !tmuxSocket || !Number.isInteger(serverPid))
    fail('TMUX and TMUX_PANE do not name a tmux pane');
  const serverStat = procStat(serverPid);
  if (!serverStat) fail(`the tmux server (pid ${serverPid}) is not running`);

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
    if (statSync(shellTty).rdev !== shellStat!.ttyNr)
      fail(`this shell is not running on pane ${paneId}'s terminal (${shellTty})`);
  } catch (e) {
    if (e instanceof EnrollError) throw e;
    fail(`tmux could not describe pane ${paneId}: ${(e as Error).message}`);
  }

  const boot = bootId();
  const enrollment = freshId();
  const gens = {
    server_generation: serverGeneration(tmuxSocket, serverPid, serverStat!.startTicks, boot),
    pane_id: paneId,
    process_generation: processGeneration(shellPid, shellStat!.startTicks, boot),
    enrollment_generation: enrollment,
  };
  const secret = randomBytes(32);
  const sock = socketPath(dir, enrollment);
  if (Buffer.byteLength(sock) > 107)
    fail(`the socket path ${sock} is too long for a Unix socket; set TMUX_RUN_DIR to a shorter directory`);
  const record: EnrollmentRecord = {
    version: 1,
    ...gens,
    generation: paneGeneration(gens),
    tmux_socket: tmuxSocket,
    tmux_server_pid: serverPid,
    shell_pid: shellPid,
    shell_start: shellStat!.startTicks,
    shell_tty: shellTty,
    helper_pid: process.pid,
    socket: sock,
    channel: base,
    enrolled_at: new Date().toISOString(),
    secret: secret.toString('hex'),
    build: BUILD_ID,
  };

  // The same process, still running (a zombie, dead but not yet reaped, does not count).
  const same = (pid: number, startTicks: string): boolean => {
    const st = procStat(pid);
    return st !== undefined && st.state !== 'Z' && st.startTicks === startTicks;
  };
  const alive = (): boolean =>
    process.ppid === shellPid && same(shellPid, shellStat!.startTicks) && same(serverPid, serverStat!.startTicks);

  // Assigned once below; end(), defined first, closes it when it exists.
  // eslint-disable-next-line prefer-const
  let server: Server | undefined;
  let ending = false;
  const journal = new RunJournal(journalPath(dir, enrollment));
  const service: HelperService = new HelperService({
    record,
    secret,
    shell,
    journal,
    log,
    audit: new AuditLog(auditPath()),
    alive,
    onRevoke: () => end('revoked', 0),
  });
  const end = (why: string, code: number): void => {
    if (ending) return;
    ending = true;
    log(`ending: ${why}`);
    removeQuietly(recordPath(dir, enrollment));
    // Only a record leads anyone to the journal: without it the journal is of no use. The runs
    // being stopped now are SIGKILLed on exit if their grace is not over (src/os/process-group.ts).
    journal.remove();
    removeQuietly(sock);
    server?.close();
    if (why === 'revoked') service.shutdown('the enrollment was revoked', 'revoked');
    else service.shutdown('the enrolled shell has exited');
    const finish = (): void => {
      channelFiles(base).forEach(removeQuietly);
      shell.close();
      process.exit(code);
    };
    // Let a stopped run report its outcome (and the audit trail record it) before leaving.
    void Promise.race([service.idle(), new Promise((r) => setTimeout(r, 3000))]).then(() => setTimeout(finish, 20));
  };
  shell.onclose = () => end('the shell closed its channel', 0);

  const previousUmask = process.umask(0o077);
  const links = new LinkLimit(MAX_CONNECTIONS);
  server = createServer({ allowHalfOpen: false }, (conn) => service.attach(links.admit(conn, MAX_REQUEST_FRAME)));
  made.push(sock);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(sock, () => resolve());
  }).catch((e: Error) => fail(`cannot listen on ${sock}: ${e.message}`));
  process.umask(previousUmask);
  chmodSync(sock, 0o600);
  const st = lstatSync(sock);
  if (!st.isSocket() || (st.mode & 0o077) !== 0) fail(`the socket ${sock} did not get mode 0600`);
  made.push(recordPath(dir, enrollment));
  try {
    writeRecord(dir, record);
  } catch (e) {
    fail(`cannot write the enrollment record: ${(e as Error).message}`);
  }
  if (failing) return;

  setInterval(() => {
    if (!alive()) end('the shell or the tmux server is gone', 0);
    else if (!existsQuiet(recordPath(dir, enrollment))) end('the enrollment record was removed', 0);
  }, WATCH_MS);

  // Enrolled: from here on SIGTERM, a vanished shell or an unexpected error ends it cleanly.
  process.off('SIGTERM', earlyTerm);
  process.on('SIGTERM', () => end('SIGTERM', 0));
  internalFail = (e: Error) => end(`internal error: ${e.stack ?? e.message}`, 1);
  shell.ready(record.generation, enrollment);
  // Start-up leaves garbage the helper will never need; collect it once the pane is enrolled.
  setTimeout(() => globalThis.gc?.(), 1000).unref();
  log(`enrolled pane ${paneId} (generation ${record.generation}, shell ${shellPid})`);
}

/** What an unexpected error does: before enrollment, tell the shell; after it, end cleanly. */
let internalFail: (e: Error) => void = (e) => {
  log(`fatal: ${e.stack ?? e.message}`);
  process.exit(1);
};

process.on('uncaughtException', (e) => {
  if (e instanceof EnrollError) return;
  log(`unexpected error: ${e.stack ?? e.message}`);
  try {
    internalFail(e);
  } catch {
    /* an EnrollError: the shell has been told */
  }
});

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

function existsQuiet(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

main().catch((e: Error) => {
  if (e instanceof EnrollError) return; // reported to the shell; exiting
  log(`fatal: ${e.stack ?? e.message}`);
  try {
    internalFail(e);
  } catch {
    /* an EnrollError: the shell has been told */
  }
});
