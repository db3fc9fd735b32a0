// What the person sees of a run that takes input: ask mode's question says so (and that what the
// agent sends it is not asked about again), tmux-run watch shows the input as a stream of its own
// (escaped), and the audit trail has the input's count and bytes, never its content.
import { beforeAll, describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { auditOf } from '../../lab/audit.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { CLI_BIN } from '../../lab/product.js';
import { finalOf, runIdOf, start, wait } from '../long/support.js';
import { listedWhen, press, questionShown, typed } from '../ask/support.js';
import { input } from './support.js';

describe('the person and a run that takes input', () => {
  const scope = useServer();
  let listing: PaneListing;
  let pane: Pane;
  let mcp: McpHandle;
  let watcher: Pane;

  beforeAll(async () => {
    ({ pane, listing } = await enrolledPane(scope.server, { env: { TMUX_RUN_NOTIFY: 'off' } }));
    mcp = await scope.startMcp();
    watcher = await scope.server.newPane();
    await watcher.type(`NO_COLOR=1 ${process.execPath} ${CLI_BIN} watch`, { enter: true });
    await watcher.waitFor((s) => s.includes(`${listing.pane_id} watching this pane`));
  });

  it('watch shows the input as its own stream, escaped; the audit trail counts it without its content', async () => {
    const id = runIdOf(await start(mcp.client, listing, 'cat', { input: 'pipe' }));
    const id8 = id.slice(0, 8);
    await input(mcp.client, listing, id, 'secret-word\n');
    await input(mcp.client, listing, id, 'esc\x1b[31m\n', { eof: true });
    await finalOf(mcp.client, listing, id);
    const screen = await watcher.waitFor((s) => s.includes(`${id8} end`));
    const mine = screen.split('\n').filter((l) => l.includes(` ${id8} `));
    expect(mine[0]).toMatch(/start .*; input pipe$/);
    expect(mine.filter((l) => / in +/.test(l)).map((l) => l.replace(/^.* in +/, ''))).toEqual([
      'secret-word',
      'esc\\x1b[31m',
    ]);
    expect(mine.filter((l) => / out +/.test(l)).map((l) => l.replace(/^.* out +/, ''))).toEqual([
      'secret-word',
      'esc\\x1b[31m',
    ]);
    const audit = auditOf(scope.server, id);
    expect(audit.find((e) => e.event === 'start')).toMatchObject({ input: 'pipe' });
    expect(audit.find((e) => e.event === 'end')).toMatchObject({ input: 'pipe', input_count: 2, input_bytes: 21 });
    expect(JSON.stringify(audit)).not.toContain('secret-word');
  });

  it('watch --run replays the input the run was given before the watch began (kept in memory, escaped)', async () => {
    const id = runIdOf(await start(mcp.client, listing, 'cat', { input: 'pipe' }));
    const id8 = id.slice(0, 8);
    await input(mcp.client, listing, id, 'given-before\x07\n');
    const late = await scope.server.newPane();
    await late.type(`NO_COLOR=1 ${process.execPath} ${CLI_BIN} watch --run ${id8}`, { enter: true });
    const before = await late.waitFor((s) => / in +given-before/.test(s));
    expect(
      before
        .split('\n')
        .filter((l) => / in +/.test(l))
        .map((l) => l.replace(/^.* in +/, '')),
    ).toEqual(['given-before\\x07']);
    // Then it follows the run: input given from now on, and the end.
    await input(mcp.client, listing, id, 'given-after\n', { eof: true });
    await finalOf(mcp.client, listing, id);
    const after = await late.waitFor((s) => s.includes(`${id8} end`));
    expect(
      after
        .split('\n')
        .filter((l) => / in +/.test(l))
        .map((l) => l.replace(/^.* in +/, '')),
    ).toEqual(['given-before\\x07', 'given-after']);
    expect(JSON.stringify(auditOf(scope.server, id))).not.toContain('given-before');
  });

  it("ask mode's question says the run takes input, and what the agent sends is not asked about again", async () => {
    await typed(pane, 'TMUX_RUN_APPROVE=ask');
    await listedWhen(mcp.client, pane, (p) => p.mode === 'ask');
    const s = await start(mcp.client, listing, 'exec cat', { input: 'terminal' });
    const id = runIdOf(s);
    const screen = await questionShown(pane);
    expect(screen).toContain('  it takes input (terminal): what the agent sends it is not asked about again');
    // Input given while the person is asked waits for the run, unasked.
    const given = await input(mcp.client, listing, id, 'typed early\r');
    expect(given.data.state).toBe('awaiting_approval');
    await press(pane, 'y');
    let p: Record<string, any> | undefined;
    // The terminal's echo of the line, then cat's copy of it: cat has read it before ^D is sent.
    const both = 'typed early\r\ntyped early\r\n';
    for (let i = 0; i < 40 && !(p?.stdout_tail?.data as string | undefined)?.includes(both); i++)
      p = (await wait(mcp.client, listing, id, 250)).pending;
    expect(p?.stdout_tail.data).toContain(both);
    await input(mcp.client, listing, id, '\x04');
    expect((await finalOf(mcp.client, listing, id)).data.completion).toMatchObject({ exit_status: 0 });
    await typed(pane, 'unset TMUX_RUN_APPROVE');
  });
});
