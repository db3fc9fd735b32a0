// `tmux-run log`: the audit trail of runs, filtered, as a table or JSON lines; --follow tails it.
import { constants as os } from 'node:os';
import { auditPath } from '../core/audit/audit-log.js';
import { AuditReader, type AuditObject, type Batch } from '../core/audit/audit-reader.js';
import { UsageError } from './common/errors.js';
import { escapeControls, safeJson } from '../broker/escape.js';
import { formatRows, type Cell } from './common/output.js';
import type { Command } from './command.js';

export interface LogFilter {
  pane?: string;
  /** A run id or a prefix of one (lowercase). */
  run?: string;
  /** Only entries at or after this time (ms since the epoch). */
  since?: number;
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `10m`, `2h`, `1.5d`... before `now`, or an ISO date or date-time; throws UsageError. */
export function parseSince(text: string, now: number = Date.now()): number {
  const d = /^(\d+(?:\.\d+)?)([smhdw])$/.exec(text);
  if (d) return now - Number(d[1]) * UNITS[d[2]!]!;
  if (/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) {
    const t = Date.parse(text);
    if (!Number.isNaN(t)) return t;
  }
  throw new UsageError(
    `log: --since takes a duration like 10m, 2h, 3d or an ISO time like 2024-05-01T12:00:00Z, not '${escapeControls(text)}'`,
  );
}

/** True when the entry passes every filter given. */
export function matches(e: AuditObject, f: LogFilter): boolean {
  if (f.pane !== undefined && e.pane_id !== f.pane) return false;
  if (f.run !== undefined && !(typeof e.run_id === 'string' && e.run_id.toLowerCase().startsWith(f.run))) return false;
  if (f.since !== undefined) {
    const t = typeof e.time === 'string' ? Date.parse(e.time) : NaN;
    if (Number.isNaN(t) || t < f.since) return false;
  }
  return true;
}

const SIGNALS = new Map(Object.entries(os.signals).map(([name, n]) => [n, name]));
const text = (v: unknown): string => (typeof v === 'string' && v !== '' ? v : '-');
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** 350ms, 1.2s, 2m05s. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** The pane, with the host's name after `@` for a pane on another host (its entries carry `host`: docs/remote.md). */
function paneOf(e: AuditObject): string {
  const h = e.host as { name?: unknown } | null | undefined;
  const name = typeof h === 'object' && h !== null && typeof h.name === 'string' && h.name ? h.name : undefined;
  return name ? `${text(e.pane_id)}@${name}` : text(e.pane_id);
}

export const LOG_HEADER: Cell[] = ['TIME', 'PANE', 'RUN', 'EVENT', 'OUTCOME', 'STATUS', 'BYTES', 'DURATION', 'DIGEST'];

/** One table row for one audit entry; fields that are missing or odd show as '-'. */
export function logRow(e: AuditObject): Cell[] {
  const time = typeof e.time === 'string' ? e.time.replace(/\.\d+Z$/, 'Z') : '-';
  const exit = num(e.exit_status);
  const sig = e.signal;
  const status =
    exit !== undefined
      ? String(exit)
      : typeof sig === 'number'
        ? (SIGNALS.get(sig) ?? `signal ${sig}`)
        : typeof sig === 'string' && sig
          ? sig
          : '-';
  const out = num(e.stdout_bytes);
  const err = num(e.stderr_bytes);
  const dur = num(e.duration_ms);
  const outcome = text(e.outcome);
  const digest = typeof e.script_digest === 'string' ? e.script_digest.replace(/^sha256:/, '').slice(0, 12) : '-';
  return [
    time,
    paneOf(e),
    typeof e.run_id === 'string' ? e.run_id.slice(0, 8) : '-',
    text(e.event),
    {
      text: outcome,
      color:
        outcome === 'exited' || outcome === 'started' || outcome === 'approved'
          ? 'green'
          : outcome === '-'
            ? undefined
            : 'yellow',
    },
    status,
    out === undefined && err === undefined ? '-' : `${out ?? '-'}/${err ?? '-'}`,
    dur === undefined ? '-' : formatDuration(dur),
    digest || '-',
  ];
}

/** The filters from the command line; throws UsageError for malformed ones. */
function filterFrom(options: Map<string, string | true>): LogFilter {
  const f: LogFilter = {};
  const pane = options.get('pane');
  if (typeof pane === 'string') {
    if (!/^%[0-9]+$/.test(pane))
      throw new UsageError(`log: --pane takes a pane id like %3, not '${escapeControls(pane)}'`);
    f.pane = pane;
  }
  const run = options.get('run');
  if (typeof run === 'string') {
    if (!/^[a-fA-F0-9]+$/.test(run))
      throw new UsageError(`log: --run takes a run id or its first hex digits, not '${escapeControls(run)}'`);
    f.run = run.toLowerCase();
  }
  const since = options.get('since');
  if (typeof since === 'string') f.since = parseSince(since);
  return f;
}

export const log: Command = {
  name: 'log',
  summary: 'show the audit trail of runs',
  help: `Usage: tmux-run log [--json] [--pane %N] [--run RUN] [--since WHEN] [--follow]

Show the audit trail: one entry per run event, never script text or output. Events: start and
end (a script started and ended), refused (not run), held (tmux_run_start accepted a run), wait
and cancel (tmux_run_wait and tmux_run_cancel asked about a held run: OUTCOME says whether it had
finished or was still pending). A run in a pane on another host (tmux-run ssh) shows its pane
as %N@HOST.
The trail is $XDG_STATE_HOME/tmux-run/audit.jsonl (default ~/.local/state/tmux-run/audit.jsonl).

Options:
  --json          print the matching entries as they are, one JSON object per line
  --pane %N       only entries of this pane
  --run RUN       only entries of this run id (or of the run ids starting with these hex digits)
  --since WHEN    only entries since WHEN: a duration back from now (30s, 10m, 2h, 3d, 1w)
                  or an ISO date or time (2024-05-01, 2024-05-01T12:00:00Z)
  --follow        keep printing new entries as they are appended, until interrupted
  -h, --help      show this help
`,
  spec: { options: { json: false, pane: true, run: true, since: true, follow: false } },
  async run(args, io) {
    const filter = filterFrom(args.options);
    const json = args.options.has('json');
    const follow = args.options.has('follow');
    const path = auditPath(io.env);
    const reader = new AuditReader(path);
    let widths: number[] | undefined;
    let header = false;

    const show = (batch: Batch): void => {
      const rows = batch.entries.filter((e) => matches(e, filter));
      if (json) {
        for (const e of rows) io.out(safeJson(e) + '\n');
      } else if (rows.length > 0) {
        const cells = rows.map(logRow);
        const f = formatRows(io, header ? cells : [LOG_HEADER, ...cells], widths ?? LOG_HEADER.map(() => 0));
        widths = f.widths;
        header = true;
        io.out(f.lines.join('\n') + '\n');
      }
      if (batch.bad > 0)
        io.err(
          `tmux-run: skipped ${batch.bad} unparsable line${batch.bad === 1 ? '' : 's'} in ${escapeControls(path)}\n`,
        );
    };

    const first = reader.read(!follow);
    if (!first.exists && !json)
      io.err(
        `tmux-run: no audit trail yet (${escapeControls(path)} does not exist)${follow ? '; waiting for it' : ''}\n`,
      );
    show(first);
    if (!json && first.exists && !header && !follow) io.err('tmux-run: no entries match\n');
    if (!follow) return 0;

    // Wide enough columns for rows that arrive later, so they line up with the header.
    widths ??= [20, 4, 8, 7, 8, 6, 5, 8, 12];
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        try {
          show(reader.read(false));
        } catch (e) {
          io.err(`tmux-run: cannot read ${escapeControls(path)}: ${escapeControls((e as Error).message)}\n`);
        }
      }, 200);
      const stop = (): void => {
        clearInterval(timer);
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    return 0;
  },
};
