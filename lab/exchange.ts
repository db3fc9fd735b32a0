// Swapping two paths in one step (renameat2 with RENAME_EXCHANGE), for tests that replace a
// directory in use with a symlink to it: a rename followed by a symlink leaves a moment with no
// directory at all, which a helper checking its record then takes for the end of its enrollment.
// Node has no renameat2, so perl (Debian's essential perl-base) makes the system call.
import { spawnSync } from 'node:child_process';

/** renameat2's number on the architectures this suite runs on. */
const SYS_RENAMEAT2: Partial<Record<string, number>> = { x64: 316, arm64: 276 };

/** Swaps what the two absolute paths name, atomically; throws when the kernel refuses. */
export function exchangePaths(a: string, b: string): void {
  const nr = SYS_RENAMEAT2[process.arch];
  if (nr === undefined) throw new Error(`exchangePaths: no renameat2 number known for ${process.arch}`);
  // AT_FDCWD is -100; RENAME_EXCHANGE is 2.
  const r = spawnSync(
    'perl',
    ['-e', 'syscall($ARGV[0], -100, $ARGV[1], -100, $ARGV[2], 2) == 0 or die "renameat2: $!\\n"', String(nr), a, b],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`cannot exchange ${a} and ${b}: ${r.stderr || r.error?.message}`);
}
