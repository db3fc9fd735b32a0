// A sandbox for CLI tests that need no tmux: a private HOME, TMUX_RUN_DIR and XDG_STATE_HOME.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { makePrivateDir } from '../../lab/run-root.js';

export interface Sandbox {
  dir: string;
  registryDir: string;
  stateDir: string;
  env: Record<string, string>;
  remove(): void;
}

/** A private temporary HOME, TMUX_RUN_DIR (0700) and XDG_STATE_HOME, for tests without tmux. */
export function sandbox(): Sandbox {
  const dir = makePrivateDir('cli-', ['run', 'state']);
  const registryDir = join(dir, 'run');
  const stateDir = join(dir, 'state');
  return {
    dir,
    registryDir,
    stateDir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      TMUX_RUN_DIR: registryDir,
      XDG_STATE_HOME: stateDir,
      LANG: 'C.UTF-8',
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
