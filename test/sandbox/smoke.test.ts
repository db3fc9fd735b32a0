// Smoke test of the sandbox end to end (the escape attempts are in escape.test.ts and the others):
// a real zsh pane sets TMUX_RUN_SANDBOX, a real broker runs scripts in it through bwrap, and the
// run writes in its cwd but not beside it, reports its own exit status and signal, and is listed
// and audited with its sandbox.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { auditOf } from '../../lab/audit.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import { callRun, type McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import type { TmuxServer } from '../../lab/server.js';
import type { PaneListing } from '../../src/broker/registry.js';
import { listedWhen } from '../ask/support.js';

describe('sandbox smoke: workspace in a real pane', () => {
  let server: TmuxServer;
  let mcp: McpHandle;
  let pane: Pane;
  let listing: PaneListing;
  let project: string;
  const scope = useServer();

  beforeAll(async () => {
    server = scope.server;
    project = join(server.home, 'project');
    mkdirSync(project);
    ({ pane, listing } = await enrolledPane(server));
    mcp = await scope.startMcp();
    await pane.run(`cd ${project}; TMUX_RUN_SANDBOX=workspace; export SMOKE_VAR=live`);
  });

  it('lists the pane with its sandbox as of its last prompt', async () => {
    const p = await listedWhen(mcp.client, pane, (x) => x.sandbox === 'workspace');
    expect(p.sandbox).toBe('workspace');
    // An agent whose client shows only the text sees it too, with the ask mode.
    const r = await mcp.client.callTool({ name: 'tmux_enrolled_panes', arguments: {} });
    const text = (r.content as { type: string; text: string }[]).find((c) => c.type === 'text')?.text ?? '';
    expect(text.split('\n').find((l) => l.startsWith(`${pane.id} `))).toMatch(/ mode auto sandbox workspace queued 0 /);
  });

  it('writes in the cwd tree, not beside it, with the live exports, and audits the sandbox', async () => {
    // (The harness's directories live under /tmp: a write beside the project lands in the private /tmp.)
    const outside = join(server.home, 'outside-marker');
    const r = await callRun(
      mcp.client,
      listing,
      `echo "$SMOKE_VAR" > built.txt; pwd; touch '${outside}' 2>/dev/null; echo done`,
    );
    expect(r.isError, JSON.stringify(r.structured)).toBe(false);
    expect(r.structured.data.stdout.data).toBe(`${project}\ndone\n`);
    expect(readFileSync(join(project, 'built.txt'), 'utf8')).toBe('live\n');
    expect(existsSync(outside)).toBe(false);
    const start = auditOf(server, r.structured.data.authorization.run_id).find((e) => e.event === 'start');
    expect(start?.sandbox).toBe('workspace');
  });

  it('reports the script’s own signal and exit status, not bwrap’s 128+N', async () => {
    const signaled = await callRun(mcp.client, listing, 'kill -TERM $$');
    expect(signaled.structured.data.completion).toEqual({ state: 'signaled', exit_status: null, signal: 15 });
    const exited = await callRun(mcp.client, listing, 'exit 143');
    expect(exited.structured.data.completion).toEqual({ state: 'exited', exit_status: 143, signal: null });
  });

  it('refuses an unknown value before anything runs', async () => {
    await pane.run('TMUX_RUN_SANDBOX=worksapce');
    const marker = join(project, 'typo-marker');
    const r = await callRun(mcp.client, listing, `touch '${marker}'`);
    expect(r.isError).toBe(true);
    expect(r.structured.error.code).toBe('sandbox_unavailable');
    expect(r.structured.error.message).toContain('worksapce');
    expect(existsSync(marker)).toBe(false);
    await pane.run('TMUX_RUN_SANDBOX=workspace');
  });
});
