// A dormant pane's record still names the helper that let itself go; by the time the pane is used
// again its pid may be another process's (pids wrap: /proc/sys/kernel/pid_max is 32768 on many
// machines). That process is a stranger, not the pane's helper: the pane is still listed dormant
// and a run still wakes it. Made here by naming a live process of the test's in the record and the
// dormant status, as a reused pid would.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { writeRecord } from '../../src/core/enrollment/record.js';
import { readStatus, writeStatus } from '../../src/core/enrollment/pane-status.js';
import { enroll, helperChildren, recordOf } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import { callRun, listedPanes, startMcp } from '../../lab/mcp.js';
import { explain, IDLE_S, waitDormant } from './support.js';

const scope = useServer({ env: { TMUX_RUN_IDLE: IDLE_S } });

describe('a dormant pane whose old helper pid is another process now', () => {
  it('is listed dormant, and a run wakes it', async () => {
    const server = scope.server;
    const pane = await server.newPane();
    const listing = await enroll(pane);
    await waitDormant(pane);
    const stranger = spawn('sleep', ['60'], { stdio: 'ignore' });
    scope.defer(() => void stranger.kill());
    const dir = server.registryDir;
    const rec = recordOf(server, listing);
    const status = readStatus(dir, rec);
    expect(status?.dormant).toBe(true);
    writeRecord(dir, { ...rec, helper_pid: stranger.pid! });
    writeStatus(dir, rec.enrollment_generation, { ...status!, helper_pid: stranger.pid! });
    const mcp = await startMcp(server);
    try {
      const shown = (await listedPanes(mcp.client)).find((p) => p.pane_id === pane.id);
      expect(shown, await explain(pane)).toMatchObject({ generation: listing.generation, state: 'dormant' });
      const r = await callRun(mcp.client, listing, 'echo woken');
      expect(r.isError, JSON.stringify(r.structured) + (r.isError ? await explain(pane) : '')).toBe(false);
      expect(r.structured.data.stdout.data).toBe('woken\n');
      expect(helperChildren(await pane.shellPid())).toHaveLength(1);
    } finally {
      await mcp.close();
    }
  });
});
