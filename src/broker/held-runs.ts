// The runs the panes' helpers hold, as tmux_runs and `tmux-run runs` list them: each live helper
// is asked for its own (dead ones are cleaned up on the way, their runs stopped); a helper that
// does not answer (listed unresponsive, or silent within its take-by time) is named with why,
// its runs unknown, rather than left out.
import type { EnrollmentRecord } from '../core/enrollment/record.js';
import type { HeldRunInfo, InputMode } from '../core/protocol/messages.js';
import { askOver, connectHelper } from './helper-client.js';
import { listEnrolled, recordSocket, scanRecords } from './registry.js';
import { HELPER_TAKE_MS } from '../core/protocol/limits.js';
import { TAKE_WAIT_MS, takeBy } from './helper-watch.js';
import { noteSilent, silenceWhy } from './unresponsive.js';
import { helperAlive } from './orphans.js';
import { authorizeHeld } from './authorize.js';
import type { RunContext } from './run-tool.js';
import { listedHost, type ListedHost } from '../core/enrollment/remote-listing.js';

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
  /** The pane's host as listings give it (a pane on another host: docs/remote.md); null for a local pane. */
  host: ListedHost | null;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** A pane whose helper did not answer: its runs are unknown. */
export interface UnansweredPane {
  pane_id: string;
  generation: string;
  /** Why (stopped, or silent), as the listing's helper_problem says it. */
  reason: string;
}

/**
 * Asks one helper for the runs it holds: `silent` when it took no request within its take-by time
 * (it refuses the request if it reads it later), undefined when it cannot be reached (it has just
 * gone, or gone dormant: it holds no run then).
 */
async function heldRunsOf(dir: string, rec: EnrollmentRecord): Promise<HeldRunInfo[] | 'silent' | undefined> {
  const socket = recordSocket(dir, rec);
  let t;
  try {
    t = await connectHelper(socket, HELPER_TAKE_MS);
  } catch {
    return undefined;
  }
  const runs = await askOver(
    t,
    { type: 'list', auth: authorizeHeld(rec, 'list', ''), take_by: takeBy() },
    (r) => (r.type === 'runs' ? r.runs : undefined),
    TAKE_WAIT_MS,
  );
  if (runs || !helperAlive(rec)) return runs;
  noteSilent(rec, socket);
  return 'silent';
}

/** The runs every live helper holds (dead ones are cleaned up on the way, their runs stopped). */
export async function listHeldRuns(
  dir: string,
  opts: { by?: 'broker' | 'cli'; audit?: RunContext['audit'] } = {},
): Promise<RunListing[]> {
  return (await heldRunListing(dir, opts)).runs;
}

/** listHeldRuns, with the panes whose helpers did not answer (their runs unknown). */
export async function heldRunListing(
  dir: string,
  opts: { by?: 'broker' | 'cli'; audit?: RunContext['audit'] } = {},
): Promise<{ runs: RunListing[]; unanswered: UnansweredPane[] }> {
  const panes = await listEnrolled(dir, { cleanup: true, ...opts });
  const records = scanRecords(dir);
  const unanswered: UnansweredPane[] = [];
  const lists = await Promise.all(
    panes.map(async (p) => {
      const rec = records.find((r) => r.enrollment_generation === p.enrollment_generation);
      // A dormant helper holds no run; an unresponsive one is not asked (the listing says why).
      if (p.state === 'unresponsive' || p.state === 'dormant' || !rec) {
        if (p.helper_problem)
          unanswered.push({ pane_id: p.pane_id, generation: p.generation, reason: p.helper_problem });
        return [];
      }
      const runs = await heldRunsOf(dir, rec);
      if (runs === 'silent') {
        unanswered.push({
          pane_id: p.pane_id,
          generation: p.generation,
          reason: silenceWhy(rec, undefined, 'its helper'),
        });
        return [];
      }
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
        host: listedHost(rec),
      }));
    }),
  );
  return {
    runs: lists.flat().sort((a, b) => a.queued_at.localeCompare(b.queued_at)),
    unanswered: unanswered.sort((a, b) => Number(a.pane_id.slice(1)) - Number(b.pane_id.slice(1))),
  };
}
