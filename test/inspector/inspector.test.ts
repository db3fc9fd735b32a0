// A real client that is not ours: the MCP Inspector's command-line client lists the tools and
// calls tmux_run against a real enrolled pane.
import { beforeAll, describe, expect, it } from 'vitest';
import { enrolledPane } from '../../lab/enrollment.js';
import { ALL_TOOLS } from '../../lab/mcp.js';
import { MCP_BIN, productEnv } from '../../lab/product.js';
import type { TmuxServer } from '../../lab/server.js';
import { inspectorCall } from '../../lab/client-clis.js';
import { useServer } from '../../lab/lifecycle.js';
import type { PaneListing } from '../../src/broker/registry.js';

/** The MCP Inspector's CLI, installed (once, into the cache) on first use, against tmux-run-mcp with `serverArgs`. */
const inspector = (server: TmuxServer, args: string[], serverArgs: string[]): ReturnType<typeof inspectorCall> =>
  inspectorCall(productEnv(server), MCP_BIN, args, serverArgs);

describe('the MCP Inspector CLI as a client', () => {
  let server: TmuxServer;
  let listing: PaneListing;

  const scope = useServer();

  beforeAll(async () => {
    server = scope.server;
    ({ listing } = await enrolledPane(server));
  });

  it('lists tmux_run only when the server enables it', async () => {
    const on = await inspector(server, ['--method', 'tools/list'], ['--enable-tool', 'tmux_run']);
    expect(on.code).toBe(0);
    const names = (JSON.parse(on.stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name).sort();
    expect(names).toEqual(ALL_TOOLS);
    const off = await inspector(server, ['--method', 'tools/list'], []);
    expect((JSON.parse(off.stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toEqual([
      'tmux_enrolled_panes',
    ]);
  });

  it('calls tmux_run on the enrolled pane and gets the structured result', async () => {
    const target = JSON.stringify({ kind: 'pane', id: listing.pane_id, generation: listing.generation });
    const r = await inspector(
      server,
      [
        '--method',
        'tools/call',
        '--tool-name',
        'tmux_run',
        '--tool-arg',
        `target=${target}`,
        '--tool-arg',
        'script=echo "inspector in $TMUX_PANE"; exit 7',
      ],
      ['--enable-tool', 'tmux_run'],
    );
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as { structuredContent: any; isError?: boolean };
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent.ok).toBe(true);
    expect(result.structuredContent.data.completion).toEqual({ state: 'exited', exit_status: 7, signal: null });
    expect(result.structuredContent.data.stdout.data).toBe(`inspector in ${listing.pane_id}\n`);
  });
});
