// `tmux-run setup`: adds the enrollment line to .zshrc (marked, once, undoable) and gives each
// MCP client the server's entry: printed, or merged into the client's file with --write.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { escapeControls, safeJson } from '../broker/escape.js';
import { snippetPath } from '../os/package-root.js';
import { CliError, UsageError } from './errors.js';
import type { Io } from './output.js';
import { zshrcLine } from './snippet.js';
import { CLIENTS, clientIds, type Client, type Place } from './setup/clients.js';
import { mcpBinPath, registryEnv, serverEntry, type ServerEntry } from './setup/entry.js';
import { backup, readSettings, writeSettings } from './setup/files.js';
import { ConfigError } from './setup/merge.js';
import { addBlock, removeBlock, ZshrcEditedError, zshrcPath } from './setup/zshrc.js';
import { escaped, printedText, serverText, writtenText, zshrcText } from './setup/text.js';
import type { ParsedArgs } from './args.js';
import type { Command } from './command.js';

/** What happened to one file (or would, with --dry-run). */
export interface FileReport {
  file: string;
  status: string;
  written: boolean;
  backup: string | null;
}

export interface ZshrcReport extends FileReport {
  line: string;
  /** For `unmarked`/`other_install`: the person's own line that sources a snippet. */
  existing?: { line: number; path: string };
}

export interface ClientReport extends FileReport {
  client: string;
  title: string;
  format: 'json' | 'toml';
  entry: Record<string, unknown>;
  snippet: string;
  command: string | null;
  rewritten: boolean;
  error?: string;
}

const HELP = `Usage: tmux-run setup [--write CLIENT] [--dry-run] [--no-zshrc] [--zshrc FILE] [--json]
       tmux-run setup --undo [--dry-run] [--zshrc FILE] [--json]

Add the line that enrolls every zsh inside tmux to ~/.zshrc ($ZDOTDIR/.zshrc when ZDOTDIR is
set), in a marked block, once: a second run changes nothing, and a line of your own that
already sources the snippet is left alone (nothing is added). Then print, for each MCP client,
the server's entry with this install's absolute paths (node and bin/tmux-run-mcp.js, with
--enable-tool tmux_run, and TMUX_RUN_DIR when the server would not find the registry alone).

--write merges the entry into the client's file instead: other servers and settings are kept,
the file's mode is kept, the previous file is copied to FILE.tmux-run-backup-TIME, the new one
is written atomically; an entry that is already there changes nothing; a file that does not
parse is left alone. Clients and files:
  claude-code  ~/.claude.json (user scope: mcpServers; $CLAUDE_CONFIG_DIR if set)
  codex        ~/.codex/config.toml ([mcp_servers.tmux-run]; $CODEX_HOME if set)
  cursor       ~/.cursor/mcp.json (mcpServers)
  vscode       .vscode/mcp.json in the current directory (servers)
  gemini       ~/.gemini/settings.json (mcpServers; $GEMINI_CLI_HOME if set)

Options:
  --write CLIENT  merge the entry into CLIENT's file (a comma-separated list, or all)
  --undo          remove the block setup added to .zshrc (exactly its lines)
  --dry-run       say what would change, write nothing
  --no-zshrc      leave .zshrc alone
  --zshrc FILE    the zsh startup file to change instead of ~/.zshrc
  --json          print {zshrc, server, clients} as JSON
  -h, --help      show this help
`;

