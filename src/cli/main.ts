// The tmux-run CLI: picks the command, parses its arguments, turns failures into one line and
// an exit status (0 success, 1 failure, 2 bad usage).
import { parseArgs, wantsHelp } from './args.js';
import { CliError, UsageError } from './common/errors.js';
import { escapeControls } from '../broker/escape.js';
import { processIo, type Io } from './common/output.js';
import { packageVersion } from '../core/os/package-root.js';
import { panes } from './panes.js';
import { revoke } from './revoke.js';
import { snippet } from './snippet.js';
import { log } from './log.js';
import { doctor } from './doctor.js';
import { runs } from './runs.js';
import { setup } from './setup.js';
import { stop } from './stop.js';
import { attach } from './attach.js';
import { watch } from './watch.js';
import type { Command } from './command.js';
import { ssh } from './ssh.js';
import { sshCommand } from '../remote/ssh-command.js';
import { HELP as REMOTE_SETUP_HELP, setupRemote } from '../remote/setup-remote.js';

export const COMMANDS: readonly Command[] = [
  panes,
  runs,
  watch,
  stop,
  attach,
  revoke,
  snippet,
  log,
  doctor,
  setup,
  ssh,
];

/** Commands whose arguments are ssh's (src/remote/): taken as they are, not parsed here. */
const raw = (
  name: string,
  rest: readonly string[],
): ((argv: readonly string[], io: Io) => Promise<number>) | undefined =>
  name === 'ssh' ? sshCommand : name === 'setup' && rest.includes('--remote') ? setupRemote : undefined;

export function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `Usage: tmux-run COMMAND [OPTIONS]

Manage the tmux panes enrolled for tmux-run (the MCP server is tmux-run-mcp).

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Run 'tmux-run COMMAND --help' for a command's options.
`;
}

/** One line, no control characters: what a failure prints after `tmux-run: `. */
const oneLine = (message: string): string => escapeControls(message.replace(/\s*\n\s*/g, '; '));

/** Runs the CLI with `argv` (without node and script); resolves the exit status. */
export async function main(argv: readonly string[], io: Io = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '-h' || name === '--help' || name === 'help') {
    const cmd = name === 'help' && rest[0] !== undefined ? COMMANDS.find((c) => c.name === rest[0]) : undefined;
    if (name === 'help' && rest[0] !== undefined && cmd === undefined) {
      io.err(`tmux-run: unknown command '${escapeControls(rest[0])}'\n${usage()}`);
      return 2;
    }
    io.out(cmd?.help ?? usage());
    return 0;
  }
  if (name === '--version' || name === '-V') {
    io.out(`tmux-run ${packageVersion()}\n`);
    return 0;
  }
  if (name === undefined) {
    io.err(usage());
    return 2;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (cmd === undefined) {
    io.err(`tmux-run: unknown command '${escapeControls(name)}'\n${usage()}`);
    return 2;
  }
  const rawRun = raw(name, rest);
  if (wantsHelp(rest)) {
    io.out(rawRun === setupRemote ? REMOTE_SETUP_HELP : cmd.help);
    return 0;
  }
  try {
    if (rawRun) return await rawRun(rest, io);
    return await cmd.run(parseArgs(cmd.name, cmd.spec, rest), io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`tmux-run: ${oneLine(e.message)} (see 'tmux-run ${cmd.name} --help')\n`);
      return e.exitCode;
    }
    io.err(`tmux-run: ${oneLine(e instanceof Error ? e.message : String(e))}\n`);
    return e instanceof CliError ? e.exitCode : 1;
  }
}

// A reader that goes away (`tmux-run log | head`) is not an error.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

const code = await main(process.argv.slice(2));
// Exit explicitly once the output is flushed: a helper that never answered can leave a
// half-closed socket behind, which must not keep the CLI running.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
