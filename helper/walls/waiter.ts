// The waiter of a pane's kept-alive walls (helper/walls/walls.ts), pid 1 of the sandbox's
// namespaces for as long as the walls live, and what it and the helper say to each other (pure):
// helper/walls/walls-waiter.c when it is built, else helper/walls/waiter.pl (the fallback: Debian
// always has perl-base, and it costs no Node heap). Both speak the same protocol:
// docs/protocol-walls.md.
import { NATIVE_WAITER, waiterKind } from '../../src/core/os/native-spawn.js';
import { PERL } from '../../src/core/os/perl.js';
import { packageRoot } from '../../src/core/os/package-root.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the helper's socket for the runs' streams is, inside the walls (a read-only bind in the private /tmp). */
export const INNER_DIR = '/tmp/.tmux-run-walls';
export const INNER_SOCKET = `${INNER_DIR}/s`;

/** The prctl(2) system call's number per architecture (the per-run subreaper needs it; perl-base has no syscall.ph). */
const PRCTL: Partial<Record<string, number>> = {
  x64: 157,
  arm64: 167,
  riscv64: 167,
  loong64: 167,
  ia32: 172,
  arm: 172,
  ppc64: 171,
  s390x: 172,
};
export const prctlNumber = (arch: string = process.arch): number | undefined => PRCTL[arch];

/** Where the C waiter is bound inside the walls (the private /tmp: no hidden path covers it, and it is not the host's path). */
export const INNER_WAITER = '/tmp/.tmux-run-waiter';
/** Which waiter the walls run: the C one, or perl (with prctl's number) and why. */
export type WaiterProgram =
  { kind: 'native'; path: string } | { kind: 'perl'; prctl: number; why: string; unbuilt?: true };

/**
 * The waiter this helper's walls run (src/core/os/native-spawn.ts waiterKind: the C one when it is
 * built and `TMUX_RUN_SPAWN=node` was not asked for), else the perl one; a string when there is
 * neither (the architecture's prctl number is unknown to the perl one).
 */
export function waiterProgram(
  env: NodeJS.ProcessEnv = process.env,
  path: string = NATIVE_WAITER,
  arch: string = process.arch,
): WaiterProgram | string {
  const k = waiterKind(env, path);
  if (k.kind === 'native') return { kind: 'native', path };
  const prctl = prctlNumber(arch);
  if (prctl === undefined) return `the sandbox does not know this architecture (${arch})`;
  return { kind: 'perl', prctl, why: k.why!, ...(k.unbuilt ? { unbuilt: k.unbuilt } : {}) };
}

/** bwrap's arguments after the walls: the program that is their pid 1, and for the C one its bind (before `--`). */
export function waiterCommand(w: WaiterProgram): { binds: string[]; command: string[] } {
  return w.kind === 'native'
    ? { binds: ['--ro-bind', w.path, INNER_WAITER], command: ['--', INNER_WAITER, INNER_SOCKET] }
    : { binds: [], command: ['--', PERL, '-e', perlWaiter(), INNER_SOCKET, String(w.prctl)] };
}

