// npm run demo: a private tmux server (the test harness's), a zsh pane enrolled by its .zshrc
// (no keys are typed), tmux-run-mcp driven by the MCP SDK's client: list panes, run a script,
// print the results, then clean everything up.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaneListing } from '../src/broker/registry.js';
import { listedPanes } from '../lab/mcp.js';
import { SNIPPET } from '../lab/product.js';
import { openScope, type Scope } from '../lab/scope.js';
import { waitUntil } from '../lab/waiting.js';

const say = (s: string): void => void process.stdout.write(`${s}\n`);
const PROMPT = 'demo$ ';

let scope: Scope | undefined;
try {
  // Run notices on, as the product ships (the harness turns them off for tests).
  scope = await openScope({ env: { TMUX_RUN_NOTIFY: undefined } });
  const server = scope.server;
  say(`# 1. A private tmux server (${server.socket}) with one zsh pane whose .zshrc sources shell/tmux-run.zsh`);
  const pane = await server.newPane({ zshrc: `PROMPT='${PROMPT}'\nsource ${SNIPPET}\n`, prompt: PROMPT });

  const mcp = await scope.startMcp({ clientName: 'tmux-run-demo' });
  say('\n# 2. tmux-run-mcp --enable-tool tmux_run, tools/list:');
  say((await mcp.client.listTools()).tools.map((t) => `   ${t.name}`).join('\n'));

  const panes = await waitUntil(
    async () => {
      const listed = await listedPanes(mcp.client);
      return listed.length > 0 ? listed : undefined;
    },
    15000,
    'the demo pane to be enrolled',
  );
  say('\n# 3. tmux_enrolled_panes:');
  say(JSON.stringify(panes, null, 2));

  const listing: PaneListing = panes[0]!;
  const script = 'echo "hello from pane $TMUX_PANE in $PWD, as $(id -un)"; echo "to stderr" >&2; exit 3';
  say(
    `\n# 4. tmux_run {target: {kind: "pane", id: "${listing.pane_id}", generation: "${listing.generation}"}, script: ${JSON.stringify(script)}}`,
  );
  const result = (await mcp.client.callTool({
    name: 'tmux_run',
    arguments: { target: { kind: 'pane', id: listing.pane_id, generation: listing.generation }, script },
  })) as CallToolResult;
  say(JSON.stringify(result.structuredContent, null, 2));
  say('\n# 5. The same call with a stale generation is refused, never retargeted:');
  const stale = (await mcp.client.callTool({
    name: 'tmux_run',
    arguments: { target: { kind: 'pane', id: listing.pane_id, generation: '0'.repeat(32) }, script: 'echo never' },
  })) as CallToolResult;
  say(JSON.stringify(stale.structuredContent, null, 2));
  say('\n# 6. The pane itself (nothing was typed into it):');
  say(await pane.capture());
} catch (e) {
  process.exitCode = 1;
  process.stderr.write(`demo failed: ${e instanceof Error ? e.message : String(e)}\n`);
} finally {
  const leftovers = scope ? await scope.close() : [];
  if (leftovers.length > 0) {
    process.exitCode = 1;
    process.stderr.write(`demo: left behind (now stopped):\n  ${leftovers.join('\n  ')}\n`);
  }
  say(
    '\n# 7. Cleaned up: the MCP server closed, the tmux server killed (the helper exits with its shell), temporary files removed.',
  );
}
