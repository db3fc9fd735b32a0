// `tmux-run setup` against a scratch HOME (and a scratch project for VS Code) that already has
// settings for every client: what was there is kept, a second run changes nothing, modes are
// kept, backups are made, and --undo gives .zshrc back. What was written is then read by the
// clients' own CLIs (Claude Code, Codex, Gemini CLI: installed from npm into a cache on first use
// by lab/client-clis.ts, then run offline, no login),
// and the Cursor and VS Code entries are started as written with the MCP SDK's Client.
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parse as parseJsonc } from 'jsonc-parser';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { collect, type CliResult } from '../../lab/cli.js';
import { clientBin } from '../../lab/client-clis.js';
import { CLI_BIN, MCP_BIN, SNIPPET } from '../../lab/product.js';
import { sandbox, type Sandbox } from './support.js';
import { rcBlock } from '../../src/cli/setup/rc.js';
import { shellNamed } from '../../src/cli/common/shells.js';

const zshrcBlock = (line: string): string => rcBlock(shellNamed('zsh')!, line);

/** Where the clients' commands are: installed (once, into the cache) before the tests start. */
let BIN: string;
beforeAll(() => {
  BIN = dirname(clientBin('claude'));
}, 15 * 60_000);
const ZSHRC_LINE = `[[ -n $TMUX ]] && source ${SNIPPET}`;

let box: Sandbox;
let home: string;
let project: string;
beforeEach(() => {
  box = sandbox();
  home = box.dir;
  project = join(box.dir, 'project');
  mkdirSync(project);
});
afterEach(() => box.remove());

/** Runs `tmux-run setup ...args` in the scratch project with the scratch HOME. */
function setup(args: string[], extra: Record<string, string> = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI_BIN, 'setup', ...args], {
    cwd: project,
    env: { SHELL: '/usr/bin/zsh', ...box.env, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}

/** Runs a client's own CLI offline against the scratch HOME: no update checks, no telemetry, no login. */
function clientCli(name: string, args: string[]): Promise<CliResult> {
  const env = {
    ...box.env,
    PATH: `${BIN}:${box.env.PATH}`,
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    NO_COLOR: '1',
  };
  return collect(
    spawn(name === 'sh' ? 'sh' : join(BIN, name), args, { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] }),
    60_000,
  );
}

interface Seeded {
  path: string;
  text: string;
  mode: number;
}

/** Writes `text` at `path` with exactly `mode`. */
function seed(path: string, text: string, mode: number): Seeded {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  chmodSync(path, mode);
  return { path, text, mode };
}

const OTHER = { command: '/bin/cat', args: ['-u'] };

/** Existing settings for every client: other servers, other keys, comments where allowed. */
function seedAll() {
  return {
    zshrc: seed(join(home, '.zshrc'), 'export EDITOR=vim\nalias ll="ls -l"\n', 0o640),
    claude: seed(
      join(home, '.claude.json'),
      JSON.stringify({ numStartups: 7, mcpServers: { other: { type: 'stdio', ...OTHER, env: {} } } }, null, 2),
      0o600,
    ),
    codex: seed(
      join(home, '.codex', 'config.toml'),
      `# my Codex settings\nmodel = "o3" # keep this\n\n[mcp_servers.other]\ncommand = "/bin/cat"\nargs = ["-u"]\n`,
      0o640,
    ),
    cursor: seed(
      join(home, '.cursor', 'mcp.json'),
      JSON.stringify({ mcpServers: { other: OTHER } }, null, 4) + '\n',
      0o644,
    ),
    vscode: seed(
      join(project, '.vscode', 'mcp.json'),
      `{\n  // team servers\n  "inputs": [],\n  "servers": {\n    "other": { "type": "stdio", "command": "/bin/cat", "args": ["-u"] },\n  },\n}\n`,
      0o664,
    ),
    gemini: seed(
      join(home, '.gemini', 'settings.json'),
      `{\n  "theme": "Dracula", // comments are fine for Gemini CLI\n  "mcpServers": { "other": ${JSON.stringify(OTHER)} }\n}\n`,
      0o600,
    ),
  };
}

const modeOf = (path: string): number => statSync(path).mode & 0o7777;
const backupsOf = (path: string): string[] => {
  const dir = join(path, '..');
  const base = path.slice(dir.length + 1);
  return readdirSync(dir)
    .filter((n) => n.startsWith(`${base}.tmux-run-backup-`))
    .map((n) => join(dir, n));
};

