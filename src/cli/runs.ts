// `tmux-run runs`: the runs the live helpers hold (started with tmux_run_start), as a table or JSON.
import { heldRunListing, type RunListing, type UnansweredPane } from '../broker/held-runs.js';
import { escapeControls } from '../broker/escape.js';
import { AuditLog, auditPath } from '../core/audit/audit-log.js';
import { safeJson } from '../broker/escape.js';
import { formatRows, type Cell, type Color } from './common/output.js';
import { existingRegistryDir } from './registry-dir.js';
import { formatDuration } from './log.js';
import type { Command } from './command.js';

const STATE_COLOR: Record<RunListing['state'], Color> = {
  queued: 'dim',
  awaiting_approval: 'yellow',
  running: 'cyan',
  finished: 'green',
};

/** The outcome column: exit N, a signal, or the error code. */
function outcomeText(r: RunListing): string {
  const o = r.outcome;
  if (!o) return '-';
  const status = o.exit_status !== null ? `exit ${o.exit_status}` : o.signal !== null ? `signal ${o.signal}` : '';
  return o.ok ? status : `${o.code ?? 'error'}${status ? ` (${status})` : ''}`;
}

export const runs: Command = {
  name: 'runs',
  summary: 'list the runs held for tmux_run_wait (started with tmux_run_start)',
  help: `Usage: tmux-run runs [--json]

List the runs that the enrolled panes' helpers hold: runs started with tmux_run_start that are
queued, running, or finished with a result still to be fetched (for 10 minutes, at most 32 per
pane). Runs of tmux_run are not held. A helper found dead on the way has its runs stopped and
recorded in the audit trail. A run started with background: true shows "(bg)" after its state;
INPUT is what a run started with input pipe or terminal reads and the bytes it was given so far
("(attached)": the person has its terminal, with 'tmux-run attach RUN');
stop one with 'tmux-run stop RUN'. CLIENT is who asked: the name and version the MCP client gave
itself (a label it chose, not an identity; '-' when it gave none). A pane on another host
(tmux-run ssh) shows as %N@HOST.

A pane whose helper does not answer (stopped, or hung) cannot say what it holds: one line on
stderr names it and why, and the exit status is 1 (the list is incomplete); otherwise 0.

Options:
  --json      print a JSON array, one object per run (the objects tmux_runs shows, with client and host)
  -h, --help  show this help
`,
  spec: { options: { json: false } },
  async run(args, io) {
    const dir = existingRegistryDir(io.env);
    const { runs: list, unanswered } =
      dir === undefined
        ? { runs: [], unanswered: [] }
        : await heldRunListing(dir, { by: 'cli', audit: new AuditLog(auditPath(io.env)) });
    const status = sayUnanswered(io, unanswered);
    if (args.options.has('json')) {
      io.out(safeJson(list) + '\n');
      return status;
    }
    if (list.length === 0) {
      io.out(
        `No run is held${unanswered.length > 0 ? ' by the panes whose helpers answered' : ''}. Runs started with tmux_run_start are listed here until their results are dropped.\n`,
      );
      return status;
    }
    const now = Date.now();
    const rows: Cell[][] = [
      ['RUN', 'PANE', 'STATE', 'OUTCOME', 'BYTES', 'INPUT', 'AGE', 'HELD UNTIL', 'DIGEST', 'CLIENT'],
    ];
    for (const r of list) {
      rows.push([
        r.run_id,
        // A pane on another host: %N@HOST, as `tmux-run log` shows it.
        r.host ? `${r.pane_id}@${r.host.name}` : r.pane_id,
        { text: `${r.state.replace('_', ' ')}${r.background ? ' (bg)' : ''}`, color: STATE_COLOR[r.state] },
        outcomeText(r),
        `${r.stdout_bytes}/${r.stderr_bytes}`,
        r.input === 'closed' ? '-' : `${r.input} ${r.input_bytes}${r.attached ? ' (attached)' : ''}`,
        formatDuration(now - Date.parse(r.queued_at)),
        r.held_until?.replace(/\.\d+Z$/, 'Z') ?? '-',
        r.script_digest.slice(0, 12),
        r.client ?? '-',
      ]);
    }
    io.out(formatRows(io, rows).lines.join('\n') + '\n');
    return status;
  },
};

/** One stderr line per pane whose helper did not answer; the exit status (1 when any). */
export function sayUnanswered(io: { err(s: string): void }, unanswered: UnansweredPane[]): number {
  for (const u of unanswered)
    io.err(`tmux-run: pane ${u.pane_id}: its runs are unknown: ${escapeControls(u.reason)}\n`);
  return unanswered.length > 0 ? 1 : 0;
}
