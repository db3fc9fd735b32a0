// Who asked: a real SDK Client names itself in `initialize` (StdioClientTransport to a spawned
// tmux-run-mcp), and that name reaches the pane's notices (on the screen), the audit trail, the
// ask question, tmux_runs and `tmux-run runs`. A name is a label: escaped wherever it is shown.
import { beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { auditEventually, auditOf } from '../../lab/audit.js';
import { runCli } from '../../lab/cli.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import { callRun, type McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { productEnv } from '../../lab/product.js';
import type { TmuxServer } from '../../lab/server.js';
import type { PaneListing } from '../../src/broker/registry.js';
import { press, questionShown, typed, listedWhen } from '../ask/support.js';

describe('who asked', () => {
  let server: TmuxServer;
  let claude: McpHandle;
  let on: { pane: Pane; listing: PaneListing };

  const scope = useServer();

  beforeAll(async () => {
    server = scope.server;
    on = await enrolledPane(server, { env: { TMUX_RUN_NOTIFY: 'on' } });
    claude = await scope.startMcp({ clientName: 'claude-code', clientVersion: '2.0.1' });
  });

  it("names the client in the run's notices on the screen and in its audit entries", async () => {
    const r = await callRun(claude.client, on.listing, 'echo hi');
    expect(r.isError).toBe(false);
    const runId = r.structured.data.authorization.run_id as string;
    const id8 = runId.slice(0, 8);
    const screen = await on.pane.waitFor((s) => s.includes(`tmux-run: run ${id8} by claude-code 2.0.1 exited 0`));
    expect(screen).toContain(`tmux-run: run ${id8} by claude-code 2.0.1 exited 0 after`);
    await auditEventually(server, runId, (e) => e.event === 'end');
    const entries = auditOf(server, runId);
    expect(entries.map((e) => e.event)).toEqual(['start', 'end']);
    for (const e of entries) expect(e.client).toBe('claude-code 2.0.1');
  });

  it('lists the client in tmux_runs and tmux-run runs (the JSON and a column)', async () => {
    const target = { kind: 'pane', id: on.listing.pane_id, generation: on.listing.generation };
    const started = (await claude.client.callTool({
      name: 'tmux_run_start',
      arguments: { target, script: 'echo held', wait_ms: 5000 },
    })) as CallToolResult;
    const runId = (started.structuredContent as any).data.authorization.run_id as string;
    const listed = (await claude.client.callTool({ name: 'tmux_runs', arguments: {} })) as CallToolResult;
    const mine = (listed.structuredContent as { runs: any[] }).runs.find((x) => x.run_id === runId);
    expect(mine.client).toBe('claude-code 2.0.1');
    expect((listed.content as Array<{ text: string }>)[0]!.text).toContain(`${runId} pane ${on.listing.pane_id}`);
    expect((listed.content as Array<{ text: string }>)[0]!.text).toMatch(/\) by claude-code 2\.0\.1: finished/);
    const env = productEnv(server);
    const json = await runCli(['runs', '--json'], env);
    expect((JSON.parse(json.stdout) as any[]).find((x) => x.run_id === runId).client).toBe('claude-code 2.0.1');
    const table = (await runCli(['runs'], env)).stdout.split('\n');
    expect(table[0]).toMatch(/ CLIENT$/);
    expect(table.find((l) => l.startsWith(runId))).toMatch(/ claude-code 2\.0\.1$/);
  });

  it('shows the client in the ask question, and the refusal is audited with it', async () => {
    const asked = await enrolledPane(server);
    await typed(asked.pane, 'TMUX_RUN_APPROVE=ask');
    await listedWhen(claude.client, asked.pane, (p) => p.mode === 'ask');
    const call = callRun(claude.client, asked.listing, 'echo asked');
    const screen = await questionShown(asked.pane);
    expect(screen).toContain(
      'tmux-run: an agent (claude-code 2.0.1) asks to run a script in this shell (TMUX_RUN_APPROVE=ask)',
    );
    await press(asked.pane, 'n');
    const r = await call;
    expect(r.structured.error.code).toBe('denied');
    const runId = r.structured.error.effects.authorization.run_id as string;
    const refused = await auditEventually(server, runId, (e) => e.event === 'refused');
    expect(refused).toMatchObject({ by: 'person', outcome: 'denied', client: 'claude-code 2.0.1' });
  });

  it('escapes a name that carries control characters, and says nothing for a client without one', async () => {
    const evil = await scope.startMcp({ clientName: 'evil\x1b[2J\x1b]0;pwned\x07', clientVersion: '1' });
    const r = await callRun(evil.client, on.listing, 'true');
    const id8 = (r.structured.data.authorization.run_id as string).slice(0, 8);
    const screen = await on.pane.waitFor((s) => s.includes(`run ${id8} by`) && s.includes('exited 0'));
    expect(screen).toContain(`tmux-run: run ${id8} by evil\\x1b[2J\\x1b]0;pwned\\x07 1 exited 0`);
    const nameless = await scope.startMcp({ clientName: '', clientVersion: '' });
    const n = await callRun(nameless.client, on.listing, 'true');
    const runId = n.structured.data.authorization.run_id as string;
    const shown = await on.pane.waitFor((s) => s.includes(`tmux-run: run ${runId.slice(0, 8)} exited 0`));
    expect(shown).not.toContain(`run ${runId.slice(0, 8)} by`);
    await auditEventually(server, runId, (e) => e.event === 'end');
    for (const e of auditOf(server, runId)) expect(e).not.toHaveProperty('client');
  });
});