/**
 * What the waiter does, either one (helper/walls/walls-waiter.c and helper/walls/waiter.pl, `perl -e
 * PROGRAM SOCKET PRCTL`), as pid 1 of the walls (`--as-pid-1`):
 *
 * - On descriptor 3 (a socket pair with the helper, close-on-exec) it writes `R` and waits for the
 *   helper's `G` (WAITER_GO in src/core/os/bwrap.ts: the helper was alive after bwrap set its
 *   parent-death signal), then reads PREFORK requests, `P TOKEN \n` (TOKEN 32 hex digits, no
 *   space), until the helper closes its end, when it exits and the kernel ends the namespace.
 * - For each it forks a run's reaper, which makes itself a subreaper (PR_SET_CHILD_SUBREAPER) and
 *   forks the run's child, the process that becomes the run's /bin/sh; the child dies with its
 *   reaper (PR_SET_PDEATHSIG). The three connections of the run are made now, before any run is
 *   asked for (the helper sends PREFORK when the walls are up, and after each run once its result
 *   is on its way): the reaper connects to SOCKET as `TOKENs` (the status link) and writes `S PID`;
 *   the child connects as `TOKENo` and `TOKENe` (stdout and stderr) and starts a session of its own.
 *   A fork that fails is answered `F TOKEN \n` on descriptor 3.
 * - A run is a request on its child's stdout connection (encodeRequest: 8 hex digits of length, then
 *   INPUT \0 UMASK \0 CWD \0 SCRIPT \0 NAME=VALUE \0 ...), sent only to a child whose three connections are
 *   up: a connection that fails leaves nothing run. The child reads it, shuts that connection's
 *   reading down, writes ACK (the first byte of its stdout: it took the request) and execs /bin/sh
 *   -c SCRIPT with the exact cwd, umask and environment, the two connections as descriptors 1 and
 *   2, stdin /dev/null, nothing else open, every signal's disposition the default and none blocked.
 *   A chdir or exec that fails is written `C errno` / `E errno` (the child tells the reaper on a
 *   close-on-exec pipe), nothing run.
 * - INPUT empty: stdin /dev/null. `p` (input pipe): stdin is a fourth connection the child makes
 *   (`TOKENi`, its writing shut down), which the helper writes the run's input to and half-closes at
 *   eof. `tCOLS,ROWS` (input terminal, the C waiter only; the perl one answers `T 95`): the child
 *   opens a pseudo-terminal in the walls' own devpts (bwrap --dev), of that size, makes its slave
 *   the controlling terminal of the session it leads, sends the master to the helper on the
 *   terminal channel (descriptor 5, helper/walls/fd-channel.c: `T TOKEN` with the master as
 *   SCM_RIGHTS), closes the master, and execs with the slave as descriptors 0, 1 and 2 (its two
 *   connections close at the exec). What fails is written `I errno` / `T errno`, nothing run. The
 *   channel is close-on-exec, and the reaper closes its copy: no run ever holds it.
 * - The reaper waits for the child, then SIGKILLs whatever the run left (every orphan of the run is
 *   its child, setsid, nohup and double forks included; /proc is read only when some child is left)
 *   until it has no child at all, and only then writes `W STATUS` (the raw wait status) and exits.
 * - As the namespace's init the waiter takes no signal a run sends it (the kernel drops those left
 *   at the default), ignores SIGPIPE (a reaper a run killed) and SIGCHLD (a killed reaper's orphans
 *   are reaped by the kernel); the run's processes get both back as they were.
 */
/**
 * The perl waiter's program: helper/walls/waiter.pl, shipped with the package (package.json
 * "files") and found from its root as the snippets are, read the first time the perl waiter runs.
 */
export function perlWaiter(): string {
  return (perlProgram ??= readFileSync(join(packageRoot(), 'helper', 'walls', 'waiter.pl'), 'utf8'));
}
let perlProgram: string | undefined;

/** A PREFORK request: the waiter forks a run's reaper and child now, their connections named by `token` (32 hex digits). */
export const prefork = (token: string): string => `P${token}\n`;
/** What a run's child writes first on its stdout connection once it has its request (before its exec). */
export const ACK = 'A';

/** One run's request to its child (latin1 strings: one character per byte). */
export interface WaiterRequest {
  /** What its stdin is (absent: /dev/null). */
  input?: { kind: 'pipe' } | { kind: 'terminal'; cols: number; rows: number };
  umask: number | undefined;
  cwd: string;
  script: string;
  env: Readonly<Record<string, string>>;
}

/** The request as the child reads it: its length in 8 hex digits, then the NUL-separated fields (pure). */
export function encodeRequest(r: WaiterRequest): Buffer {
  const input = r.input === undefined ? '' : r.input.kind === 'pipe' ? 'p' : `t${r.input.cols},${r.input.rows}`;
  const fields = [
    input,
    r.umask === undefined ? '' : r.umask.toString(8),
    r.cwd,
    Buffer.from(r.script, 'utf8').toString('latin1'),
    ...Object.entries(r.env).map(([k, v]) => `${k}=${v}`),
  ];
  const body = Buffer.from(fields.map((f) => `${f}\0`).join(''), 'latin1');
  return Buffer.concat([Buffer.from(body.length.toString(16).padStart(8, '0'), 'latin1'), body]);
}

/** What a run's reaper said on its status link so far (pure): its pid in the walls, a failure, the end. */
export interface ReaperReport {
  pid?: number;
  failed?: string;
  status?: number;
}

/** What a child that ran nothing says failed (the reaper passes it on). */
const FAILED = {
  C: "the shell's current directory could not be entered",
  E: '/bin/sh could not be executed',
  I: "the run's input could not be connected in the sandbox",
  T: "the run's terminal could not be made in the sandbox",
} as const;

export function parseReaper(text: string): ReaperReport {
  const r: ReaperReport = {};
  // Only whole lines: a chunk may end inside one (`W 38` of `W 3840`).
  for (const line of text.split('\n').slice(0, -1)) {
    const m = /^([SCEWIT]) (\d{1,10})$/.exec(line);
    if (!m) continue;
    const n = Number(m[2]);
    if (m[1] === 'S') r.pid = n;
    else if (m[1] === 'W') r.status = n;
    else r.failed ??= `${FAILED[m[1] as keyof typeof FAILED]} (errno ${n})`;
  }
  return r;
}
