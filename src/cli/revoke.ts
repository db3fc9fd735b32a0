// `tmux-run revoke PANE`: ends one enrollment through its helper, signed with its secret.
import { existsSync } from 'node:fs';
import type { EnrollmentRecord } from '../core/enrollment/record.js';
import { recordPath } from '../core/enrollment/layout.js';
import { signRevoke } from '../core/protocol/token.js';
import type { Reply } from '../core/protocol/messages.js';
import { connectHelper, exchange } from '../broker/helper-client.js';
import { readStatus } from '../core/enrollment/pane-status.js';
import { askShell, isDormant } from '../core/enrollment/dormant.js';
import { listEnrolled, recordSocket, removeEnrollmentFiles, scanRecords } from '../broker/registry.js';
import { CliError, UsageError } from './common/errors.js';
import { escapeControls } from '../broker/escape.js';
import { existingRegistryDir } from './registry-dir.js';
import type { Command } from './command.js';

/** How long the helper gets to answer, and then to remove its record. */
const ANSWER_MS = 3000;
const GONE_MS = 3000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** What choosing needs of a listing or a record. */
export interface Candidate {
  pane_id: string;
  generation: string;
  tmux_socket: string;
}

/**
 * Picks the enrollment PANE names: a pane id (`%3`) or a listed generation (or a prefix of
 * one), narrowed by `generation`; when one pane id is enrolled on several tmux servers, the one
 * on the server in `tmuxEnv` ($TMUX) wins. Undefined when none matches; throws when PANE is
 * malformed or several remain.
 */
export function choose<T extends Candidate>(
  list: T[],
  pane: string,
  generation: string | undefined,
  tmuxEnv: string | undefined,
): T | undefined {
  const byGen = (g: string) => (p: T) => p.generation.startsWith(g.toLowerCase());
  const shown = escapeControls(pane);
  let found = /^%[0-9]+$/.test(pane)
    ? list.filter((p) => p.pane_id === pane)
    : /^[a-fA-F0-9]{4,32}$/.test(pane)
      ? list.filter(byGen(pane))
      : undefined;
  if (found === undefined) throw new UsageError(`revoke: '${shown}' is neither a pane id like %3 nor a generation`);
  if (generation !== undefined) found = found.filter(byGen(generation));
  if (found.length > 1) {
    const socket = tmuxEnv?.split(',')[0];
    const here = socket ? found.filter((p) => p.tmux_socket === socket) : [];
    if (here.length === 1) return here[0]!;
    throw new CliError(
      `pane ${shown} is enrolled ${found.length} times (${found.map((p) => p.generation.slice(0, 8)).join(', ')}, on different tmux servers); choose one with --generation`,
    );
  }
  return found[0];
}

/** Sends the signed revocation to the helper beside the record in `dir`; resolves true when it confirmed, false when it did not answer. */
async function sendRevoke(dir: string, rec: EnrollmentRecord): Promise<boolean> {
  let t;
  try {
    t = await connectHelper(recordSocket(dir, rec), ANSWER_MS);
  } catch {
    return false;
  }
  const x = exchange(t);
  const issuedAt = Date.now();
  return new Promise<boolean>((resolve, reject) => {
    const timer = setTimeout(() => {
      x.close();
      resolve(false);
    }, ANSWER_MS);
    const done = (f: () => void): void => {
      clearTimeout(timer);
      x.onreply = undefined;
      x.onclose = undefined;
      x.close();
      f();
    };
    x.onreply = (r: Reply) => {
      if (r.type === 'revoked') done(() => resolve(true));
      else if (r.type === 'error')
        done(() => reject(new CliError(`the helper refused the revocation: ${escapeControls(r.message)}`)));
    };
    x.onclose = () => done(() => resolve(false));
    x.send({
      type: 'revoke',
      enrollment_generation: rec.enrollment_generation,
      issued_at: issuedAt,
      token: signRevoke(Buffer.from(rec.secret, 'hex'), rec.enrollment_generation, issuedAt),
    });
  });
}

export const revoke: Command = {
  name: 'revoke',
  summary: 'end the enrollment of a pane',
  help: `Usage: tmux-run revoke PANE [--generation G] [--json]

End the enrollment of PANE: its helper stops and nothing more can run there. The shell itself
is left alone. PANE is a pane id as tmux names it (%3) or a generation from 'tmux-run panes'.

Options:
  --generation G  the enrollment to end, when the same pane id is enrolled on several tmux
                  servers (the pane on the server in $TMUX is chosen otherwise)
  --json          print {revoked, pane_id, generation, confirmed_by_helper} as JSON
  -h, --help      show this help
`,
  spec: { options: { generation: true, json: false }, positionals: ['PANE'] },
  async run(args, io) {
    const pane = args.positionals[0]!;
    const generation = args.options.get('generation');
    if (generation !== undefined && (generation === true || !/^[a-fA-F0-9]{4,32}$/.test(generation))) {
      throw new UsageError(`revoke: --generation takes a generation (hex) from 'tmux-run panes'`);
    }
    const dir = existingRegistryDir(io.env);
    const notFound = (): CliError =>
      new CliError(
        `no enrolled pane ${escapeControls(pane)}${generation === undefined ? '' : ` with generation ${generation}`}`,
      );
    if (dir === undefined) throw notFound();
    const live = await listEnrolled(dir, { cleanup: true, by: 'cli' });
    const records = scanRecords(dir);
    const target = choose(live, pane, generation, io.env.TMUX);
    // Not listed, but its record is still there (its helper is alive and does not answer, or
    // its pane changed): revoking it removes what it left.
    const rec =
      target === undefined
        ? choose(
            records.filter((r) => !live.some((p) => p.enrollment_generation === r.enrollment_generation)),
            pane,
            generation,
            io.env.TMUX,
          )
        : records.find((r) => r.enrollment_generation === target.enrollment_generation);
    if (rec === undefined) throw notFound();

    // A dormant pane has no helper to ask: its shell is told (X), and the record goes, so nothing can wake it.
    const dormant = isDormant(readStatus(dir, rec));
    if (dormant) {
      const told = askShell(dir, rec, 'X');
      removeEnrollmentFiles(dir, rec, told ? new Set([rec.channel]) : undefined, 'cli');
    }
    const confirmed = !dormant && (await sendRevoke(dir, rec));
    if (dormant) {
      /* done above */
    } else if (!confirmed) {
      removeEnrollmentFiles(dir, rec, undefined, 'cli');
      io.err(
        `tmux-run: the helper (pid ${rec.helper_pid}) did not answer; removed its enrollment files (it exits when its record is gone)\n`,
      );
    } else {
      const path = recordPath(dir, rec.enrollment_generation);
      const deadline = Date.now() + GONE_MS;
      while (existsSync(path) && Date.now() < deadline) await sleep(50);
      if (existsSync(path)) {
        removeEnrollmentFiles(dir, rec, undefined, 'cli');
        io.err(`tmux-run: the helper confirmed but did not remove its record within ${GONE_MS / 1000} s; removed it\n`);
      }
    }
    if (args.options.has('json')) {
      io.out(
        `${JSON.stringify({ revoked: true, pane_id: rec.pane_id, generation: rec.generation, confirmed_by_helper: confirmed })}\n`,
      );
    } else {
      io.out(`revoked pane ${rec.pane_id} (generation ${rec.generation})\n`);
    }
    return 0;
  },
};
