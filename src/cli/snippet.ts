// `tmux-run snippet`: where each shell's enrollment snippet is, the line that sources it in one
// pane, and the line for the shell's start-up file.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { CliError, UsageError } from './common/errors.js';
import { escapeControls } from '../broker/escape.js';
import { SHELLS, shellNamed, shellNames, snippetFor, sourceLineFor, type Shell } from './common/shells.js';
import type { Command } from './command.js';

/** One shell's snippet and lines, as --json prints them. */
interface SnippetInfo {
  shell: string;
  path: string;
  present: boolean;
  source_line: string;
  rc_file: string;
  rc_line: string;
  /** The same as rc_line, for zsh only (the name before other shells came). */
  zshrc_line?: string;
}

function info(shell: Shell, env: NodeJS.ProcessEnv): SnippetInfo {
  const path = snippetFor(shell);
  const rcLine = shell.rcLine(path);
  return {
    shell: shell.name,
    path,
    present: existsSync(path),
    source_line: sourceLineFor(shell, path),
    rc_file: shell.rcFile(env, env.HOME || homedir()),
    rc_line: rcLine,
    ...(shell.name === 'zsh' ? { zshrc_line: rcLine } : {}),
  };
}

function text(i: SnippetInfo): string {
  const e = escapeControls;
  if (!i.present)
    return `${e(i.path)}\n  missing in this install: ${i.shell} panes cannot enroll (reinstall tmux-run)\n`;
  return (
    `${e(i.path)}\n` +
    `  Enroll one pane: run this in its ${i.shell}\n    ${e(i.source_line)}\n` +
    `  Enroll every ${i.shell} inside tmux: add this line to ${e(i.rc_file)} (or run 'tmux-run setup --shell ${i.shell}')\n` +
    `    ${e(i.rc_line)}\n`
  );
}

export const snippet: Command = {
  name: 'snippet',
  summary: "print each shell's snippet and the lines to source it",
  help: `Usage: tmux-run snippet [--shell SHELL] [--json]

For each shell a pane can enroll from (zsh, bash, fish), or only --shell's: the absolute path of
its snippet (shell/tmux-run.zsh, .bash, .fish; zsh's is the first line), the line that enrolls
one pane when run in it, and the line for that shell's start-up file (~/.zshrc, ~/.bashrc,
~/.config/fish/conf.d/tmux-run.fish) that enrolls every such shell inside tmux ('tmux-run setup'
adds it for you).

Options:
  --shell SHELL  only this shell: zsh, bash or fish
  --json         print {shell, path, present, source_line, rc_file, rc_line} for --shell's (zsh's
                 without it, with zshrc_line too), and without --shell every shell's in shells
  -h, --help     show this help
`,
  spec: { options: { shell: true, json: false } },
  async run(args, io) {
    const name = args.options.get('shell');
    let shells: readonly Shell[] = SHELLS;
    if (typeof name === 'string') {
      const s = shellNamed(name);
      if (!s)
        throw new UsageError(`snippet: unknown shell '${name}' (tmux-run enrolls panes of ${shellNames().join(', ')})`);
      shells = [s];
    }
    const all = shells.map((s) => info(s, io.env));
    const first = all[0]!;
    if (shells.length === 1 && !first.present)
      throw new CliError(`the snippet ${escapeControls(first.path)} is missing; reinstall tmux-run`);
    if (args.options.has('json')) {
      io.out(`${JSON.stringify(shells.length === 1 ? first : { ...first, shells: all })}\n`);
      return 0;
    }
    io.out(all.map(text).join('\n'));
    return 0;
  },
};
