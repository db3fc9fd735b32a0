// Running the tmux client against a private socket, with a clean environment and no config.
import { execFile, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

/** The directories panes search for programs, after the running node's. */
export const STANDARD_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** First executable called name on the given PATH entries. */
export function findExecutable(name: string, dirs: string[]): string | undefined {
  for (const dir of dirs) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The tmux binary: on PATH, else in the standard directories. */
export function tmuxBinary(): string | undefined {
  return findExecutable('tmux', [...(process.env.PATH ?? '').split(delimiter), ...STANDARD_PATH]);
}

/** The zsh binary: in the standard directories, else on PATH. */
export function zshBinary(): string | undefined {
  return findExecutable('zsh', STANDARD_PATH) ?? findExecutable('zsh', (process.env.PATH ?? '').split(delimiter));
}

/** PATH for panes: the running node first, then the standard directories. */
export function panePath(): string {
  const dirs = [dirname(process.execPath), ...STANDARD_PATH];
  return [...new Set(dirs)].join(delimiter);
}

/** tmux takes an argument ending in ';' as a command separator; escape that last ';'. */
export function tmuxArg(arg: string): string {
  return arg.endsWith(';') ? `${arg.slice(0, -1)}\\;` : arg;
}

/** Run `tmux -S socket -f /dev/null ...args` with exactly env; resolve stdout, reject with stderr. */
export function runTmux(tmuxBin: string, socket: string, env: Record<string, string>, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      tmuxBin,
      ['-S', socket, '-f', '/dev/null', ...args],
      { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          const detail = stderr.trim() || err.message;
          reject(new Error(`tmux ${args.join(' ')}: ${detail}`));
        } else {
          resolve(stdout);
        }
      },
    );
  });
}

/** The tmux call that starts a server (`new-session`), run under `launcher` (an argv prefix) when one is given. */
export function startTmuxServer(
  tmuxBin: string,
  socket: string,
  env: Record<string, string>,
  args: string[],
  launcher: string[] = [],
): Promise<string> {
  const [program, ...prefix] = launcher;
  if (program === undefined) return runTmux(tmuxBin, socket, env, args);
  return new Promise((resolve, reject) => {
    execFile(
      program,
      [...prefix, tmuxBin, '-S', socket, '-f', '/dev/null', ...args],
      { env, encoding: 'utf8' },
      (err, stdout, stderr) =>
        err
          ? reject(new Error(`${launcher.join(' ')} tmux ${args.join(' ')}: ${stderr.trim() || err.message}`))
          : resolve(stdout),
    );
  });
}

/** Synchronous `kill-server` on socket (for exit hooks and sweeps); true when a server was there. */
export function killServerSync(tmuxBin: string, socket: string, env: Record<string, string>): boolean {
  return spawnSync(tmuxBin, ['-S', socket, '-f', '/dev/null', 'kill-server'], { env, timeout: 5000 }).status === 0;
}
