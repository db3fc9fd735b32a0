// Long runs under faults: a killed broker, a killed helper (also one killed between spawning a
// run and noting its process group: the orphan window), and a closed pane.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditEntries } from '../../lab/audit.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { withServer } from '../../lab/lifecycle.js';
import { markerDir } from '../../lab/markers.js';
import { callRun } from '../../lab/mcp.js';
import { groupGone, groupMembers, processAlive } from '../../lab/processes.js';
import { sleep, waitUntil } from '../../lab/waiting.js';
import { finalOf, runIdOf, start, wait } from './support.js';

const textOf = (path: string): string | undefined =>
  existsSync(path) ? readFileSync(path, 'utf8').trim() || undefined : undefined;
const until = (path: string, what: string): Promise<string> => waitUntil(() => textOf(path), 8000, what);

/**
 * The pane's environment for a helper that dies right after it spawns a run: TMUX_RUN_NODE (the
 * node the snippet starts the helper with) is a wrapper that preloads die-after-spawn.cjs.
 */
function dyingHelperEnv(server: { home: string }): Record<string, string> {
  const wrapper = join(server.home, 'node-dies-after-spawn');
  const preload = join(import.meta.dirname, 'die-after-spawn.cjs');
  writeFileSync(wrapper, `#!/bin/sh\nexec '${process.execPath}' --require '${preload}' "$@"\n`);
  chmodSync(wrapper, 0o755);
  return { TMUX_RUN_NODE: wrapper };
}

