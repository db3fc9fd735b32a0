// `tmux-run snippet`: where the enrollment snippet is and the line that sources it.
import { existsSync } from 'node:fs';
import { CliError } from './errors.js';
import { escapeControls } from '../broker/escape.js';
import { shellQuote, snippetPath } from '../os/package-root.js';
import type { Command } from './command.js';

/** The line that enrolls one pane: `source` and the snippet's path, quoted for zsh. */
export const sourceLine = (path: string): string => `source ${shellQuote(path)}`;

/** The line for ~/.zshrc: the same, in every zsh inside tmux. */
export const zshrcLine = (path: string): string => `[[ -n $TMUX ]] && ${sourceLine(path)}`;

export const snippet: Command = {
  name: 'snippet',
  summary: 'print the path of the zsh snippet and the line to source it',
  help: `Usage: tmux-run snippet [--json]

Print the absolute path of shell/tmux-run.zsh (first line), then how to use it: source it in a
zsh pane to enroll that pane, or add the printed line to ~/.zshrc to enroll every zsh in tmux.

Options:
  --json      print {path, source_line, zshrc_line} as JSON
  -h, --help  show this help
`,
  spec: { options: { json: false } },
  async run(args, io) {
    const path = snippetPath();
    if (!existsSync(path)) throw new CliError(`the snippet ${escapeControls(path)} is missing; reinstall tmux-run`);
    if (args.options.has('json')) {
      io.out(`${JSON.stringify({ path, source_line: sourceLine(path), zshrc_line: zshrcLine(path) })}\n`);
      return 0;
    }
    io.out(
      `${escapeControls(path)}\n\n` +
        `Enroll one pane: run this in its zsh\n  ${escapeControls(sourceLine(path))}\n` +
        `Enroll every zsh inside tmux: add this line to ~/.zshrc (or run 'tmux-run setup')\n  ${escapeControls(zshrcLine(path))}\n`,
    );
    return 0;
  },
};