export const setup: Command = {
  name: 'setup',
  summary: 'add the snippet to ~/.zshrc and configure MCP clients (--write CLIENT)',
  help: HELP,
  spec: {
    options: { write: true, undo: false, 'dry-run': false, 'no-zshrc': false, zshrc: true, json: false },
  },
  async run(args, io) {
    const { undo, write, dryRun, zshrc } = checkOptions(args);
    const snippet = snippetPath();
    if (!existsSync(snippet)) throw new CliError(`the snippet ${snippet} is missing; reinstall tmux-run`);
    const place: Place = { home: io.env.HOME || homedir(), cwd: process.cwd(), env: io.env };
    const zshrcFile = typeof args.options.get('zshrc') === 'string' ? (args.options.get('zshrc') as string) : undefined;
    // The entry first: when it cannot be made (a relative TMUX_RUN_DIR), nothing is changed.
    const server = undo ? null : serverEntry(process.execPath, mcpBinPath(), registryEnv(io.env));
    const rc = zshrc ? zshrcStep(zshrcFile ?? zshrcPath(io.env, place.home), snippet, undo, dryRun) : null;
    if (server === null) return report(io, args, rc, null, []);
    // The parsers are loaded only now, not by every tmux-run command.
    const tools = await import('./setup/write.js');
    const clients = CLIENTS.filter((c) => write === undefined || write.includes(c.id)).map((c) =>
      write === undefined ? printed(tools, c, server, place) : written(tools, c, server, place, dryRun),
    );
    return report(io, args, rc, server, clients, write !== undefined);
  },
};

/** The options, checked together: unknown clients and conflicting flags are usage errors. */
function checkOptions(args: ParsedArgs) {
  const o = args.options;
  const undo = o.has('undo');
  const raw = o.get('write');
  if (undo && raw !== undefined) throw new UsageError('setup: --undo and --write cannot be combined');
  if (undo && o.has('no-zshrc')) throw new UsageError('setup: --undo changes only .zshrc; drop --no-zshrc');
  if (o.has('zshrc') && o.has('no-zshrc')) throw new UsageError('setup: --zshrc and --no-zshrc cannot be combined');
  let write: string[] | undefined;
  if (typeof raw === 'string') {
    write = raw === 'all' ? clientIds() : raw.split(',').map((s) => s.trim());
    const unknown = write.find((w) => !clientIds().includes(w));
    if (unknown !== undefined)
      throw new UsageError(`setup: unknown client '${unknown}' (known: ${clientIds().join(', ')}, or all)`);
  }
  return { undo, write, dryRun: o.has('dry-run'), zshrc: !o.has('no-zshrc') };
}

/** Adds (or with `undo` removes) the marked block in `path`. */
function zshrcStep(path: string, snippet: string, undo: boolean, dryRun: boolean): ZshrcReport {
  const file = readSettings(path, 0o600);
  const line = zshrcLine(snippet);
  let result;
  try {
    result = undo ? removeBlock(file.text) : addBlock(file.text, line, snippet);
  } catch (e) {
    if (e instanceof ZshrcEditedError) throw new CliError(`setup: ${path} left unchanged: ${e.message}`);
    throw e;
  }
  const base: ZshrcReport = { file: path, status: result.status, written: false, backup: null, line };
  if ('path' in result) base.existing = { line: result.line, path: result.path };
  if (result.text === file.text || dryRun) return base;
  const copy = file.exists ? backup(file) : null;
  writeSettings(file, result.text, 0o700);
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
  try {
    const file = readSettings(base.file, c.private ? 0o600 : 0o644);
    const merged = tools.mergeInto(c, file.text, server);
    const out: ClientReport = { ...base, status: merged.status, rewritten: merged.rewritten === true };
    if (merged.status === 'unchanged' || dryRun) return out;
    const copy = file.exists ? backup(file) : null;
    writeSettings(file, merged.text, c.private ? 0o700 : 0o755);
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
  rc: ZshrcReport | null,
  server: ServerEntry | null,
  clients: ClientReport[],
  wrote = false,
): number {
  const failed = clients.filter((c) => c.status === 'error');
  if (args.options.has('json')) {
    io.out(safeJson({ zshrc: rc, server, clients }, 2) + '\n');
  } else {
    const dry = args.options.has('dry-run');
    const lines = [...(rc ? zshrcText(io, escaped(rc), dry) : [])];
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
