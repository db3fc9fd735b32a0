// Names that come from outside (tmux session and window names, the shell's directory) may hold
// escape sequences and odd bytes; listings print them so they are visible, never so a terminal
// acts on them: `tmux-run panes` (table and --json) and the MCP listing's text carry no raw ESC,
// BEL, other C0 control (but newline) or C1 control, and the JSON still parses to the real names.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { runCli } from '../../lab/cli.js';
import { enrolledPane } from '../../lab/enrollment.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { productEnv } from '../../lab/product.js';
import type { TmuxServer } from '../../lab/server.js';
import { useServer } from '../../lab/lifecycle.js';
import { waitUntil } from '../../lab/waiting.js';

/** Raw bytes a terminal would act on: C0 controls except newline, DEL, and C1 controls (as characters). */
const ACTIVE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe('listings of hostile names', () => {
  let server: TmuxServer;
  let mcp: McpHandle;
  let pane: Pane;
  let listing: PaneListing;
  const evilWindow = '\u001b]0;evil\u0007\u001b[2J\u009b31m\r';
  const evilSession = 'sess\u001b[31mred\u0007';
  const evilDir = 'dir-\u001b]0;pwned\u0007-\u009b1m-\u202e-\u0001';

  const scope = useServer();

  beforeAll(async () => {
    server = scope.server;
    ({ pane, listing } = await enrolledPane(server));
    const dir = join(server.home, evilDir);
    mkdirSync(dir, { mode: 0o700 });
    await server.tmux(['rename-window', '-t', pane.id, evilWindow]);
    await server.tmux(['rename-session', '-t', pane.id, evilSession]);
    await pane.run(`cd ${server.home} && cd dir-*`);
    mcp = await scope.startMcp();
    // The listing now shows the hostile directory as the pane's cwd.
    listing = await waitUntil(
      async () => {
        const r = (await mcp.client.callTool({ name: 'tmux_enrolled_panes', arguments: {} })) as CallToolResult;
        const p = (r.structuredContent as { panes: PaneListing[] }).panes[0];
        return p?.cwd === dir ? p : undefined;
      },
      10_000,
      'the hostile cwd in the listing',
    );
  });

  it('tmux-run panes prints no raw control characters, in the table or in --json', async () => {
    const table = await runCli(['panes'], productEnv(server));
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(listing.pane_id);
    expect(table.stdout).not.toMatch(ACTIVE);
    expect(table.stdout).toContain('\\x1b'); // shown, escaped

    const json = await runCli(['panes', '--json'], productEnv(server));
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout).not.toMatch(ACTIVE);
    const parsed = JSON.parse(json.stdout) as PaneListing[];
    expect(parsed[0]!.cwd).toBe(listing.cwd); // escaping changes nothing after parsing
    expect(parsed[0]!.session).toBe(listing.session);
    expect(parsed[0]!.window_name).toBe(listing.window_name);
  });

  it("the MCP listing's text has no raw control characters; its structured content keeps the names", async () => {
    const r = (await mcp.client.callTool({ name: 'tmux_enrolled_panes', arguments: {} })) as CallToolResult;
    for (const c of r.content) if (c.type === 'text') expect(c.text).not.toMatch(ACTIVE);
    const p = (r.structuredContent as { panes: PaneListing[] }).panes[0]!;
    expect(p.cwd).toBe(join(server.home, evilDir));
    // tmux itself stores window and session names with controls made visible (octal escapes).
    expect(p.window_name).not.toMatch(/\u001b/);
  });

  it('an error message naming a hostile directory carries no raw control characters', async () => {
    const r = await mcp.client.callTool({
      name: 'tmux_run',
      arguments: {
        target: { kind: 'pane', id: listing.pane_id, generation: listing.generation },
        script: `cd /; rmdir '${join(server.home, evilDir)}' 2>/dev/null; true`,
      },
    });
    expect((r as CallToolResult).isError).toBeFalsy();
    // The shell's directory is gone now: the refusal names it, escaped.
    const again = (await mcp.client.callTool({
      name: 'tmux_run',
      arguments: { target: { kind: 'pane', id: listing.pane_id, generation: listing.generation }, script: 'true' },
    })) as CallToolResult;
    for (const c of again.content) if (c.type === 'text') expect(c.text).not.toMatch(ACTIVE);
  });
});