describe('long runs under faults', () => {
  it('a broker killed while its started runs are running and queued: both finish, a new broker fetches them', async () => {
    await withServer(async (server, scope) => {
      const { listing } = await enrolledPane(server);
      const doomed = await scope.startMcp();
      const marks = markerDir(server);
      const running = await start(doomed.client, listing, `echo $$ > '${marks}/first'; sleep 1.5; echo first`);
      const queued = await start(doomed.client, listing, 'echo second');
      expect(queued.pending.state).toBe('queued');
      await until(join(marks, 'first'), 'the first run to start');
      process.kill(doomed.pid!, 'SIGKILL');
      await waitUntil(() => !processAlive(doomed.pid!), 5000, 'the broker to die');
      const fresh = await scope.startMcp();
      const a = await finalOf(fresh.client, listing, runIdOf(running));
      const b = await finalOf(fresh.client, listing, runIdOf(queued));
      expect(a.data.stdout.data).toBe('first\n');
      expect(b.data.stdout.data).toBe('second\n');
    });
  });

  it('a helper killed mid-run: the run group is stopped, the wait says helper_lost, the audit trail says what happened', async () => {
    await withServer(async (server, scope) => {
      const { listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      // Ignores SIGTERM: only the SIGKILL that follows ends it.
      const running = await start(
        mcp.client,
        listing,
        `trap '' TERM; echo $$ > '${marks}/pgid'; sleep 100 & wait; wait; touch '${marks}/survived'`,
      );
      const queued = await start(mcp.client, listing, `touch '${marks}/queued-ran'`);
      const pgid = Number(await until(join(marks, 'pgid'), 'the run to start'));
      process.kill(listing.helper_pid, 'SIGKILL');
      await waitUntil(() => procGone(listing.helper_pid), 5000, 'the helper to die');
      // Nobody stopped it yet: no broker was connected when the helper died.
      expect(groupMembers(pgid).length).toBeGreaterThan(0);
      const w = await wait(mcp.client, listing, runIdOf(running), 0);
      expect(w.error).toMatchObject({ code: 'helper_lost', delivery: 'observed' });
      expect(w.error.effects).toMatchObject({ state: 'unknown', completion: { state: 'unobserved' } });
      expect(w.error.effects.authorization.run_id).toBe(runIdOf(running));
      expect(w.error.message).toMatch(new RegExp(`stopped its process group ${pgid}`));
      await groupGone(pgid);
      expect(existsSync(join(marks, 'survived'))).toBe(false);
      const ends = auditEntries(server).filter((e) => e.event === 'end' && e.outcome === 'helper_lost');
      expect(ends.find((e) => e.run_id === runIdOf(running))).toMatchObject({ ran: true, pgid, by: 'broker' });
      expect(ends.find((e) => e.run_id === runIdOf(queued))).toMatchObject({ ran: false });
      // A later wait gets a clear error, and nothing changes.
      const later = await wait(mcp.client, listing, runIdOf(queued), 0);
      expect(['helper_unreachable', 'not_enrolled']).toContain(later.error.code);
      expect(later.error.delivery).toBe('not_sent');
      expect(later.error.message).toMatch(/held/);
      expect(existsSync(join(marks, 'queued-ran'))).toBe(false);
    });
  });

  it('the orphan window: a helper SIGKILLed right after spawning a started run leaves nothing running', async () => {
    await withServer(async (server, scope) => {
      const { listing } = await enrolledPane(server, { env: dyingHelperEnv(server) });
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      const s = await start(mcp.client, listing, `echo $$ > '${marks}/pgid'; sleep 100 & wait`);
      const pgid = Number(await until(join(marks, 'pgid'), 'the run to start'));
      await waitUntil(() => procGone(listing.helper_pid), 5000, 'the helper to die');
      await sleep(200);
      // The helper died before it could note the group: the run is an orphan until someone looks.
      expect(groupMembers(pgid).length).toBeGreaterThan(0);
      const w = await wait(mcp.client, listing, runIdOf(s), 0);
      expect(w.error).toMatchObject({ code: 'helper_lost', delivery: 'observed' });
      expect(w.error.message).toMatch(/found its \/bin\/sh/);
      await groupGone(pgid);
      const end = auditEntries(server).find((e) => e.run_id === runIdOf(s) && e.outcome === 'helper_lost');
      expect(end).toMatchObject({ ran: true, pgid });
      expect(String(end!.detail)).toMatch(/found its \/bin\/sh .* spawned just before the helper died/);
    });
  });

  it('the orphan window for tmux_run: the broker finds the run it was never told about and stops it', async () => {
    await withServer(async (server, scope) => {
      const { listing } = await enrolledPane(server, { env: dyingHelperEnv(server) });
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      const r = await callRun(mcp.client, listing, `echo $$ > '${marks}/pgid'; sleep 100 & wait`);
      expect(r.structured.error).toMatchObject({ code: 'helper_lost' });
      const runId = r.structured.error.effects.authorization.run_id as string;
      const ends = auditEntries(server).filter((e) => e.run_id === runId && e.event === 'end');
      expect(ends).toHaveLength(1);
      expect(ends[0]).toMatchObject({ outcome: 'helper_lost', ran: true });
      // The group the broker found and stopped; the script may have been stopped before its first
      // line (the broker can be that quick), but when it ran, it ran in that group.
      const pgid = Number(ends[0]!.pgid);
      expect(pgid).toBeGreaterThan(1);
      await groupGone(pgid);
      await sleep(200);
      const written = textOf(join(marks, 'pgid'));
      if (written !== undefined) expect(Number(written)).toBe(pgid);
    });
  });

  it('a closed pane: held runs end with the enrollment; a wait says so', async () => {
    await withServer(async (server, scope) => {
      const { pane, listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      const done = await start(mcp.client, listing, 'echo kept', { wait_ms: 10_000 });
      expect(done.ok).toBe(true);
      const running = await start(mcp.client, listing, `echo $$ > '${marks}/pgid'; sleep 100 & wait`);
      const pgid = Number(await until(join(marks, 'pgid'), 'the run to start'));
      await server.tmux(['kill-pane', '-t', pane.id]);
      await groupGone(pgid);
      await waitUntil(() => procGone(listing.helper_pid), 8000, 'the helper to exit');
      const end = auditEntries(server).find((e) => e.run_id === runIdOf(running) && e.event === 'end');
      expect(end).toMatchObject({ outcome: 'shell_exited', ran: true });
      // The wait is not sent (no helper), yet both runs did run: it says what the audit trail knows,
      // never "nothing was run".
      for (const id of [runIdOf(done), runIdOf(running)]) {
        const w = await wait(mcp.client, listing, id, 0);
        expect(w.error).toMatchObject({ code: 'not_enrolled', delivery: 'not_sent' });
        expect(w.error.message).toMatch(/runs held by a pane's helper end with its enrollment/);
        expect(w.error.message).toContain(
          `The tmux_run_wait request was not sent; the audit trail says run ${id.slice(0, 8)} started and ended`,
        );
        expect(w.error.message).not.toMatch(/nothing was run/);
        expect(w.error.effects.authorization).toMatchObject({ run_id: id, pane_id: listing.pane_id });
      }
      const w0 = await wait(mcp.client, listing, runIdOf(done), 0);
      expect(w0.error.effects).toMatchObject({ state: 'known', completion: { state: 'exited', exit_status: 0 } });
      const w1 = await wait(mcp.client, listing, runIdOf(running), 0);
      expect(w1.error.message).toMatch(/ended shell_exited/);
      expect(['known', 'unknown']).toContain(w1.error.effects.state);
      // A run id the trail does not know for this target: as before, nothing was run.
      const none = await wait(mcp.client, listing, 'a'.repeat(32), 0);
      expect(none.error).toMatchObject({ code: 'not_enrolled', delivery: 'not_sent', effects: { state: 'none' } });
    });
  });
});

function procGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}
