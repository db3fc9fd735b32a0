// The shell stops its dead helper's runs: when its precmd hook finds the helper gone (SIGKILL), it
// starts the broker's orphan sweep (src/broker/shell-sweep.ts) for that enrollment in the
// background, so a held run stops at the shell's next prompt, with no broker or CLI looking, and is
// audited `helper_lost` by the shell.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditEntries, auditEventually } from '../../lab/audit.js';
import { enrolledPane, filesIn, waitEmpty } from '../../lab/enrollment.js';
import { withServer } from '../../lab/lifecycle.js';
import { markerDir } from '../../lab/markers.js';
import { allCmdlines, groupGone, groupMembers, processAlive } from '../../lab/processes.js';
import { SNIPPET } from '../../lab/product.js';
import { waitUntil } from '../../lab/waiting.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaneListing } from '../../src/broker/registry.js';

/** tmux_run_start: the run id of the held run it started (its result's schema is another issue's). */
async function start(client: Client, l: PaneListing, script: string): Promise<string> {
  const r = await client.callTool({
    name: 'tmux_run_start',
    arguments: { target: { kind: 'pane', id: l.pane_id, generation: l.generation }, script },
  });
  const id = (r.structuredContent as { pending?: { run_id?: string } } | undefined)?.pending?.run_id;
  expect(id, JSON.stringify(r.structuredContent)).toMatch(/^[0-9a-f]{32}$/);
  return id!;
}

const textOf = (path: string): string | undefined =>
  existsSync(path) ? readFileSync(path, 'utf8').trim() || undefined : undefined;

describe('the shell sweeps up after its dead helper', () => {
  it('a held run of a SIGKILLed helper is stopped at the next prompt and audited helper_lost by the shell', async () => {
    await withServer(async (server, scope) => {
      const { pane, listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      // Ignores SIGTERM: only the SIGKILL after the grace ends it.
      const held = await start(
        mcp.client,
        listing,
        `trap '' TERM; echo $$ > '${marks}/pgid'; sleep 100 & wait; wait; touch '${marks}/survived'`,
      );
      const queued = await start(mcp.client, listing, `touch '${marks}/queued-ran'`);
      const pgid = Number(await waitUntil(() => textOf(join(marks, 'pgid')), 8000, 'the run to start'));
      process.kill(listing.helper_pid, 'SIGKILL');
      await waitUntil(() => !processAlive(listing.helper_pid), 5000, 'the helper to die');
      // Nobody looked: the run goes on, its journal is there.
      expect(groupMembers(pgid).length).toBeGreaterThan(0);
      expect(filesIn(server.registryDir)).toContain(`${listing.enrollment_generation}.runs`);

      // The person presses Enter: the shell says the helper is gone, and nothing else (no job message).
      const r = await pane.runWithStatus('');
      expect(r).toEqual({
        output: `tmux-run: the helper for pane ${pane.id} exited; this pane is no longer enrolled (source ${SNIPPET} to enroll it again)`,
        status: 0,
      });
      await groupGone(pgid, 5000);
      expect(existsSync(join(marks, 'survived'))).toBe(false);
      const end = await auditEventually(server, held, (e) => e.event === 'end');
      expect(end).toMatchObject({ outcome: 'helper_lost', by: 'shell', ran: true, pgid });
      expect(end.detail).toMatch(new RegExp(`stopped its process group ${pgid}`));
      const q = await auditEventually(server, queued, (e) => e.event === 'end');
      expect(q).toMatchObject({ outcome: 'helper_lost', by: 'shell', ran: false });
      expect(existsSync(join(marks, 'queued-ran'))).toBe(false);
      // Each run ended once, and the sweep removed what the enrollment left, then went itself.
      expect(auditEntries(server).filter((e) => e.event === 'end' && e.run_id === held)).toHaveLength(1);
      await waitEmpty(server.registryDir);
      await waitUntil(
        () => !allCmdlines().some((c) => c.argv.includes('shell-sweep-main.js')),
        5000,
        'the sweep to exit',
      );
      expect(await pane.run('echo still fine')).toBe('still fine');
    });
  });
});
