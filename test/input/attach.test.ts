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
import { CLI_BIN, productEnv } from '../../lab/product.js';
import { finalOf, heldRuns, runIdOf, start, wait } from '../long/support.js';
import { input, running, screen, screenUntil } from './support.js';

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

  it('takes a run over in a second window, refuses the agent meanwhile, and gives the terminal back at Ctrl-]', async () => {
    const script = `printf 'name? '; read name; echo "hello $name"; printf 'more? '; read more; echo "more=$more"`;
    const id = runIdOf(await start(mcp.client, listing, script, { input: 'terminal' }));
    await screenUntil(mcp.client, listing, id, (d) => d.lines[0] === 'name?', 'the question');
    await person.run('echo before-attach');
    await person.type(`NO_COLOR=1 ${process.execPath} ${CLI_BIN} attach ${id.slice(0, 8)}`, { enter: true });
    // The run's screen is redrawn in the person's terminal.
    await person.waitFor((s) => s.trimStart().startsWith('name?') && !s.includes('before-attach'));
    const taken = await screen(mcp.client, listing, id);
    expect(taken.data.attached).toBe(true);
    expect((await wait(mcp.client, listing, id, 0)).pending).toMatchObject({ attached: true });
    expect((await heldRuns(mcp.client)).find((r) => r.run_id === id)).toMatchObject({ attached: true });
    const refused = await input(mcp.client, listing, id, 'agent\r');
    expect(refused.error).toMatchObject({ code: 'run_attached', delivery: 'observed' });
    // The person's keys reach the run.
    await person.type('Alice', { enter: true });
    await person.waitFor((s) => s.includes('hello Alice') && s.includes('more?'));
    // Ctrl-]: the person's terminal is back as it was, and the run goes on.
    await scope.server.tmux(['send-keys', '-t', person.id, 'C-]']);
    const back = await person.waitFor(
      (s) => s.includes('before-attach') && s.includes(`detached from run ${id.slice(0, 8)}`),
    );
    expect(back).not.toContain('hello Alice');
    await person.waitForPrompt();
    expect((await screen(mcp.client, listing, id)).data.attached).toBe(false);
    const ok = await input(mcp.client, listing, id, 'Bob\r');
    expect(ok.ok).toBe(true);
    const final = await finalOf(mcp.client, listing, id);
    expect(final.data.stdout.data).toContain('hello Alice');
    expect(final.data.stdout.data, JSON.stringify(final.data.stdout.data)).toContain('more=Bob');
    expect(final.data.stdout.data).not.toContain('agent');
  });

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
