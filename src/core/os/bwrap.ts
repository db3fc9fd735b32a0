// bubblewrap (`bwrap`), the wall around a sandboxed run: where it is, the waiter that runs inside
// it to report the script's real exit status or signal, and a probe that says whether it can make
// a sandbox here. Used by the helper (loaded only when a sandboxed run comes) and `tmux-run doctor`.
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { Duplex } from 'node:stream';
import { PERL } from './perl.js';

/** Where bwrap is looked for (never the person's PATH, which a project's tooling can change). */
export const BWRAP_PATHS = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'] as const;
/** The waiter's interpreter: Debian's essential perl-base (src/core/os/perl.ts). */
export { PERL };
/** The descriptor the waiter reports on, inside the sandbox (the script never inherits it). */
export const STATUS_FD = 3;

/**
 * The probe's waiter (probeBwrap below: `tmux-run doctor` and a helper's first sandboxed run);
 * runs themselves go into a pane's kept-alive walls, whose waiter is helper/walls/waiter.ts.
 * The waiter (perl -e), the sandbox's pid 1 (`--as-pid-1`): forks the script in its own process
 * group (as a plain run's /bin/sh is), reaps every child until the script has ended, and writes
 * `S` once the fork worked and `W STATUS\n` with the script's raw wait status on descriptor 3,
 * which it marks close-on-exec first; then exits as the script did, and the kernel ends every
 * process left in the namespace before bwrap learns of that exit. bwrap alone reports a signal as
 * 128+N, which an `exit 143` cannot be told from. As the namespace's init it ignores the signals a
 * script sends it, but SIGTERM, which it passes on to the script's group: the helper stops a
 * sandboxed run by sending SIGTERM to the waiter (bwrap would die of it, and the namespace's end
 * would SIGKILL the script before it could clean up), then SIGKILL to bwrap after the grace.
 */
export const WAITER =
  'open(my $s, "+<&=", 3) or exit 125; fcntl($s, 2, 1) or exit 125;' +
  ' my $g = ""; syswrite($s, "R") or exit 125; $SIG{ALRM} = sub { print STDERR "tmux-run: this pane\x27s helper did not answer the sandbox (it may be older than this install: enroll the pane again)\n"; exit 125 }; alarm 10; (sysread($s, $g, 1) // 0) == 1 && $g eq "G" or exit 125; alarm 0;' +
  ' my $p = fork; exit 125 unless defined $p;' +
  ' if (!$p) { setpgrp(0, 0); exec { $ARGV[0] } @ARGV; exit 127 }' +
  ' $SIG{TERM} = sub { kill("TERM", -$p) or kill("TERM", $p) };' +
  ' syswrite($s, "S"); my $w = 0; while ((my $k = waitpid(-1, 0)) > 0) { if ($k == $p) { $w = $?; last } }' +
  ' syswrite($s, "W $w\\n"); exit(($w & 127) ? 128 + ($w & 127) : ($w >> 8));';

/**
 * Before it starts the script the waiter writes `R` on descriptor 3 (a socket pair with the helper)
 * and waits for the helper's `G` (GO): it exits 125 without starting anything when the helper's end
 * is closed instead. bwrap's outer process sets its parent-death signal (`--die-with-parent`,
 * PR_SET_PDEATHSIG) only after it has started, and a parent that died before that never signals
 * it, so a helper SIGKILLed in the first milliseconds of a sandboxed run would leave the run going;
 * the helper's `G` proves it was alive after bwrap set that signal (bwrap's child, and so the
 * waiter, starts only then). A helper that never answers (one started before an upgrade, whose
 * runner does not know the question) fails closed after 10 s: the script is not started (a handler,
 * since the namespace's init gets no signal whose action is the default).
 */
export const WAITER_READY = 'R';
export const WAITER_GO = 'G';

/** What the waiter reported: whether the script was started, and its raw wait status when it ended. */
export interface WaiterReport {
  started: boolean;
  status?: number;
}

/** Parses what the waiter wrote on its descriptor (pure). */
export function parseWaiter(data: string): WaiterReport {
  if (data.startsWith(WAITER_READY)) data = data.slice(1);
  if (!data.startsWith('S')) return { started: false };
  const m = /^SW (\d{1,10})\n/.exec(data);
  return m ? { started: true, status: Number(m[1]) } : { started: true };
}

