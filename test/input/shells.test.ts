// input pipe and terminal from bash and fish panes, as from zsh: the same tools, the same run; a
// password prompt (bash with its builtin and on the screen check, fish) and `tmux-run attach`
// taking over a bash and a fish pane's terminal run, written once in ./support.ts.
import { beforeAll, describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { useServer } from '../../lab/lifecycle.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { enrolledBash } from '../bash/support.js';
import { enrollFish, fishPane } from '../fish/support.js';
import { finalOf, runIdOf, start } from '../long/support.js';
import { expectAttach, expectPasswordPrompt, input, screenUntil } from './support.js';

describe('input from bash and fish panes', () => {
  const scope = useServer();
  let mcp: McpHandle;
  const panes: Array<{ shell: string; pane: Pane; listing: PaneListing }> = [];
  const paneOf = (shell: string) => panes.find((p) => p.shell === shell)!;

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

  // Notices on (the harness turns them off): the pane's shell draws the one naming tmux-run attach.
  const NOTICES = { env: { TMUX_RUN_NOTIFY: 'on' } };

  it('bash: a password prompt shows echo: false, the pane names tmux-run attach, and the input is not echoed', async () => {
    const { pane, listing } = await enrolledBash(scope.server, NOTICES);
    expect(listing.editor_check).toBe('exact');
    await expectPasswordPrompt(mcp.client, listing, pane);
  });

  it('bash on the screen check (TMUX_RUN_NATIVE=off): a password prompt shows echo: false, tmux_run_screen names tmux-run attach; no notice in the pane', async () => {
    const { pane, listing } = await enrolledBash(scope.server, { env: { ...NOTICES.env, TMUX_RUN_NATIVE: 'off' } });
    expect(listing.editor_check).toBe('screen');
    await expectPasswordPrompt(mcp.client, listing, pane, { notice: false });
  });

  it('fish: a password prompt shows echo: false, the pane names tmux-run attach, and the input is not echoed', async () => {
    const pane = await fishPane(scope.server, NOTICES);
    await expectPasswordPrompt(mcp.client, await enrollFish(pane), pane);
  });

  it("tmux-run attach in a second window takes a bash and a fish pane's terminal run over, refuses the agent meanwhile, and gives it back at Ctrl-]", async () => {
    for (const shell of ['bash', 'fish'])
      await expectAttach(mcp.client, paneOf(shell).listing, await scope.server.newPane());
  });
});
