// Merging the entry into Codex's config.toml with a TOML parser: appended as text when absent
// (the file kept as written), rewritten from its values only when it must be.
import { describe, expect, it } from 'vitest';
import { parse } from 'smol-toml';
import { mergeToml } from '../../src/cli/setup/toml-config.js';
import { ConfigError } from '../../src/cli/setup/merge.js';

const entry = { command: '/n', args: ['/b', '--enable-tool', 'tmux_run'], env: { TMUX_RUN_DIR: '/r "d"' } };
const ORIGINAL = `# Codex settings
model = "o3"   # the model
approval_policy = "on-request"
timeout = 30
ratio = 1.0

[mcp_servers.other]
command = "npx"
args = ["-y", "other"]
`;

describe('mergeToml', () => {
  it('appends the table after the file as it was written, and a second merge changes nothing', () => {
    const r = mergeToml(ORIGINAL, 'mcp_servers', 'tmux-run', entry);
    expect(r.status).toBe('added');
    expect(r.rewritten).toBeUndefined();
    expect(r.text.startsWith(ORIGINAL + '\n[mcp_servers.tmux-run]\n')).toBe(true);
    const doc = parse(r.text) as Record<string, Record<string, unknown>>;
    expect(doc.mcp_servers!['tmux-run']).toEqual(entry);
    expect(doc.mcp_servers!.other).toEqual({ command: 'npx', args: ['-y', 'other'] });
    expect(mergeToml(r.text, 'mcp_servers', 'tmux-run', entry)).toMatchObject({ status: 'unchanged', text: r.text });
  });

  it('writes a missing file, and a file without a final newline', () => {
    expect(parse(mergeToml('', 'mcp_servers', 'tmux-run', entry).text)).toEqual({ mcp_servers: { 'tmux-run': entry } });
    expect(
      mergeToml('a = 1', 'mcp_servers', 'tmux-run', entry).text.startsWith('a = 1\n\n[mcp_servers.tmux-run]'),
    ).toBe(true);
  });

  it('rewrites from the values when appending cannot work (inline table), keeping every value and its type', () => {
    const inline = 'n = 3\nf = 1.0\nmcp_servers = { other = { command = "x" } }\n';
    const r = mergeToml(inline, 'mcp_servers', 'tmux-run', entry);
    expect(r).toMatchObject({ status: 'added', rewritten: true });
    expect(parse(r.text, { integersAsBigInt: true })).toEqual({
      n: 3n,
      f: 1.0,
      mcp_servers: { other: { command: 'x' }, 'tmux-run': entry },
    });
    expect(r.text).toMatch(/^f = 1\.0$/m); // still a float for Codex
  });

  it("updates an older entry's keys, keeping the person's other keys and env", () => {
    const old = `${ORIGINAL}\n[mcp_servers.tmux-run]\ncommand = "/old"\nargs = []\nstartup_timeout_sec = 20\n\n[mcp_servers.tmux-run.env]\nA = "1"\n`;
    const r = mergeToml(old, 'mcp_servers', 'tmux-run', entry);
    expect(r).toMatchObject({ status: 'updated', rewritten: true });
    const doc = parse(r.text) as Record<string, Record<string, unknown>>;
    expect(doc.mcp_servers!['tmux-run']).toEqual({
      ...entry,
      startup_timeout_sec: 20,
      env: { A: '1', TMUX_RUN_DIR: '/r "d"' },
    });
    expect(doc.model).toBe('o3');
  });

  it('refuses a file that is not TOML, or whose mcp_servers is not a table', () => {
    expect(() => mergeToml('model = \n', 'mcp_servers', 'tmux-run', entry)).toThrow(ConfigError);
    expect(() => mergeToml('[a]\nx = 1\n[a]\n', 'mcp_servers', 'tmux-run', entry)).toThrow(/not valid TOML/);
    expect(() => mergeToml('mcp_servers = 1\n', 'mcp_servers', 'tmux-run', entry)).toThrow(
      /"mcp_servers" is not a table/,
    );
  });
});
