// A dormant pane under the sandbox (docs/light.md): TMUX_RUN_SANDBOX set while the helper is gone;
// the woken helper runs the script inside bwrap, writing in its cwd tree and not beside it.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditOf } from '../../lab/audit.js';
import { enroll } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import { callRun, startMcp } from '../../lab/mcp.js';
import { waitDormant } from '../dormant/support.js';

const scope = useServer({ env: { TMUX_RUN_IDLE: '2' } });

describe('sandbox: a dormant pane', () => {
  it('woken by a run, runs it in the workspace sandbox set while it was dormant', async () => {
    const server = scope.server;
    const project = join(server.home, 'dormant-project');
    mkdirSync(project);
    const pane = await server.newPane();
    const listing = await enroll(pane);
    await waitDormant(pane);
    await pane.run(`cd ${project}; TMUX_RUN_SANDBOX=workspace; export SANDBOX_VAR=woken`);
    const mcp = await startMcp(server);
    try {
      const outside = join(server.home, 'dormant-outside');
      const r = await callRun(
        mcp.client,
        listing,
        `echo "$SANDBOX_VAR" > in.txt; pwd; touch '${outside}' 2>/dev/null; echo done`,
      );
      expect(r.isError, JSON.stringify(r.structured)).toBe(false);
      expect(r.structured.data.stdout.data).toBe(`${project}\ndone\n`);
      expect(readFileSync(join(project, 'in.txt'), 'utf8')).toBe('woken\n');
      expect(existsSync(outside)).toBe(false);
      const start = auditOf(server, r.structured.data.authorization.run_id).find((e) => e.event === 'start');
      expect(start?.sandbox).toBe('workspace');
    } finally {
      await mcp.close();
    }
  });
});
