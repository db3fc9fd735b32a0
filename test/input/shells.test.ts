// input pipe and terminal from bash and fish panes, as from zsh: the same tools, the same run.
import { beforeAll, describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { useServer } from '../../lab/lifecycle.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { enrolledBash } from '../bash/support.js';
import { enrollFish, fishPane } from '../fish/support.js';
import { finalOf, runIdOf, start } from '../long/support.js';
import { input, screenUntil } from './support.js';

describe('input from bash and fish panes', () => {
  const scope = useServer();
  let mcp: McpHandle;
  const panes: Array<{ shell: string; pane: Pane; listing: PaneListing }> = [];

  beforeAll(async () => {
    mcp = await scope.startMcp();
    const bash = await enrolledBash(scope.server);
    panes.push({ shell: 'bash', ...bash });
    const fish = await fishPane(scope.server);
    panes.push({ shell: 'fish', pane: fish, listing: await enrollFish(fish) });
  });

  it('a pipe run echoes lines back in order and ends at eof', async () => {
    for (const { shell, listing } of panes) {
      const id = runIdOf(await start(mcp.client, listing, 'while read l; do echo "<$l>"; done', { input: 'pipe' }));
      await input(mcp.client, listing, id, 'a\nb\n');
      await input(mcp.client, listing, id, 'c\n', { eof: true });
      const final = await finalOf(mcp.client, listing, id);
      expect(final.data.stdout.data, shell).toBe('<a>\n<b>\n<c>\n');
    }
  });

  it("a terminal run is on a terminal of its own, not the pane's", async () => {
    for (const { shell, pane, listing } of panes) {
      const paneTty = (await pane.run('tty')).trim();
      const id = runIdOf(
        await start(mcp.client, listing, 'tty; stty size; read x; echo "x=$x"', { input: 'terminal' }),
      );
      const d = await screenUntil(mcp.client, listing, id, (d) => d.lines[1] === '24 80', `${shell}: stty size`);
      expect(d.lines[0], shell).toMatch(/^\/dev\/pts\/\d+$/);
      expect(d.lines[0], shell).not.toBe(paneTty);
      await input(mcp.client, listing, id, 'yes\r');
      const final = await finalOf(mcp.client, listing, id);
      expect(final.data.stdout.data, shell).toContain('x=yes');
    }
  });
});
