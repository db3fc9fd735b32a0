// tmux-run attach as the person uses it: in a second tmux window they take a terminal run over
// (its screen redrawn, their keys to the run), the agent's input is refused meanwhile, the detach
// key gives their terminal back as it was and the agent may go on; a run without a terminal
// cannot be attached.
import { beforeAll, describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { runCli } from '../../lab/cli.js';
import { productEnv } from '../../lab/product.js';
import { runIdOf, start } from '../long/support.js';
import { expectAttach, input, running, screen } from './support.js';

describe('tmux-run attach', () => {
  const scope = useServer();
  let listing: PaneListing;
  let mcp: McpHandle;
  let person: Pane;

  beforeAll(async () => {
    ({ listing } = await enrolledPane(scope.server));
    mcp = await scope.startMcp();
    person = await scope.server.newPane(); // a window of its own (new-window)
  });

  it('takes a run over in a second window, refuses the agent meanwhile, and gives the terminal back at Ctrl-]', () =>
    expectAttach(mcp.client, listing, person));

  it('refuses to attach a run that has no terminal', async () => {
    const id = runIdOf(await start(mcp.client, listing, 'sleep 30', { input: 'pipe' }));
    await running(mcp.client, listing, id);
    const r = await runCli(['attach', id.slice(0, 8)], productEnv(scope.server));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not_a_terminal/);
    const s = await screen(mcp.client, listing, id);
    expect(s.error).toMatchObject({ code: 'not_a_terminal' });
    await input(mcp.client, listing, id, '', { eof: true });
  });
});