interface Report {
  zshrc: { file: string; status: string; written: boolean; backup: string | null } | null;
  server: { command: string; args: string[]; env: Record<string, string> };
  clients: {
    client: string;
    file: string;
    status: string;
    written: boolean;
    backup: string | null;
    rewritten: boolean;
    command: string | null;
  }[];
}

describe('tmux-run setup', () => {
  it('merges into every client and .zshrc, keeping what was there, modes and backups; a second run changes nothing', async () => {
    const files = seedAll();
    const first = await setup(['--write', 'all', '--json']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const r = JSON.parse(first.stdout) as Report;
    expect(r.server).toEqual({
      command: process.execPath,
      args: [MCP_BIN, '--enable-tool', 'tmux_run'],
      env: { TMUX_RUN_DIR: box.registryDir },
    });
    expect(r.zshrc).toMatchObject({ file: files.zshrc.path, status: 'added', written: true });
    expect(r.clients.map((c) => [c.client, c.status, c.written, c.rewritten])).toEqual(
      ['claude-code', 'codex', 'cursor', 'vscode', 'gemini'].map((id) => [id, 'added', true, false]),
    );
    for (const f of Object.values(files)) {
      expect(modeOf(f.path), f.path).toBe(f.mode);
      const copies = backupsOf(f.path);
      expect(copies, f.path).toHaveLength(1);
      expect(readFileSync(copies[0]!, 'utf8')).toBe(f.text);
      expect(modeOf(copies[0]!)).toBe(f.mode);
    }
    // Appended to: the file as the person wrote it is still there, byte for byte, before the new text.
    for (const f of [files.zshrc, files.codex]) expect(readFileSync(f.path, 'utf8').startsWith(f.text)).toBe(true);
    expect(readFileSync(files.zshrc.path, 'utf8')).toContain(`\n${ZSHRC_LINE}\n`);
    const claude = JSON.parse(readFileSync(files.claude.path, 'utf8')) as Record<string, unknown>;
    expect(claude.numStartups).toBe(7);
    const vscode = readFileSync(files.vscode.path, 'utf8');
    expect(vscode).toContain('// team servers');
    expect(parseJsonc(vscode, [], { allowTrailingComma: true })).toMatchObject({ inputs: [], servers: { other: {} } });
    expect(readFileSync(files.gemini.path, 'utf8')).toContain('// comments are fine for Gemini CLI');

    const written = Object.values(files).map((f) => readFileSync(f.path, 'utf8'));
    const second = await setup(['--write', 'all', '--json']);
    expect(second.code).toBe(0);
    const again = JSON.parse(second.stdout) as Report;
    expect(again.zshrc?.status).toBe('present');
    expect(again.clients.map((c) => c.status)).toEqual(Array(5).fill('unchanged'));
    expect(Object.values(files).map((f) => readFileSync(f.path, 'utf8'))).toEqual(written);
    for (const f of Object.values(files)) expect(backupsOf(f.path)).toHaveLength(1);
    const text = await setup(['--write', 'codex']);
    expect(text.stdout).toMatch(/config\.toml: already set up; nothing changed/);

    const undo = await setup(['--undo']);
    expect(undo.code).toBe(0);
    expect(undo.stdout).toMatch(/the tmux-run block removed/);
    expect(readFileSync(files.zshrc.path, 'utf8')).toBe(files.zshrc.text);
    expect(modeOf(files.zshrc.path)).toBe(0o640);
    expect((await setup(['--undo'])).stdout).toMatch(/no tmux-run block to remove/);
  });

  it("is read by Claude Code's, Codex's and Gemini CLI's own CLIs, which start the server and connect", async () => {
    seedAll();
    expect((await setup(['--write', 'claude-code,codex,gemini', '--no-zshrc'])).code).toBe(0);

    const claude = await clientCli('claude', ['mcp', 'list']);
    expect(claude.code, claude.stderr).toBe(0);
    expect(claude.stdout).toContain(`tmux-run: ${process.execPath} ${MCP_BIN} --enable-tool tmux_run - ✔ Connected`);
    expect(claude.stdout).toMatch(/^other: \/bin\/cat -u/m);
    const claudeGet = await clientCli('claude', ['mcp', 'get', 'tmux-run']);
    expect(claudeGet.stdout).toContain('Scope: User config');
    expect(claudeGet.stdout).toContain(`TMUX_RUN_DIR=${box.registryDir}`);

    const codex = await clientCli('codex', ['mcp', 'get', 'tmux-run', '--json']);
    expect(codex.code, codex.stderr).toBe(0);
    expect((JSON.parse(codex.stdout) as { transport: unknown }).transport).toMatchObject({
      type: 'stdio',
      command: process.execPath,
      args: [MCP_BIN, '--enable-tool', 'tmux_run'],
      env: { TMUX_RUN_DIR: box.registryDir },
    });
    const codexList = JSON.parse((await clientCli('codex', ['mcp', 'list', '--json'])).stdout) as { name: string }[];
    expect(codexList.map((s) => s.name).sort()).toEqual(['other', 'tmux-run']);

    const gemini = await clientCli('gemini', ['mcp', 'list']);
    expect(gemini.code, gemini.stderr).toBe(0);
    // Gemini CLI prints its listing on stderr.
    expect(gemini.stdout + gemini.stderr).toContain(
      `✓ tmux-run: ${process.execPath} ${MCP_BIN} --enable-tool tmux_run (stdio) - Connected`,
    );
    expect(gemini.stdout + gemini.stderr).toMatch(/other: \/bin\/cat -u/);
  }, 300_000);

  it('prints a `claude mcp add` line that Claude Code runs, giving the entry --write would', async () => {
    const printed = JSON.parse((await setup(['--no-zshrc', '--json'])).stdout) as Report;
    const line = printed.clients.find((c) => c.client === 'claude-code')!.command!;
    const added = await clientCli('sh', ['-c', line]);
    expect(added.code, added.stderr).toBe(0);
    const r = JSON.parse((await setup(['--write', 'claude-code', '--no-zshrc', '--json'])).stdout) as Report;
    expect(r.clients[0]).toMatchObject({ client: 'claude-code', status: 'unchanged', written: false });
  });

  it('writes Cursor and VS Code entries that start the server as written', async () => {
    seedAll();
    expect((await setup(['--write', 'cursor,vscode', '--no-zshrc'])).code).toBe(0);
    const entries = [
      (JSON.parse(readFileSync(join(home, '.cursor', 'mcp.json'), 'utf8')) as { mcpServers: Record<string, Entry> })
        .mcpServers['tmux-run']!,
      (
        parseJsonc(readFileSync(join(project, '.vscode', 'mcp.json'), 'utf8'), [], { allowTrailingComma: true }) as {
          servers: Record<string, Entry>;
        }
      ).servers['tmux-run']!,
    ];
    expect(entries[1]!.type).toBe('stdio');
    for (const e of entries) {
      const transport = new StdioClientTransport({
        command: e.command,
        args: e.args,
        env: { ...e.env },
        stderr: 'pipe',
      });
      const client = new Client({ name: 'setup-test', version: '1.0.0' });
      await client.connect(transport);
      try {
        const tools = (await client.listTools()).tools.map((t) => t.name);
        expect(tools).toContain('tmux_run');
      } finally {
        await client.close();
      }
    }
  });

  it('prints every entry without writing anything, and --dry-run writes nothing either', async () => {
    const files = seedAll();
    const printed = await setup(['--no-zshrc']);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain(
      `claude mcp add --scope user tmux-run -e TMUX_RUN_DIR=${box.registryDir} -- ${process.execPath} ${MCP_BIN} --enable-tool tmux_run`,
    );
    expect(printed.stdout).toContain('[mcp_servers.tmux-run]');
    expect(printed.stdout).toContain('"servers": {');
    const dry = JSON.parse((await setup(['--write', 'all', '--dry-run', '--json'])).stdout) as Report;
    expect(dry.zshrc?.status).toBe('added');
    expect(dry.clients.every((c) => c.status === 'added' && !c.written)).toBe(true);
    for (const f of Object.values(files)) {
      expect(readFileSync(f.path, 'utf8')).toBe(f.text);
      expect(backupsOf(f.path)).toEqual([]);
    }
  });

  it('leaves a file that does not parse alone, says why in one line, and exits 1', async () => {
    const bad = seed(join(home, '.cursor', 'mcp.json'), '{ "mcpServers": { "other": ', 0o600);
    const r = await setup(['--write', 'cursor', '--no-zshrc']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^tmux-run: setup: \S+mcp\.json left unchanged: it is not valid JSON \(.+\)\n$/);
    expect(readFileSync(bad.path, 'utf8')).toBe(bad.text);
    expect(backupsOf(bad.path)).toEqual([]);
  });

  it("adds nothing beside a line of the person's own, follows ZDOTDIR and a symlinked .zshrc", async () => {
    const own = seed(join(home, '.zshrc'), `source ${SNIPPET}\n`, 0o600);
    const r = await setup(['--json']);
    expect((JSON.parse(r.stdout) as Report).zshrc?.status).toBe('unmarked');
    expect(readFileSync(own.path, 'utf8')).toBe(own.text);

    const zdot = join(home, 'zdot');
    const dotfiles = join(home, 'dotfiles');
    mkdirSync(zdot);
    const real = seed(join(dotfiles, 'zshrc'), 'setopt no_beep\n', 0o644);
    symlinkSync(real.path, join(zdot, '.zshrc'));
    expect((await setup(['--no-zshrc'], { ZDOTDIR: zdot })).code).toBe(0);
    expect(readFileSync(real.path, 'utf8')).toBe(real.text);
    expect((await setup([], { ZDOTDIR: zdot })).code).toBe(0);
    // The link is still a link (a dotfile manager's), and the file it points to got the block.
    expect(lstatSync(join(zdot, '.zshrc')).isSymbolicLink()).toBe(true);
    expect(readFileSync(real.path, 'utf8')).toBe(real.text + zshrcBlock(ZSHRC_LINE));
    // A real interactive zsh reads it through ZDOTDIR and the link; outside tmux the block does nothing.
    const zsh = spawnSync('zsh', ['-i', '-c', 'print -r -- beep:$options[beep]'], {
      env: { PATH: box.env.PATH, HOME: home, ZDOTDIR: zdot },
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect([zsh.status, zsh.stdout, zsh.stderr]).toEqual([0, 'beep:off\n', '']);
    expect(readFileSync(own.path, 'utf8')).toBe(own.text);
    expect((await setup(['--undo'], { ZDOTDIR: zdot })).code).toBe(0);
    expect(readFileSync(real.path, 'utf8')).toBe(real.text);
    expect(modeOf(real.path)).toBe(0o644);
  });

  it('updates an entry left by an older install, keeping the rest; Codex reads the new one', async () => {
    const toml = join(home, '.codex', 'config.toml');
    seed(
      toml,
      `model = "o3"\n\n[mcp_servers.tmux-run]\ncommand = "/old/node"\nargs = ["/old/bin/tmux-run-mcp.js"]\nstartup_timeout_sec = 20\n`,
      0o600,
    );
    const r = JSON.parse((await setup(['--write', 'codex', '--no-zshrc', '--json'])).stdout) as Report;
    expect(r.clients[0]).toMatchObject({ status: 'updated', written: true, rewritten: true });
    const codex = JSON.parse((await clientCli('codex', ['mcp', 'get', 'tmux-run', '--json'])).stdout) as {
      transport: unknown;
      startup_timeout_sec: number;
    };
    expect(codex.transport).toMatchObject({ command: process.execPath, args: [MCP_BIN, '--enable-tool', 'tmux_run'] });
    expect(codex.startup_timeout_sec).toBe(20);
    expect(readFileSync(toml, 'utf8')).toMatch(/^model = "o3"$/m);
  });

  it('changes nothing when the entry cannot be made (a relative TMUX_RUN_DIR)', async () => {
    const rc = seed(join(home, '.zshrc'), 'x=1\n', 0o600);
    const r = await setup([], { TMUX_RUN_DIR: 'relative/dir' });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('tmux-run: TMUX_RUN_DIR (relative/dir) is not an absolute path; set it to one\n');
    expect(readFileSync(rc.path, 'utf8')).toBe(rc.text);
  });

  it('refuses an unknown client with the list, exit 2; --help exits 0', async () => {
    const r = await setup(['--write', 'emacs']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "tmux-run: setup: unknown client 'emacs' (known: claude-code, codex, cursor, vscode, gemini, or all) (see 'tmux-run setup --help')\n",
    );
    const help = await setup(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: tmux-run setup/);
    expect((await setup(['--undo', '--write', 'codex'])).code).toBe(2);
  });
});

interface Entry {
  type?: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
}
