// The server's entry and each client's shape of it.
import { describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';
import { CLIENTS } from '../../src/cli/setup/clients.js';
import { fragment } from '../../src/cli/setup/write.js';
import { registryEnv, serverEntry } from '../../src/cli/setup/entry.js';

const server = serverEntry('/opt/node/bin/node', "/opt/tmux run's/bin/tmux-run-mcp.js", { TMUX_RUN_DIR: '/r d' });
const client = (id: string) => CLIENTS.find((c) => c.id === id)!;

describe('the server entry', () => {
  it('runs this node on bin/tmux-run-mcp.js with tmux_run enabled', () => {
    expect(server.args).toEqual(["/opt/tmux run's/bin/tmux-run-mcp.js", '--enable-tool', 'tmux_run']);
  });

  it('carries TMUX_RUN_DIR when it is set, or when a bare environment would find another registry', () => {
    const resolve = (e: NodeJS.ProcessEnv) =>
      e.TMUX_RUN_DIR || (e.XDG_RUNTIME_DIR ? `${e.XDG_RUNTIME_DIR}/tmux-run` : '/run/user/1000/tmux-run');
    expect(registryEnv({ TMUX_RUN_DIR: '/x' }, resolve)).toEqual({ TMUX_RUN_DIR: '/x' });
    expect(registryEnv({ XDG_RUNTIME_DIR: '/run/user/1000' }, resolve)).toEqual({});
    expect(registryEnv({}, resolve)).toEqual({});
    expect(registryEnv({ XDG_RUNTIME_DIR: '/tmp/xdg' }, resolve)).toEqual({ TMUX_RUN_DIR: '/tmp/xdg/tmux-run' });
    expect(() => registryEnv({ TMUX_RUN_DIR: 'rel' }, resolve)).toThrow(/not an absolute path/);
  });

  it("is the command line Claude Code's own `claude mcp add` takes, quoted for the shell", () => {
    expect(client('claude-code').command!(server)).toBe(
      "claude mcp add --scope user tmux-run -e 'TMUX_RUN_DIR=/r d' -- /opt/node/bin/node " +
        `'/opt/tmux run'\\''s/bin/tmux-run-mcp.js' --enable-tool tmux_run`,
    );
  });

  it('has type stdio for Claude Code and VS Code, no env key when there is nothing in it', () => {
    const bare = serverEntry('/n', '/b', {});
    expect(client('vscode').entry(bare)).toEqual({
      type: 'stdio',
      command: '/n',
      args: ['/b', '--enable-tool', 'tmux_run'],
    });
    expect(client('cursor').entry(bare)).toEqual({ command: '/n', args: ['/b', '--enable-tool', 'tmux_run'] });
  });

  it('prints a fragment that parses to the container holding the entry', () => {
    for (const c of CLIENTS) {
      const text = fragment(c, server);
      const doc = (c.format === 'toml' ? parseToml(text) : JSON.parse(text)) as Record<string, Record<string, unknown>>;
      expect(JSON.parse(JSON.stringify(doc[c.container]!['tmux-run']))).toEqual(c.entry(server));
    }
  });
});
