// `tmux-run setup`: adds the enrollment line to the shell's start-up file (marked, once,
// undoable) and gives each MCP client the server's entry: printed, or merged into the client's
// file with --write.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { escapeControls, safeJson } from '../broker/escape.js';
import { CliError, UsageError } from './common/errors.js';
import type { Io } from './common/output.js';
import { loginShell, shellNamed, shellNames, snippetFor, type Shell } from './common/shells.js';
import { CLIENTS, clientIds, isPrivate, type Client, type Place } from './setup/clients.js';
import { mcpBinPath, registryEnv, serverEntry, type ServerEntry } from './setup/entry.js';
import { backup, readSettings, removeSettings, writeSettings } from './setup/files.js';
import { ConfigError } from './setup/merge.js';
import { addBlock, RcEditedError, removeBlock } from './setup/rc.js';
import { escaped, printedText, rcText, serverText, writtenText } from './setup/text.js';
import type { ClientReport, RcReport } from './setup/report.js';
import type { ParsedArgs } from './args.js';
import type { Command } from './command.js';

const HELP = `Usage: tmux-run setup [--shell SHELL] [--write CLIENT] [--dry-run] [--no-rc] [--rc FILE] [--json]
       tmux-run setup --undo [--shell SHELL] [--dry-run] [--rc FILE] [--json]

Add the line that enrolls every interactive shell inside tmux to that shell's start-up file, in
a marked block, once: a second run changes nothing, and a line of your own that already sources
the snippet is left alone (nothing is added). The shell is --shell, else the name of $SHELL:
  zsh   ~/.zshrc ($ZDOTDIR/.zshrc when ZDOTDIR is set)
  bash  ~/.bashrc
  fish  ~/.config/fish/conf.d/tmux-run.fish ($XDG_CONFIG_HOME/fish/conf.d/ when it is set)
Then print, for each MCP client, the server's entry with this install's absolute paths (node
and bin/tmux-run-mcp.js, with --enable-tool tmux_run, and TMUX_RUN_DIR when the server would not
find the registry alone).

--write merges the entry into the client's file instead: other servers and settings are kept,
the file's mode is kept, the previous file is copied to FILE.tmux-run-backup-TIME, the new one
is written atomically; an entry that is already there changes nothing; a file that does not
parse is left alone. Clients and files:
  claude-code  ~/.claude.json (user scope: mcpServers; $CLAUDE_CONFIG_DIR if set)
  codex        ~/.codex/config.toml ([mcp_servers.tmux-run]; $CODEX_HOME if set)
  cursor       ~/.cursor/mcp.json (mcpServers)
  vscode       inside a workspace (a folder with .vscode/ or .git/, not your home): its
               .vscode/mcp.json; elsewhere your user profile's mcp.json,
               ~/.config/Code/User/mcp.json ($XDG_CONFIG_HOME/Code/User/ if set) (servers)
  gemini       ~/.gemini/settings.json (mcpServers; $GEMINI_CLI_HOME if set)

Options:
  --shell SHELL   zsh, bash or fish: whose start-up file to change (default: the name of $SHELL)
  --write CLIENT  merge the entry into CLIENT's file (a comma-separated list, or all)
  --undo          remove the block setup added to the start-up file (exactly its lines; fish's
                  conf.d/tmux-run.fish is removed when nothing else is left in it)
  --dry-run       say what would change, write nothing
  --no-rc         leave the start-up file alone (--no-zshrc is the same)
  --rc FILE       the start-up file to change instead (--zshrc FILE is the same)
  --json          print {rc, zshrc, server, clients} as JSON (zshrc: rc when the shell is zsh)
  -h, --help      show this help
`;

