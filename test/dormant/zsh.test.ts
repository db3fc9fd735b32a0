// A zsh pane's helper goes dormant after TMUX_RUN_IDLE and the next run starts it again from the
// shell's side (its line editor's handler on the request FIFO), with the same generations, the
// shell's cwd and environment as they are then.
import { describe, expect, it } from 'vitest';
import { enroll, helperChildren, listed } from '../support/enrollment.js';
import { useServer } from '../support/lifecycle.js';
import { callRun, listedPanes, startMcp } from '../support/mcp.js';
import { IDLE_S, waitDormant } from './support.js';

const scope = useServer({ env: { TMUX_RUN_IDLE: IDLE_S } });

describe('a dormant zsh pane', () => {
  it('goes dormant, is listed so, and a run wakes it with the cwd and environment of now', async () => {
    const server = scope.server;
    const pane = await server.newPane();
    const first = await enroll(pane);
    const dormant = await waitDormant(pane);
    expect(dormant).toMatchObject({ generation: first.generation, helper_pid: null, state: 'dormant' });
    await pane.run('mkdir -p wd/sub && cd wd/sub && export DORMANT_VAR=later');
    const mcp = await startMcp(server);
    try {
      expect((await listedPanes(mcp.client)).find((p) => p.pane_id === pane.id)?.state).toBe('dormant');
      const r = await callRun(mcp.client, first, 'pwd; echo "$DORMANT_VAR"');
      expect(r.isError, JSON.stringify(r.structured)).toBe(false);
      expect(r.structured.data.stdout.data).toBe(`${server.home}/wd/sub\nlater\n`);
      const shellPid = await pane.shellPid();
      expect(helperChildren(shellPid)).toHaveLength(1);
      const awake = (await listed(server.registryDir)).find((p) => p.pane_id === pane.id);
      expect(awake).toMatchObject({ generation: first.generation, state: 'idle' });
      expect(awake?.helper_pid).not.toBe(first.helper_pid);
      const again = await callRun(mcp.client, first, 'echo again');
      expect(again.structured.data.stdout.data).toBe('again\n');
    } finally {
      await mcp.close();
    }
  });
});
