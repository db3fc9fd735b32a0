// `tmux-run runs`: the runs the live helpers hold (started with tmux_run_start), as a table or JSON.
import { listHeldRuns, type RunListing } from '../broker/held-runs.js';
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
itself (a label it chose, not an identity; '-' when it gave none).

Options:
  --json      print a JSON array, one object per run (the objects tmux_runs shows, with client)
  -h, --help  show this help
`,
  spec: { options: { json: false } },
  async run(args, io) {
    const dir = existingRegistryDir(io.env);
    const list =
      dir === undefined ? [] : await listHeldRuns(dir, { by: 'cli', audit: new AuditLog(auditPath(io.env)) });
    if (args.options.has('json')) {
      io.out(safeJson(list) + '\n');
      return 0;
    }
    if (list.length === 0) {
      io.out('No run is held. Runs started with tmux_run_start are listed here until their results are dropped.\n');
      return 0;
    }
    const now = Date.now();
    const rows: Cell[][] = [
      ['RUN', 'PANE', 'STATE', 'OUTCOME', 'BYTES', 'INPUT', 'AGE', 'HELD UNTIL', 'DIGEST', 'CLIENT'],
    ];
    for (const r of list) {
      rows.push([
        r.run_id,
        r.pane_id,
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
    return 0;
  },
};
