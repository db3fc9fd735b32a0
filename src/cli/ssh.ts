// `tmux-run ssh`: the person's ssh session with its far end enrolled. The command lives in
// src/remote/ssh-command.ts (its arguments are ssh's, taken as they are: src/cli/main.ts).
import type { Command } from './command.js';
import { HELP } from '../remote/ssh-command.js';

export const ssh: Command = {
  name: 'ssh',
  summary: "your ssh session, its far end's shell enrolled in this pane (see docs/remote.md)",
  help: HELP,
  spec: { options: {} },
  run: () => Promise.reject(new Error('ssh takes its arguments raw')),
};
