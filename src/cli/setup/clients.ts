// The MCP clients `tmux-run setup` knows: where each keeps its servers, in which format, and the
// entry as that client writes it. Adding a client is one row here.
// No parser is loaded here (every `tmux-run` command loads this table): write.ts does the merging.
import { join } from 'node:path';
import { shellQuote } from '../../os/package-root.js';
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
  private: boolean;
  /** The server's entry as this client writes it. */
  entry(server: ServerEntry): Record<string, unknown>;
  /** The client's own command that adds the entry, when it has one. */
  command?(server: ServerEntry): string;
}

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
    // The current project's settings (a workspace file, so not made private).
    file: (p) => join(p.cwd, '.vscode', 'mcp.json'),
    private: false,
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
