// Semantics 10: a closed pane, a replaced pane (respawn) and a restarted tmux server end every
// run honestly, run nothing in any other shell, and leave no stale listing.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditEventually } from '../../lab/audit.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { markerDir } from '../../lab/markers.js';
import { listedPanes, type McpHandle } from '../../lab/mcp.js';
import { groupGone, processAlive } from '../../lab/processes.js';
import { withServer } from '../../lab/lifecycle.js';
import type { TmuxServer } from '../../lab/server.js';
import { sleep, waitUntil } from '../../lab/waiting.js';
import { callWith, errorOf, runIdOf, whileRunning } from './support.js';
import type { PaneListing } from '../../src/broker/registry.js';

// One running run (its pgid written to a file) and two queued behind it, each leaving a marker if it ever runs.
// A stubborn run ignores SIGTERM, so only the helper's SIGKILL after its grace ends it.
async function busyPane(mcp: McpHandle, listing: PaneListing, marks: string, stubborn = false) {
  const running = callWith(
    mcp,
    listing,
    `${stubborn ? "trap '' TERM; " : ''}echo $$ > '${marks}/pgid'; sleep 100 & wait; wait`,
  );
  const queued = [1, 2].map((i) =>
    callWith(mcp, listing, `touch '${marks}/queued-${i}'; echo "$$" > '${marks}/queued-${i}'`),
  );
  const pgid = Number(await whileRunning(running, join(marks, 'pgid')));
  await sleep(200);
  return { running, queued, pgid, signal: stubborn ? 9 : 15 };
}

// What every caller saw once the shell was gone, and that nothing ran anywhere else.
async function expectHonestEnd(
  server: TmuxServer,
  mcp: McpHandle,
  listing: PaneListing,
  marks: string,
  b: Awaited<ReturnType<typeof busyPane>>,
): Promise<void> {
  const r = errorOf(await b.running);
  expect(r.code).toBe('shell_exited');
  expect(r.message).toMatch(/shell exited/);
  expect(r.delivery).toBe('observed');
  expect(r.effects?.state).toBe('known');
  expect(r.effects?.completion).toMatchObject({ state: 'signaled', signal: b.signal });
  await groupGone(b.pgid, 5000);
  await auditEventually(
    server,
    runIdOf(await b.running)!,
    (e) => e.event === 'end' && e.outcome === 'shell_exited' && e.detail === 'the enrolled shell exited',
  );
  for (const q of b.queued) {
    const c = await q;
    const e = errorOf(c);
    expect(e.code).toBe('shell_exited');
    expect(e.delivery).toBe('observed');
    expect(e.effects?.state).toBe('none');
    await auditEventually(server, runIdOf(c)!, (x) => x.outcome === 'shell_exited' && x.ran === false);
  }
  await waitUntil(
    async () => !(await listedPanes(mcp.client)).some((p) => p.generation === listing.generation),
    5000,
    'the pane to leave the listing',
  );
  expect(readdirSync(server.registryDir).filter((n) => n.startsWith(listing.enrollment_generation))).toEqual([]);
  await sleep(300);
  expect(existsSync(join(marks, 'queued-1'))).toBe(false);
  expect(existsSync(join(marks, 'queued-2'))).toBe(false);
  expect(processAlive(listing.helper_pid!)).toBe(false);
}

describe('the pane goes away under a run', () => {
  it('kill-pane: the running run (ignoring SIGTERM) is stopped and reported, queued ones get shell_exited', async () => {
    await withServer(async (server, scope) => {
      const { pane, listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      const b = await busyPane(mcp, listing, marks, true);
      await server.tmux(['kill-pane', '-t', pane.id]);
      await expectHonestEnd(server, mcp, listing, marks, b);
      const again = errorOf(await callWith(mcp, listing, `touch '${marks}/again'`));
      expect(again.code).toBe('not_enrolled');
      expect(again.delivery).toBe('not_sent');
    });
  });

  it('respawn-pane -k: nothing runs in the new shell, and the old generation is refused', async () => {
    await withServer(async (server, scope) => {
      const { pane, listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      const b = await busyPane(mcp, listing, marks);
      const oldShell = await pane.shellPid();
      await server.tmux(['respawn-pane', '-k', '-t', pane.id, 'zsh', '-i']);
      await waitUntil(async () => (await pane.shellPid()) !== oldShell, 5000, 'the new shell');
      await pane.waitForPrompt();
      await expectHonestEnd(server, mcp, listing, marks, b);
      // The new shell is not enrolled: the old generation finds nothing to run in.
      const again = errorOf(await callWith(mcp, listing, `touch '${marks}/again'`));
      expect(again.code).toBe('not_enrolled');
      expect(again.delivery).toBe('not_sent');
      expect(await pane.run('echo alive')).toBe('alive');
      expect(existsSync(join(marks, 'again'))).toBe(false);
    });
  });
});

describe('the tmux server restarts', () => {
  it('old enrollments are gone, and a call with an old generation never runs in the new pane', async () => {
    await withServer(async (server, scope) => {
      const { listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      const oldServerPid = await server.serverPid();
      await server.tmux(['kill-server']);
      await waitUntil(
        () => !processAlive(oldServerPid) && !processAlive(listing.helper_pid),
        8000,
        'the old server and helper to exit',
      );
      await server.restart();
      const { pane: fresh, listing: now } = await enrolledPane(server);
      const panes = await listedPanes(mcp.client);
      expect(panes.map((p) => p.generation)).toEqual([now.generation]);
      expect(now.server_generation).not.toBe(listing.server_generation);
      expect(readdirSync(server.registryDir).filter((n) => n.startsWith(listing.enrollment_generation))).toEqual([]);
      // Even when the new pane has the same id, the old generation is refused, never retargeted.
      const stale = errorOf(await callWith(mcp, listing, `touch '${marks}/stale-ran'`));
      expect(['stale_generation', 'not_enrolled']).toContain(stale.code);
      if (now.pane_id === listing.pane_id) expect(stale.code).toBe('stale_generation');
      expect(stale.delivery).toBe('not_sent');
      expect(stale.effects?.state).toBe('none');
      await sleep(300);
      expect(existsSync(join(marks, 'stale-ran'))).toBe(false);
      // The new enrollment works.
      const ok = await callWith(mcp, now, 'echo "$TMUX_PANE"');
      expect(ok.structured.data?.stdout.data).toBe(`${fresh.id}\n`);
    });
  });
});
