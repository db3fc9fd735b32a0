// The runs the panes' helpers hold, as tmux_runs and `tmux-run runs` list them: each live helper
// is asked for its own (dead ones are cleaned up on the way, their runs stopped).
import type { EnrollmentRecord } from '../core/enrollment/record.js';
import type { HeldRunInfo, InputMode } from '../core/protocol/messages.js';
import { askOnce } from './helper-client.js';
import { listEnrolled, recordSocket, scanRecords } from './registry.js';
import { authorizeHeld } from './authorize.js';
import type { RunContext } from './run-tool.js';

/** One held run as tmux_runs and `tmux-run runs` show it. */
export interface RunListing {
  run_id: string;
  pane_id: string;
  generation: string;
  script_digest: string;
  state: HeldRunInfo['state'];
  queued_at: string;
  started_at: string | null;
  finished_at: string | null;
  outcome: HeldRunInfo['outcome'];
  stdout_bytes: number;
  stderr_bytes: number;
  held_until: string | null;
  background: boolean;
  /** What the run reads (closed: /dev/null), the input given so far, and whether the person has its terminal. */
  input: InputMode;
  input_bytes: number;
  attached: boolean;
  /** Who asked (the MCP client's name and version from initialize), null when it gave none. */
  client: string | null;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** Asks one helper for the runs it holds; undefined when it does not answer within `ms`. */
async function heldRunsOf(dir: string, rec: EnrollmentRecord, ms = 2000): Promise<HeldRunInfo[] | undefined> {
  return askOnce(
    recordSocket(dir, rec),
    { type: 'list', auth: authorizeHeld(rec, 'list', '') },
    (r) => (r.type === 'runs' ? r.runs : undefined),
    ms,
  );
}

/** The runs every live helper holds (dead ones are cleaned up on the way, their runs stopped). */
export async function listHeldRuns(
  dir: string,
  opts: { by?: 'broker' | 'cli'; audit?: RunContext['audit'] } = {},
): Promise<RunListing[]> {
  const panes = await listEnrolled(dir, { cleanup: true, ...opts });
  const records = scanRecords(dir);
  const lists = await Promise.all(
    panes.map(async (p) => {
      const rec = records.find((r) => r.enrollment_generation === p.enrollment_generation);
      const runs = rec ? await heldRunsOf(dir, rec) : undefined;
      return (runs ?? []).map((r): RunListing => ({
        run_id: r.run_id,
        pane_id: p.pane_id,
        generation: p.generation,
        script_digest: r.script_digest,
        state: r.state,
        queued_at: iso(r.queued_at)!,
        started_at: iso(r.started_at),
        finished_at: iso(r.finished_at),
        outcome: r.outcome,
        stdout_bytes: r.stdout_bytes,
        stderr_bytes: r.stderr_bytes,
        held_until: iso(r.held_until),
        background: r.background,
        input: r.input ?? 'closed',
        input_bytes: r.input_bytes ?? 0,
        attached: r.attached ?? false,
        client: r.client ?? null,
      }));
    }),
  );
  return lists.flat().sort((a, b) => a.queued_at.localeCompare(b.queued_at));
}
