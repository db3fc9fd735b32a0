// A run's cwd and environment as the shell has them, byte for byte. Node's spawn takes both as JS
// strings and hands them to the kernel as UTF-8 (FACTS.md), so a snapshot with a byte that is not
// UTF-8 (helper/shell/snapshot.ts `bytes`) is started through a small perl exec wrapper instead: it
// reads the exact cwd and NAME=VALUE entries from descriptor 3, enters the directory, sets the
// environment and execs /bin/sh (same pid, so the session, group and exit status are the script's).
// Also the kernel's limits on one string of the environment, named before anything is spawned.
import { PERL } from '../../src/core/os/perl.js';
import type { SnapshotFields } from '../shell/snapshot.js';

export { PERL };

/**
 * The wrapper (perl -e): descriptor 3 is a socket pair with the helper, marked close-on-exec; it
 * reads `CWD \0 NAME=VALUE \0 ...` until the helper shuts its side, then chdir, %ENV, exec. On a
 * failure it writes `C errno` (chdir) or `E errno` (exec) there and exits 125 or 127 with nothing
 * started; an exec that works closes the descriptor with nothing written.
 */
export const EXACT_EXEC =
  'open(my $s, "+<&=", 3) or exit 125; fcntl($s, 2, 1) or exit 125; local $/; my $d = <$s> // "";' +
  ' my ($c, @e) = split(/\\0/, $d, -1); pop @e if @e && $e[-1] eq "";' +
  ' chdir($c) or do { syswrite($s, "C " . ($! + 0)); exit 125 };' +
  ' %ENV = map { my $i = index($_, "="); (substr($_, 0, $i), substr($_, $i + 1)) } grep { index($_, "=") > 0 } @e;' +
  ' exec { $ARGV[0] } @ARGV; syswrite($s, "E " . ($! + 0)); exit 127;';

/** What the wrapper reads on descriptor 3: the cwd and each NAME=VALUE, NUL-terminated (pure). */
export function exactSpec(bytes: Pick<SnapshotFields, 'cwd' | 'env'>): Buffer {
  const parts = [bytes.cwd, ...Object.entries(bytes.env).map(([k, v]) => `${k}=${v}`)];
  return Buffer.from(parts.map((p) => `${p}\0`).join(''), 'latin1');
}

/** What the wrapper reported, as the reason the script was not started, or undefined (pure). */
export function exactFailure(report: string): string | undefined {
  const m = /^([CE]) (\d{1,4})/.exec(report);
  if (!m) return undefined;
  const errno = Number(m[2]);
  const why = errno === 7 ? 'E2BIG' : errno === 2 ? 'ENOENT' : errno === 13 ? 'EACCES' : `errno ${errno}`;
  return m[1] === 'C' ? `the shell's current directory could not be entered (${why})` : `exec failed (${why})`;
}

/** The kernel's limit on one string of an exec's arguments or environment, its NUL included (MAX_ARG_STRLEN). */
export const MAX_ARG_STRLEN = 32 * 4096;

/**
 * Why the kernel would refuse to exec with this environment (spawn E2BIG), naming the variable and
 * its size, never its value; undefined when every entry fits (pure). `latin1`: one character per byte.
 */
export function envRefusal(env: Readonly<Record<string, string>>, latin1 = false): string | undefined {
  for (const [k, v] of Object.entries(env)) {
    const size = latin1 ? k.length + 1 + v.length : Buffer.byteLength(k) + 1 + Buffer.byteLength(v);
    if (size + 1 > MAX_ARG_STRLEN) {
      const name = latin1 ? Buffer.from(k, 'latin1').toString('utf8') : k;
      return `the exported variable ${JSON.stringify(name.slice(0, 64))} is ${size} bytes as NAME=VALUE, over the kernel's limit of ${MAX_ARG_STRLEN - 1} bytes for one string of a program's environment (E2BIG); unset or shorten it in the pane's shell`;
    }
  }
  return undefined;
}

/** The message for a spawn the kernel refused as too big overall: the largest variables, by name and size (pure). */
export function e2bigDetail(env: Readonly<Record<string, string>>): string {
  const sizes = Object.entries(env)
    .map(([k, v]) => [k, Buffer.byteLength(k) + 1 + Buffer.byteLength(v)] as const)
    .sort((a, b) => b[1] - a[1]);
  const total = sizes.reduce((n, [, s]) => n + s + 1, 0);
  const top = sizes
    .slice(0, 3)
    .map(([k, s]) => `${JSON.stringify(k.slice(0, 64))} ${s} bytes`)
    .join(', ');
  return `the exported environment (${sizes.length} variables, ${total} bytes; the largest: ${top}) is more than the kernel passes to a program (E2BIG); unset some of it in the pane's shell`;
}
