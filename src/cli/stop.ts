// `tmux-run stop RUN`: the person stops a held run (a background service, a long build) from any
// terminal, through the same signed request as tmux_run_cancel; the audit trail says by: person.
import { heldTool } from '../broker/long-run.js';
import { heldRunListing, type RunListing, type UnansweredPane } from '../broker/held-runs.js';
import { isPending, type LongResult } from '../broker/result.js';
import { AuditLog, auditPath } from '../core/audit/audit-log.js';
import { escapeControls, safeJson } from '../broker/escape.js';
import { CliError, UsageError } from './common/errors.js';
import { existingRegistryDir } from './registry-dir.js';
import type { Command } from './command.js';

/** How long the run gets to end once stopped (SIGTERM, then SIGKILL after its grace). */
const STOP_WAIT_MS = 10_000;

/** RUN as a run id prefix: a full run id or at least its first 8 hex digits (else bad usage). */
export function runPrefix(run: string, command = 'stop'): string {
  if (!/^[a-fA-F0-9]{8,32}$/.test(run)) {
    throw new UsageError(
      `${command}: '${escapeControls(run)}' is not a run id (32 hex digits, or at least the first 8)`,
    );
  }
  return run.toLowerCase();
}

/**
 * The one held run whose id starts with `run` (a runPrefix). `unanswered`: panes whose helpers did
 * not answer, so that a run not found may be theirs (said so).
 */
export function pickRun(list: RunListing[], run: string, unanswered: UnansweredPane[] = []): RunListing {
  const shown = escapeControls(run);
  const found = list.filter((r) => r.run_id.startsWith(run));
  if (found.length === 0 && unanswered.length > 0) {
    const u = unanswered[0]!;
    throw new CliError(
      `no held run ${shown} among the panes whose helpers answered; pane ${u.pane_id}${unanswered.length > 1 ? ` (and ${unanswered.length - 1} more)` : ''} did not: ${escapeControls(u.reason)}; the run may be held there`,
    );
  }
  if (found.length === 0) {
    throw new CliError(
      `no held run ${shown} (see 'tmux-run runs'; 'tmux-run log --run ${shown}' keeps every outcome). A run started with tmux_run, not tmux_run_start, is not held: 'tmux-run revoke PANE' stops it with the pane's enrollment`,
    );
  }
  if (found.length > 1) {
    throw new CliError(`${found.length} held runs start with ${shown}: give more of the run id`);
  }
  return found[0]!;
}

/** One line saying how the run ended. */
export function describeStop(r: LongResult, before: RunListing): string {
  const id = before.run_id.slice(0, 8);
  if (isPending(r)) return `asked run ${id} to stop; it was still ${r.pending.state} after ${STOP_WAIT_MS / 1000} s`;
  if (before.state === 'finished') return `run ${id} had already finished; nothing was stopped`;
  if (r.ok) return `run ${id} ended by itself before it was stopped (exit ${r.data.completion.exit_status ?? '?'})`;
  if (r.error.code === 'helper_unreachable')
    return `helper_unreachable: run ${id} in pane ${before.pane_id}: ${r.error.message}`;
  const c = r.error.effects?.completion;
  const how =
    c?.state === 'signaled'
      ? `signal ${c.signal}`
      : c?.state === 'exited'
        ? `exit ${c.exit_status}`
        : r.error.effects?.state === 'none'
          ? 'it was still queued: it never ran'
          : 'end unobserved';
  return `${r.error.code === 'cancelled' ? 'stopped' : r.error.code}: run ${id} in pane ${before.pane_id} (${how})`;
}

export const stop: Command = {
  name: 'stop',
  summary: 'stop a held run (a background service, a long run) by its run id',
  help: `Usage: tmux-run stop RUN [--json]

Stop a run held by an enrolled pane's helper (started with tmux_run_start, in the background or
not), as tmux_run_cancel does: a queued run never runs; a running one has its process group sent
SIGTERM, then SIGKILL after a grace. RUN is its run id or its first 8 (or more) hex digits, as
'tmux-run runs' shows it. The audit trail records that the person stopped it.

Exit status: 0 when the run was stopped (or had already ended), 1 when no held run matches or it
did not end in time, 2 for bad usage.

Options:
  --json      print the run's result as tmux_run_cancel returns it
  -h, --help  show this help
`,
  spec: { options: { json: false }, positionals: ['RUN'] },
  async run(args, io) {
    const run = runPrefix(args.positionals[0]!);
    const dir = existingRegistryDir(io.env);
    if (dir === undefined) throw new CliError(`no held run ${run} (no pane is enrolled)`);
    const audit = new AuditLog(auditPath(io.env));
    const { runs: held, unanswered } = await heldRunListing(dir, { by: 'cli', audit });
    const target = pickRun(held, run, unanswered);
    const r = await heldTool(
      {
        target: { kind: 'pane', id: target.pane_id, generation: target.generation },
        run_id: target.run_id,
        wait_ms: STOP_WAIT_MS,
      },
      { dir, audit, log: () => {} },
      'cancel_held',
      { by: 'person' },
    );
    if (args.options.has('json')) io.out(safeJson(r) + '\n');
    else io.out(`${escapeControls(describeStop(r, target))}\n`);
    const failed = isPending(r) || (!r.ok && target.state !== 'finished' && r.error.code !== 'cancelled');
    return failed ? 1 : 0;
  },
};
