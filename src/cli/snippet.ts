// `tmux-run snippet`: where the enrollment snippet is and the line that sources it.
import { existsSync } from 'node:fs';
import { CliError } from './errors.js';
import { escapeControls } from '../broker/escape.js';
import { shellQuote, snippetPath } from '../os/package-root.js';
import type { Command } from './command.js';

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
      const quoted = shellQuote(path);
      io.out(
        `${JSON.stringify({ path, source_line: `source ${quoted}`, zshrc_line: `[[ -n $TMUX ]] && source ${quoted}` })}\n`,
      );
      return 0;
    }
    const q = escapeControls(shellQuote(path));
    io.out(
      `${escapeControls(path)}\n\n` +
        `Enroll one pane: run this in its zsh\n  source ${q}\n` +
        `Enroll every zsh inside tmux: add this line to ~/.zshrc\n  [[ -n $TMUX ]] && source ${q}\n`,
    );
    return 0;
  },
};
