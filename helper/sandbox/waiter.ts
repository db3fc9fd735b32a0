// The waiter of a pane's kept-alive walls (helper/sandbox/walls.ts), pid 1 of the sandbox's
// namespaces for as long as the walls live, and what it and the helper say to each other (pure):
// helper/native/walls-waiter.c when it is built, else the perl program below (the fallback: Debian
// always has perl-base, and it costs no Node heap). Both speak the same protocol.
import { NATIVE_WAITER, waiterKind } from '../../src/os/native-spawn.js';
import { PERL } from '../../src/os/perl.js';

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
 * The waiter this helper's walls run (src/os/native-spawn.ts waiterKind: the C one when it is
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
    : { binds: [], command: ['--', PERL, '-e', WALLS_WAITER, INNER_SOCKET, String(w.prctl)] };
}

/**
 * What the waiter does, either one (helper/native/walls-waiter.c and the perl one below, `perl -e
 * WALLS_WAITER SOCKET PRCTL`), as pid 1 of the walls (`--as-pid-1`):
 *
 * - On descriptor 3 (a socket pair with the helper, close-on-exec) it writes `R` and waits for the
 *   helper's `G` (WAITER_READY in src/os/bwrap.ts: the helper was alive after bwrap set its
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
 *   terminal channel (descriptor 5, helper/native/fd-channel.c: `T TOKEN` with the master as
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
export const WALLS_WAITER = String.raw`use strict; use Socket; use POSIX ();
my ($path, $prctl) = @ARGV;
open(my $c, "+<&=", 3) or exit 125; fcntl($c, 2, 1) or exit 125; syswrite($c, "R") or exit 125;
$SIG{ALRM} = sub { print STDERR "tmux-run: this pane's helper did not answer the sandbox\n"; exit 125 }; alarm 10;
my $g = ""; (sysread($c, $g, 1) // 0) == 1 && $g eq "G" or exit 125; alarm 0;
$SIG{ALRM} = "DEFAULT"; $SIG{CHLD} = "IGNORE"; $SIG{PIPE} = "IGNORE";
sub readn { my ($f, $n) = @_; my $x = ""; while (length($x) < $n) { my $r = sysread($f, $x, $n - length $x, length $x);
  if (!defined $r) { next if $!{EINTR}; return undef } return undef if $r == 0 } $x }
sub put { my ($f, $x) = @_; while (length $x) { my $n = syswrite($f, $x); if (!defined $n) { next if $!{EINTR}; return 0 } substr($x, 0, $n) = "" } 1 }
sub take { my $f = shift; my $x = ""; while (1) { my $r = sysread($f, $x, 65536, length $x); if (!defined $r) { next if $!{EINTR}; return undef } last if $r == 0 } $x }
sub kids { my @k; opendir(my $d, "/proc") or return; for my $p (readdir $d) { next unless $p =~ /^\d+$/;
  open(my $f, "<", "/proc/$p/stat") or next; my $l = <$f> // next; push @k, $p if $l =~ /\) \S+ (\d+)/ && $1 == $$ } @k }
sub link_to { my $k = shift; my $x; socket($x, AF_UNIX, SOCK_STREAM, 0) && connect($x, pack_sockaddr_un($path)) && put($x, $k) ? $x : undef }
sub shell_to_be { my ($t, $reaper, $fail) = @_;
  syscall($prctl, 1, 9, 0, 0, 0) == 0 && getppid() == $reaper or POSIX::_exit(125);
  my $out = link_to($t . "o\n") or POSIX::_exit(125); my $err = link_to($t . "e\n") or POSIX::_exit(125); POSIX::setsid();
  my $n = readn($out, 8); POSIX::_exit(0) unless defined $n; $n =~ /^[0-9a-f]{8}$/ or POSIX::_exit(125);
  my $req = readn($out, hex $n); POSIX::_exit(125) unless defined $req; shutdown($out, 0); put($out, "A") or POSIX::_exit(125);
  my ($inp, $um, $cwd, $script, @env) = split(/\0/, $req, -1); pop @env if @env && $env[-1] eq "";
  defined $script or do { put($fail, "E 22\n"); POSIX::_exit(125) }; my $i;
  if ($inp eq "p") { $i = link_to($t . "i\n") or do { put($fail, "I " . ($! + 0) . "\n"); POSIX::_exit(125) }; shutdown($i, 1) }
  elsif ($inp ne "") { put($fail, ($inp =~ /^t/ ? "T" : "I") . " 95\n"); POSIX::_exit(125) }
  umask(oct $um) if $um ne "";
  chdir($cwd) or do { put($fail, "C " . ($! + 0) . "\n"); POSIX::_exit(125) };
  %ENV = map { my $i = index($_, "="); (substr($_, 0, $i), substr($_, $i + 1)) } grep { index($_, "=") > 0 } @env;
  $i ? open(STDIN, "<&", $i) : open(STDIN, "<", "/dev/null"); open(STDOUT, ">&", $out); open(STDERR, ">&", $err);
  exec { "/bin/sh" } "/bin/sh", "-c", $script; put($fail, "E " . ($! + 0) . "\n"); POSIX::_exit(127) }
sub reaper { my $t = shift; $SIG{CHLD} = "DEFAULT"; $SIG{PIPE} = "DEFAULT";
  syscall($prctl, 36, 1, 0, 0, 0) == 0 or exit 125; pipe(my $fr, my $fw) or exit 125; my $self = $$;
  my $p = fork; exit 125 unless defined $p; if (!$p) { close $fr; shell_to_be($t, $self, $fw) } close $fw;
  my $st = link_to($t . "s\n") or do { kill 9, $p; exit 125 }; $SIG{PIPE} = "IGNORE"; put($st, "S $p\n"); my $w = 0;
  while (1) { my $k = waitpid(-1, 0); if ($k == $p) { $w = $?; last } last if $k == -1 && !$!{EINTR} }
  my $e = take($fr) // ""; put($st, $e) if $e =~ /^[CE] \d+\n$/;
  while (1) { my $r = waitpid(-1, 1); last if $r == -1; next if $r > 0; my @k = kids();
    if (!@k) { select(undef, undef, undef, 0.001); next } kill 9, @k; my $n = 0; $n++ while waitpid(-1, 1) > 0;
    select(undef, undef, undef, 0.001) unless $n }
  put($st, "W $w\n"); exit 0 }
while (1) { my $m = readn($c, 34) // exit 0; $m =~ /^P([0-9a-f]{32})\n$/ or exit 125; my $t = $1; my $p = fork;
  if (!defined $p) { put($c, "F$t\n"); next } if (!$p) { close $c; reaper($t) } }`;

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
