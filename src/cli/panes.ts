// `tmux-run panes`: the live enrollments, as a table or as JSON.
import { listEnrolled, type PaneListing } from '../broker/registry.js';
import { safeJson } from '../broker/escape.js';
import { formatRows, type Cell, type Color } from './common/output.js';
import { existingRegistryDir } from './registry-dir.js';
import { SHELLS, snippetFor, sourceLineFor } from './common/shells.js';
import type { Command } from './command.js';

const STATE_COLOR: Record<PaneListing['state'], Color> = {
  idle: 'green',
  busy: 'yellow',
  running: 'cyan',
  awaiting_approval: 'bold',
  dormant: 'dim',
  unresponsive: 'red',
};

/** The enrolled panes that answer, with records of vanished helpers cleaned up; [] when the directory is missing. */
export async function livePanes(env: NodeJS.ProcessEnv): Promise<PaneListing[]> {
  const dir = existingRegistryDir(env);
  return dir === undefined ? [] : listEnrolled(dir, { cleanup: true, by: 'cli' });
}

export const panes: Command = {
  name: 'panes',
  summary: 'list the enrolled panes',
  help: `Usage: tmux-run panes [--json]

List the tmux panes whose shell is enrolled. A pane whose helper lives but answers nothing (stopped,
or hung) is listed as unresponsive, with why under the table; calls to it are refused
helper_unreachable until it answers again.

Options:
  --json      print a JSON array, one object per pane (the objects tmux_enrolled_panes shows)
  -h, --help  show this help
`,
  spec: { options: { json: false } },
  async run(args, io) {
    const list = await livePanes(io.env);
    if (args.options.has('json')) {
      io.out(safeJson(list) + '\n');
      return 0;
    }
    if (list.length === 0) {
      const lines = SHELLS.map((sh) => `  ${`${sh.name}:`.padEnd(6)}${sourceLineFor(sh, snippetFor(sh))}`);
      io.out(`No panes are enrolled. To enroll one, run this in its shell:\n${lines.join('\n')}\n`);
      return 0;
    }
    const rows: Cell[][] = [
      ['PANE', 'GENERATION', 'SESSION', 'WINDOW', 'SHELL', 'STATE', 'MODE', 'SANDBOX', 'SHELL PID', 'CWD', 'ENROLLED'],
    ];
    for (const p of list) {
      rows.push([
        p.pane_id,
        p.generation,
        p.session,
        `${p.window}:${p.window_name}`,
        // A pane on another host: its shell there (its SHELL PID is that host's).
        p.host ? `${p.shell}@${p.host.name}` : p.shell,
        { text: p.queued > 0 ? `${p.state} (+${p.queued} queued)` : p.state, color: STATE_COLOR[p.state] },
        p.mode === 'unknown' ? '?' : p.mode,
        p.sandbox === 'unknown' ? '?' : p.sandbox,
        String(p.shell_pid),
        p.cwd ?? '?',
        p.enrolled_at.replace(/\.\d+Z$/, 'Z'),
      ]);
    }
    // Why a pane's line is read from the screen where it could have been known exactly, and the
    // prompts the screen check cannot serve (helper/shell/screen/prompt-probe.ts), said under the table.
    const notes = [
      ...list.filter((p) => p.helper_problem).map((p) => `${p.pane_id}: unresponsive: ${p.helper_problem}`),
      ...list
        .filter((p) => p.editor_check_reason !== null)
        .map((p) => `${p.pane_id}: screen check, not exact: ${p.editor_check_reason}`),
      ...list
        .filter((p) => p.prompt_refused)
        .map(
          (p) =>
            `${p.pane_id}: runs are refused editor_not_empty: the screen check cannot serve its prompt (${p.prompt_refused})`,
        ),
    ];
    io.out([...formatRows(io, rows).lines, ...notes].join('\n') + '\n');
    return 0;
  },
};
