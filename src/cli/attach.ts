// `tmux-run attach RUN`: the person takes a terminal run over. Their terminal is joined to the
// run's own (raw mode, on the alternate screen so that what it showed comes back after): the
// run's screen is redrawn, their keys go to the run and its output to them, until the detach key
// (Ctrl-]) or the run's end. Meanwhile the agent's input is refused (run_attached). Only the
// person can attach: the request is signed with the enrollment's secret, in the private registry.
import { heldRunListing } from '../broker/held-runs.js';
import { authorizeHeld, isRecord, resolveTarget } from '../broker/authorize.js';
import { connectHelper, exchange } from '../broker/helper-client.js';
import { recordSocket } from '../broker/registry.js';
import { failure } from '../broker/result.js';
import { AuditLog, auditPath } from '../core/audit/audit-log.js';
import { escapeControls } from '../broker/escape.js';
import type { Reply } from '../core/protocol/messages.js';
import { CliError } from './common/errors.js';
import { existingRegistryDir } from './registry-dir.js';
import { pickRun, runPrefix } from './stop.js';
import type { Command } from './command.js';

/** The detach key: Ctrl-] (GS, 0x1d), as telnet's escape. */
export const DETACH_KEY = 0x1d;
/** Into the alternate screen, and back out of it with the modes a program may have left set. */
const ENTER = '\x1b[?1049h';
const LEAVE = '\x1b[?1l\x1b>\x1b[?2004l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[0m\x1b[?25h\x1b[?1049l';

interface Terminal {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
}

/** Joins the person's terminal to the run until detach or its end; resolves how it ended. */
function join(
  term: Terminal,
  link: ReturnType<typeof exchange>,
): Promise<'detached' | 'ended' | 'lost' | Extract<Reply, { type: 'error' }>> {
  return new Promise((resolve) => {
    let joined = false;
    let done = false;
    const finish = (how: 'detached' | 'ended' | 'lost' | Extract<Reply, { type: 'error' }>): void => {
      if (done) return;
      done = true;
      term.stdin.off('data', onKeys);
      if (joined) {
        term.stdin.setRawMode(false);
        term.stdin.pause();
        term.stdout.write(LEAVE);
      }
      link.close();
      resolve(how);
    };
    const onKeys = (chunk: Buffer): void => {
      const at = chunk.indexOf(DETACH_KEY);
      const keys = at < 0 ? chunk : chunk.subarray(0, at);
      if (keys.length > 0) link.send({ type: 'keys', data: Buffer.from(keys) });
      if (at >= 0) finish('detached');
    };
    link.onreply = (r) => {
      if (r.type === 'error') return finish(r);
      if (r.type === 'attached') {
        joined = true;
        term.stdin.setRawMode(true);
        term.stdout.write(ENTER);
        term.stdout.write(r.redraw);
        term.stdin.on('data', onKeys);
        term.stdin.resume();
        return;
      }
      if (r.type === 'attach_output') {
        if (r.data.length > 0) term.stdout.write(r.data);
        if (r.ended) finish('ended');
      }
    };
    link.onclose = () => finish('lost');
  });
}

export const attach: Command = {
  name: 'attach',
  summary: 'take over a terminal run (input terminal) in this terminal; Ctrl-] gives it back',
  help: `Usage: tmux-run attach RUN

Join this terminal to a run started with tmux_run_start input "terminal": its screen is redrawn
here, your keys go to the run and its output comes here, until you press Ctrl-] (detach) or the
run ends; then this terminal is as it was. Meanwhile the agent's input to the run is refused
(run_attached), so what you type (a password, say) never mixes with what it sends. RUN is the run
id or its first 8 (or more) hex digits, as 'tmux-run runs' and the pane's notice show it.

Exit status: 0 after detaching or the run's end, 1 when no held terminal run matches or it cannot
be attached, 2 for bad usage.

Options:
  -h, --help  show this help
`,
  spec: { options: {}, positionals: ['RUN'] },
  async run(args, io) {
    const run = runPrefix(args.positionals[0]!, 'attach');
    const dir = existingRegistryDir(io.env);
    if (dir === undefined) throw new CliError(`no held run ${run} (no pane is enrolled)`);
    const { runs: held, unanswered } = await heldRunListing(dir, { by: 'cli', audit: new AuditLog(auditPath(io.env)) });
    const target = pickRun(held, run, unanswered);
    const short = target.run_id.slice(0, 8);
    if (target.input !== 'terminal')
      throw new CliError(
        `not_a_terminal: run ${short} was not started with input terminal; it has no terminal to take over`,
      );
    if (target.state === 'finished') throw new CliError(`input_closed: run ${short} has ended`);
    if (!process.stdin.isTTY || !process.stdout.isTTY)
      throw new CliError('attach needs a terminal: run it in a terminal (a tmux window or pane), not through a pipe');
    const t = { kind: 'pane' as const, id: target.pane_id, generation: target.generation };
    const rec = resolveTarget(dir, t, (code, message) => failure(code, message, 'not_sent'));
    if (!isRecord(rec)) throw new CliError(rec.ok ? 'internal error' : `${rec.error.code}: ${rec.error.message}`);
    const link = exchange(await connectHelper(recordSocket(dir, rec)));
    io.err(`tmux-run: attaching to run ${short} in pane ${target.pane_id}; press Ctrl-] to detach\n`);
    link.send({ type: 'attach', run_id: target.run_id, auth: authorizeHeld(rec, 'attach', target.run_id) });
    const how = await join({ stdin: process.stdin, stdout: process.stdout }, link);
    if (typeof how === 'object') throw new CliError(`${how.code}: ${escapeControls(how.message)}`);
    io.err(
      how === 'detached'
        ? `tmux-run: detached from run ${short}; it goes on (tmux-run attach ${short} to come back)\n`
        : how === 'ended'
          ? `tmux-run: run ${short} has ended\n`
          : `tmux-run: the link to pane ${target.pane_id}'s helper broke; run ${short} is left to it\n`,
    );
    return how === 'lost' ? 1 : 0;
  },
};