export const setup: Command = {
  name: 'setup',
  summary: "add the snippet to your shell's start-up file and configure MCP clients (--write CLIENT)",
  help: HELP,
  spec: {
    options: {
      shell: true,
      write: true,
      undo: false,
      'dry-run': false,
      'no-rc': false,
      'no-zshrc': false,
      rc: true,
      zshrc: true,
      json: false,
    },
  },
  async run(args, io) {
    const { undo, write, dryRun, shell, rcFile } = checkOptions(args, io.env);
    const snippet = shell ? snippetFor(shell) : undefined;
    if (snippet !== undefined && !existsSync(snippet))
      throw new CliError(`the snippet ${snippet} is missing; reinstall tmux-run`);
    const place: Place = { home: io.env.HOME || homedir(), cwd: process.cwd(), env: io.env };
    // The entry first: when it cannot be made (a relative TMUX_RUN_DIR), nothing is changed.
    const server = undo ? null : serverEntry(process.execPath, mcpBinPath(), registryEnv(io.env));
    const rc =
      shell && snippet ? rcStep(shell, rcFile ?? shell.rcFile(io.env, place.home), snippet, undo, dryRun) : null;
    if (server === null) return report(io, args, rc, null, []);
    // The parsers are loaded only now, not by every tmux-run command.
    const tools = await import('./setup/write.js');
    const clients = CLIENTS.filter((c) => write === undefined || write.includes(c.id)).map((c) =>
      write === undefined ? printed(tools, c, server, place) : written(tools, c, server, place, dryRun),
    );
    return report(io, args, rc, server, clients, write !== undefined);
  },
};

/** The value of the first of `names` that is given (aliases: --rc and --zshrc). */
const either = (o: ParsedArgs['options'], ...names: string[]): string | true | undefined =>
  names.map((n) => o.get(n)).find((v) => v !== undefined);

/** The options, checked together: unknown clients or shells and conflicting flags are usage errors. */
function checkOptions(args: ParsedArgs, env: NodeJS.ProcessEnv) {
  const o = args.options;
  const undo = o.has('undo');
  const raw = o.get('write');
  const noRc = o.has('no-rc') || o.has('no-zshrc');
  const rcFile = either(o, 'rc', 'zshrc');
  if (undo && raw !== undefined) throw new UsageError('setup: --undo and --write cannot be combined');
  if (undo && noRc) throw new UsageError('setup: --undo changes only the start-up file; drop --no-rc');
  if (rcFile !== undefined && noRc) throw new UsageError('setup: --rc and --no-rc cannot be combined');
  if (o.has('rc') && o.has('zshrc')) throw new UsageError('setup: --rc and --zshrc are the same option; give one');
  if (o.has('shell') && noRc) throw new UsageError('setup: --shell names the start-up file to change; drop --no-rc');
  let write: string[] | undefined;
  if (typeof raw === 'string') {
    write = raw === 'all' ? clientIds() : raw.split(',').map((s) => s.trim());
    const unknown = write.find((w) => !clientIds().includes(w));
    if (unknown !== undefined)
      throw new UsageError(`setup: unknown client '${unknown}' (known: ${clientIds().join(', ')}, or all)`);
  }
  // The old --zshrc FILE names a zsh file: zsh unless --shell says otherwise.
  const shell = noRc ? undefined : chosenShell(o.get('shell') ?? (o.has('zshrc') ? 'zsh' : undefined), env);
  return { undo, write, dryRun: o.has('dry-run'), shell, rcFile: typeof rcFile === 'string' ? rcFile : undefined };
}

/** --shell, else the shell $SHELL names; anything else is a usage error naming the three. */
function chosenShell(option: string | true | undefined, env: NodeJS.ProcessEnv): Shell {
  const known = shellNames().join(', ');
  if (typeof option === 'string') {
    const s = shellNamed(option);
    if (!s) throw new UsageError(`setup: unknown shell '${option}' (tmux-run enrolls panes of ${known})`);
    return s;
  }
  const s = loginShell(env);
  if (s) return s;
  const said = env.SHELL ? `$SHELL is ${env.SHELL}` : '$SHELL is not set';
  throw new UsageError(
    `setup: ${said}, and tmux-run enrolls panes of ${known}: name one with --shell, or leave start-up files alone with --no-rc`,
  );
}

