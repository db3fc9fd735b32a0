// Where servers keep their files: one private directory per test run (made by global-setup.ts),
// swept at the end so that whatever a crashed or careless test left behind is found and stopped.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killHard, processesReferencing } from './processes.js';
import { killServerSync, panePath, tmuxBinary } from './tmux-command.js';
import { waitUntil } from './waiting.js';

/** Environment variable naming the per-run directory made by global-setup.ts. */
export const RUN_ROOT_VAR = 'TMUX_RUN_TEST_ROOT';

/** Name of the socket file inside each server's directory. */
export const SOCKET_NAME = 'sock';

/** A directory for temp files whose socket paths stay well under the 108-byte limit. */
export function tempRoot(): string {
  let root = tmpdir();
  try {
    root = realpathSync(root);
  } catch {
    root = '/tmp';
  }
  return root.length > 60 ? '/tmp' : root;
}

/** Parent of every server's directory: the test run's root when global setup made one. */
export function runRoot(): string {
  const root = process.env[RUN_ROOT_VAR];
  return root !== undefined && root !== '' && existsSync(root) ? root : tempRoot();
}

/** A fresh private directory (0700) under the run root, holding the named private (0700) subdirectories. */
export function makePrivateDir(prefix: string, subdirs: string[] = []): string {
  const dir = mkdtempSync(join(runRoot(), prefix));
  chmodSync(dir, 0o700);
  for (const sub of subdirs) {
    mkdirSync(join(dir, sub), { mode: 0o700 });
    chmodSync(join(dir, sub), 0o700);
  }
  return dir;
}

/** Make a per-run root for server directories (0700) and return it. */
export function makeRunRoot(prefix = 'tmux-run-tests-'): string {
  const root = mkdtempSync(join(tempRoot(), prefix));
  chmodSync(root, 0o700);
  return root;
}

/**
 * Safety net after a whole test run: kill every tmux server still listening under root and
 * every process still mentioning root, remove root, and say what was found (tests that kill
 * their servers leave nothing, so the answer is normally []).
 */
export async function sweepRunRoot(root: string): Promise<string[]> {
  const found: string[] = [];
  const tmuxBin = tmuxBinary();
  let dirs: string[];
  try {
    dirs = readdirSync(root);
  } catch {
    return found;
  }
  for (const dir of dirs) {
    const socket = join(root, dir, SOCKET_NAME);
    if (tmuxBin === undefined || !existsSync(socket)) continue;
    if (killServerSync(tmuxBin, socket, { PATH: panePath() })) found.push(`tmux server on ${socket} was still running`);
  }
  await waitUntil(() => processesReferencing([root]).length === 0, 2000, 'leftovers to exit').catch(() => undefined);
  for (const ref of processesReferencing([root])) {
    found.push(ref.what);
    killHard(ref.pid);
  }
  rmSync(root, { recursive: true, force: true });
  return found;
}