/** A raw wait status as the run's completion (pure). */
export function completionOfStatus(
  status: number,
): { state: 'exited'; exit_status: number; signal: null } | { state: 'signaled'; exit_status: null; signal: number } {
  const sig = status & 0x7f;
  return sig !== 0
    ? { state: 'signaled', exit_status: null, signal: sig }
    : { state: 'exited', exit_status: (status >> 8) & 0xff, signal: null };
}

function executable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * bwrap's path: TMUX_RUN_BWRAP in the helper's own environment (the person's, set before
 * enrolling; absolute) when set, else the first executable of BWRAP_PATHS; undefined when none is.
 */
export function findBwrap(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const chosen = env.TMUX_RUN_BWRAP;
  if (chosen !== undefined && chosen !== '') return isAbsolute(chosen) && executable(chosen) ? chosen : undefined;
  return BWRAP_PATHS.find(executable);
}

/**
 * The namespace and process arguments every sandbox gets (the mounts come before them): no
 * capabilities (bwrap run by root keeps them otherwise, and could undo its own mounts).
 */
export function processWalls(net: boolean): string[] {
  return [
    '--cap-drop',
    'ALL',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(net ? [] : ['--unshare-net']),
    '--die-with-parent',
    '--new-session',
    // The waiter is pid 1: bwrap reports the end only once the namespace is gone (its own init
    // would report the waiter's exit while the kernel is still ending what the script left).
    '--as-pid-1',
  ];
}

export type ProbeResult = { ok: true; bwrap: string } | { ok: false; reason: string; missing?: boolean };

/** Why the sandbox cannot be used, said so the person knows what to do. */
export const MISSING_BWRAP = `bwrap (bubblewrap) was not found in ${BWRAP_PATHS.join(', ')}; install it (apt-get install bubblewrap) or set TMUX_RUN_SANDBOX=off`;

/**
 * Makes one sandbox with the walls every run gets (read-only root, private /tmp, own pid, ipc,
 * uts and network namespaces) and runs /bin/true under the waiter in it; ok when the waiter
 * reported exit 0. Fails with bwrap's own words (user namespaces refused, no perl...).
 */
export async function probeBwrap(env: NodeJS.ProcessEnv = process.env, timeoutMs = 5000): Promise<ProbeResult> {
  const bwrap = findBwrap(env);
  if (bwrap === undefined) {
    return env.TMUX_RUN_BWRAP
      ? { ok: false, missing: true, reason: `TMUX_RUN_BWRAP=${env.TMUX_RUN_BWRAP} is not an executable file` }
      : { ok: false, missing: true, reason: MISSING_BWRAP };
  }
  if (!executable(PERL)) {
    return { ok: false, reason: `${PERL} (Debian's perl-base) is missing; it reports a sandboxed run's exit status` };
  }
  const args = [
    ...['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'],
    ...processWalls(false),
    '--',
    PERL,
    '-e',
    WAITER,
    '/bin/true',
  ];
  return new Promise<ProbeResult>((resolve) => {
    let status = '';
    let stderr = '';
    const child = spawn(bwrap, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe'], env: { PATH: '/usr/bin:/bin' } });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(0, 2000)));
    const link = child.stdio[STATUS_FD] as Duplex;
    link.setEncoding('utf8');
    link.on('error', () => undefined);
    link.on('data', (c: string) => {
      if (status === '' && c.startsWith(WAITER_READY)) link.write(WAITER_GO);
      status = (status + c).slice(0, 100);
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve({ ok: false, reason: `${bwrap} could not be started: ${e.message}` });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const report = parseWaiter(status);
      if (report.status === 0) return resolve({ ok: true, bwrap });
      const said = stderr.trim().split('\n')[0] ?? '';
      const how = signal ? `was killed by ${signal}` : `exited ${code}`;
      resolve({
        ok: false,
        reason: `${bwrap} cannot make a sandbox here (it ${how}${said ? `: ${said}` : ''}); user namespaces may be refused (sysctl kernel.unprivileged_userns_clone, or AppArmor's kernel.apparmor_restrict_unprivileged_userns)`,
      });
    });
  });
}