/** Adds (or with `undo` removes) the marked block in `path`. */
function rcStep(shell: Shell, path: string, snippet: string, undo: boolean, dryRun: boolean): RcReport {
  const file = readSettings(path, 0o600);
  const line = shell.rcLine(snippet);
  let result;
  try {
    result = undo ? removeBlock(shell, file.text) : addBlock(shell, file.text, line, snippet);
  } catch (e) {
    if (e instanceof RcEditedError) throw new CliError(`setup: ${path} left unchanged: ${e.message}`);
    throw e;
  }
  const base: RcReport = { shell: shell.name, file: path, status: result.status, written: false, backup: null, line };
  if ('path' in result) base.existing = { line: result.line, path: result.path };
  if (result.text === file.text || dryRun) return base;
  const copy = file.exists ? backup(file) : null;
  // fish's conf.d file is tmux-run's own: with the block gone and nothing else in it, it goes too.
  if (result.text === '' && shell.ownFile && undo) removeSettings(file);
  else writeSettings(file, result.text, 0o700);
  return { ...base, written: true, backup: copy };
}

type Tools = typeof import('./setup/write.js');

function describeClient(tools: Tools, c: Client, server: ServerEntry, place: Place) {
  return {
    client: c.id,
    title: c.title,
    format: c.format,
    file: c.file(place),
    entry: c.entry(server),
    snippet: tools.fragment(c, server),
    command: c.command?.(server) ?? null,
    rewritten: false,
    written: false,
    backup: null,
  };
}

const printed = (tools: Tools, c: Client, server: ServerEntry, place: Place): ClientReport => ({
  ...describeClient(tools, c, server, place),
  status: 'not_written',
});

/** Merges the entry into the client's file (or says what would change, with `dryRun`). */
function written(tools: Tools, c: Client, server: ServerEntry, place: Place, dryRun: boolean): ClientReport {
  const base = describeClient(tools, c, server, place);
  const own = isPrivate(c, place);
  try {
    const file = readSettings(base.file, own ? 0o600 : 0o644);
    const merged = tools.mergeInto(c, file.text, server);
    const out: ClientReport = { ...base, status: merged.status, rewritten: merged.rewritten === true };
    if (merged.status === 'unchanged' || dryRun) return out;
    const copy = file.exists ? backup(file) : null;
    writeSettings(file, merged.text, own ? 0o700 : 0o755);
    return { ...out, written: true, backup: copy };
  } catch (e) {
    if (!(e instanceof ConfigError) && !(e instanceof CliError)) throw e;
    const why = e instanceof ConfigError ? `${base.file} left unchanged: ${e.message}` : e.message;
    return { ...base, status: 'error', error: why };
  }
}

/** Prints the reports; exit 1 when a client's file could not be changed. */
function report(
  io: Io,
  args: ParsedArgs,
  rc: RcReport | null,
  server: ServerEntry | null,
  clients: ClientReport[],
  wrote = false,
): number {
  const failed = clients.filter((c) => c.status === 'error');
  if (args.options.has('json')) {
    io.out(safeJson({ rc, zshrc: rc?.shell === 'zsh' ? rc : null, server, clients }, 2) + '\n');
  } else {
    const dry = args.options.has('dry-run');
    const lines = [...(rc ? rcText(io, escaped(rc), dry) : [])];
    if (server) lines.push(...serverText(escaped(server)));
    for (const r of clients) {
      const c = escaped({ ...r, snippet: r.snippet.trimEnd().split('\n') });
      lines.push('', ...(wrote ? writtenText(io, c, dry) : printedText(io, c)));
    }
    io.out(lines.join('\n') + '\n');
  }
  for (const c of failed) io.err(`tmux-run: setup: ${escapeControls(c.error ?? '')}\n`);
  return failed.length > 0 ? 1 : 0;
}
