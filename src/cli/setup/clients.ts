// The MCP clients `tmux-run setup` knows: where each keeps its servers, in which format, and the
// entry as that client writes it. Adding a client is one row here.
// No parser is loaded here (every `tmux-run` command loads this table): write.ts does the merging.
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { shellQuote } from '../../core/os/package-root.js';
import { SERVER_NAME, type ServerEntry } from './entry.js';
import type { JsonDialect } from './json-config.js';

/** Codex's table of MCP servers. */
export const CODEX_CONTAINER = 'mcp_servers';

/** Where the files are looked for: the person's home, the current project, the environment. */
export interface Place {
  home: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface Client {
  id: string;
  title: string;
  format: 'json' | 'toml';
  /** How the client reads its JSON file (json only). */
  dialect?: JsonDialect;
  /** The key that holds the servers. */
  container: string;
  /** The settings file; `private`: in the person's home (a new file 0600, new folders 0700). */
  file(place: Place): string;
  private: boolean | ((place: Place) => boolean);
  /** The server's entry as this client writes it. */
  entry(server: ServerEntry): Record<string, unknown>;
  /** The client's own command that adds the entry, when it has one. */
  command?(server: ServerEntry): string;
}

/** Whether the client's file for `place` is the person's own (see Client.private). */
export const isPrivate = (c: Client, place: Place): boolean =>
  typeof c.private === 'function' ? c.private(place) : c.private;

const isDir = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/**
 * Inside a VS Code workspace: the current folder, when it is not the home directory (whose
 * ~/.vscode holds VS Code's extensions, not a workspace's settings), already has a `.vscode/`
 * folder or is a repository's top (`.git`). Elsewhere the entry goes to the user profile.
 */
export const inWorkspace = (p: Place): boolean =>
  resolve(p.cwd) !== resolve(p.home) && (isDir(join(p.cwd, '.vscode')) || existsSync(join(p.cwd, '.git')));

/** VS Code's user profile folder: ~/.config/Code/User on Linux ($XDG_CONFIG_HOME if set). */
export const vscodeUserDir = (p: Place, platform: NodeJS.Platform = process.platform): string =>
  platform === 'darwin'
    ? join(p.home, 'Library', 'Application Support', 'Code', 'User')
    : join(p.env.XDG_CONFIG_HOME || join(p.home, '.config'), 'Code', 'User');

/** command, args, and env only when there is something in it. */
const plain = (s: ServerEntry): Record<string, unknown> => ({
  command: s.command,
  args: s.args,
  ...(Object.keys(s.env).length > 0 ? { env: s.env } : {}),
});

export const CLIENTS: readonly Client[] = [
  {
    id: 'claude-code',
    title: 'Claude Code',
    format: 'json',
    dialect: 'json',
    container: 'mcpServers',
    // Claude Code's own state file; its user scope holds servers for every project.
    file: (p) => join(p.env.CLAUDE_CONFIG_DIR || p.home, '.claude.json'),
    private: true,
    entry: (s) => ({ type: 'stdio', ...plain(s) }),
    command: (s) =>
      [
        'claude mcp add --scope user',
        SERVER_NAME,
        ...Object.entries(s.env).map(([k, v]) => `-e ${shellQuote(`${k}=${v}`)}`),
        '--',
        shellQuote(s.command),
        ...s.args.map(shellQuote),
      ].join(' '),
  },
  {
    id: 'codex',
    title: 'Codex',
    format: 'toml',
    container: CODEX_CONTAINER,
    file: (p) => join(p.env.CODEX_HOME || join(p.home, '.codex'), 'config.toml'),
    private: true,
    entry: plain,
  },
  {
    id: 'cursor',
    title: 'Cursor',
    format: 'json',
    dialect: 'json',
    container: 'mcpServers',
    file: (p) => join(p.home, '.cursor', 'mcp.json'),
    private: true,
    entry: plain,
  },
  {
    id: 'vscode',
    title: 'VS Code',
    format: 'json',
    dialect: 'jsonc',
    container: 'servers',
    // A workspace's settings (a project file, so not made private), else the user profile's.
    file: (p) => (inWorkspace(p) ? join(p.cwd, '.vscode', 'mcp.json') : join(vscodeUserDir(p), 'mcp.json')),
    private: (p) => !inWorkspace(p),
    entry: (s) => ({ type: 'stdio', ...plain(s) }),
  },
  {
    id: 'gemini',
    title: 'Gemini CLI',
    format: 'json',
    dialect: 'json-comments',
    container: 'mcpServers',
    file: (p) => join(p.env.GEMINI_CLI_HOME || p.home, '.gemini', 'settings.json'),
    private: true,
    entry: plain,
  },
];

export const clientIds = (): string[] => CLIENTS.map((c) => c.id);
