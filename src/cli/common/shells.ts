// The shells a pane can enroll from, as the CLI sees them: each one's snippet, the oldest
// version it runs in, its start-up file and the line `setup` puts there. `snippet`, `setup` and
// `doctor` read this table; no shell's name is tested anywhere else in the CLI.
import { basename, join } from 'node:path';
import { packageRoot, shellQuote } from '../../core/os/package-root.js';

export type ShellName = 'zsh' | 'bash' | 'fish';

export interface Shell {
  name: ShellName;
  /** The oldest version whose pane can enroll ([major, minor]). */
  minVersion: [number, number];
  /** The arguments that make it print its version on its first line. */
  versionArgs: string[];
  /** The start-up file `setup` changes (every interactive shell of this kind reads it). */
  rcFile(env: NodeJS.ProcessEnv, home: string): string;
  /** The file is tmux-run's own (fish's conf.d): `--undo` removes it when nothing else is left. */
  ownFile: boolean;
  /** A path quoted for this shell, when it holds anything but plain path characters. */
  quote(path: string): string;
  /** The line for the start-up file: source `snippet` in every interactive shell inside tmux. */
  rcLine(snippet: string): string;
}

/**
 * `path` quoted for fish: inside fish's single quotes `\\` and `\'` are escapes, so both are
 * escaped (the POSIX `'\''` would be read wrongly after a backslash).
 */
export function fishQuote(path: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}

/** `[[ -n $TMUX ]] && source ...`: zsh's and bash's line. */
const posixLine = (quote: (p: string) => string) => (snippet: string) => `[[ -n $TMUX ]] && source ${quote(snippet)}`;

export const SHELLS: readonly Shell[] = [
  {
    name: 'zsh',
    minVersion: [5, 9],
    versionArgs: ['--version'],
    rcFile: (env, home) => join(env.ZDOTDIR || home, '.zshrc'),
    ownFile: false,
    quote: shellQuote,
    rcLine: posixLine(shellQuote),
  },
  {
    name: 'bash',
    minVersion: [4, 4],
    versionArgs: ['--version'],
    // Interactive non-login bash reads ~/.bashrc (Debian's ~/.profile sources it for login shells).
    rcFile: (_env, home) => join(home, '.bashrc'),
    ownFile: false,
    quote: shellQuote,
    rcLine: posixLine(shellQuote),
  },
  {
    name: 'fish',
    minVersion: [3, 4],
    versionArgs: ['--version'],
    // fish sources every file in conf.d at start, interactive or not: the line checks both.
    rcFile: (env, home) => join(env.XDG_CONFIG_HOME || join(home, '.config'), 'fish', 'conf.d', 'tmux-run.fish'),
    ownFile: true,
    quote: fishQuote,
    rcLine: (snippet) => `set -q TMUX; and status is-interactive; and source ${fishQuote(snippet)}`,
  },
];

export const shellNames = (): ShellName[] => SHELLS.map((s) => s.name);

/** The shell named `name`, or undefined for one tmux-run does not enroll from. */
export const shellNamed = (name: string): Shell | undefined => SHELLS.find((s) => s.name === name);

/** The shell `$SHELL` names (its basename: /usr/bin/fish is fish), or undefined when it names none we know. */
export const loginShell = (env: NodeJS.ProcessEnv): Shell | undefined =>
  env.SHELL ? shellNamed(basename(env.SHELL)) : undefined;

/** This install's snippet for `shell`. */
export const snippetFor = (shell: Shell): string => join(packageRoot(), 'shell', `tmux-run.${shell.name}`);

/** The line that enrolls one pane: `source` and the snippet's path, quoted for that shell. */
export const sourceLineFor = (shell: Shell, path: string): string => `source ${shell.quote(path)}`;
