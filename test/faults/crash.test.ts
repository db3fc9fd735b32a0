// Semantics 10: a broker or a helper killed with SIGKILL mid-run leaves no run behind, and the
// audit trail holds the outcome.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptDigest } from '../../src/core/enrollment/generation.js';
import { auditEntries, auditEventually } from '../../lab/audit.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { markerDir } from '../../lab/markers.js';
import { listedPanes } from '../../lab/mcp.js';
import { groupGone, groupMembers, processAlive } from '../../lab/processes.js';
import { withServer } from '../../lab/lifecycle.js';
import { sleep, waitUntil } from '../../lab/waiting.js';
import { callWith, errorOf, runIdOf, whileRunning } from './support.js';

// A run that ignores SIGTERM (and so does its child): only SIGKILL ends it.
const stubborn = (marks: string): string =>
  `trap '' TERM; echo $$ > '${marks}/pgid'; sleep 100 & echo $! > '${marks}/sleep'; wait; wait; echo survived > '${marks}/survived'`;

describe('a killed MCP server', () => {
  it('has its running run stopped and audited by the helper, its queued run dropped, and the pane serves the next caller', async () => {
    await withServer(async (server, scope) => {
      const { listing } = await enrolledPane(server);
      const doomed = await scope.startMcp();
      const marks = markerDir(server);
      const running = callWith(
        doomed,
        listing,
        `echo $$ > '${marks}/pgid'; sleep 100 & echo $! > '${marks}/sleep'; wait`,
      );
      const queuedScript = `touch '${marks}/queued-ran'`;
      const queued = callWith(doomed, listing, queuedScript);
      const pgid = Number(await whileRunning(running, join(marks, 'pgid')));
      const sleepPid = Number(await whileRunning(running, join(marks, 'sleep')));
      await sleep(200);
      process.kill(doomed.pid!, 'SIGKILL');
      await expect(running).rejects.toThrow();
      await expect(queued).rejects.toThrow();
      await groupGone(pgid, 5000);
      expect(processAlive(sleepPid)).toBe(false);
      // The helper recorded both ends: the running one stopped because its caller went away, the queued one never ran.
      const ends = await waitUntil(
        () => {
          const e = auditEntries(server).filter((x) => x.event === 'end');
          return e.length >= 2 ? e : undefined;
        },
        5000,
        'two end entries',
      );
      const runEnd = ends.find((e) => e.script_digest !== scriptDigest(queuedScript))!;
      expect(runEnd).toMatchObject({ outcome: 'cancelled', ran: true, detail: 'the caller went away' });
      const queuedEnd = ends.find((e) => e.script_digest === scriptDigest(queuedScript))!;
      expect(queuedEnd).toMatchObject({ outcome: 'cancelled', ran: false });
      // Another broker gets the pane straight away.
      const other = await scope.startMcp();
      const next = await callWith(other, listing, 'echo next');
      expect(next.isError, JSON.stringify(next.structured)).toBe(false);
      expect(next.structured.data.stdout.data).toBe('next\n');
      expect(existsSync(join(marks, 'queued-ran'))).toBe(false);
    });
  });
});

describe('a killed helper', () => {
  it('gives helper_lost, and the broker stops the run group (SIGKILL after SIGTERM is ignored)', async () => {
    await withServer(async (server, scope) => {
      const { pane, listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      const running = callWith(mcp, listing, stubborn(marks));
      const queued = callWith(mcp, listing, `touch '${marks}/queued-ran'`);
      const pgid = Number(await whileRunning(running, join(marks, 'pgid')));
      const sleepPid = Number(await whileRunning(running, join(marks, 'sleep')));
      await sleep(200);
      process.kill(listing.helper_pid, 'SIGKILL');
      // Answered while the stubborn script still sleeps (it ignores SIGTERM): the broker did not wait for it.
      const [r, q] = await Promise.all([running, queued]);
      const e = errorOf(r);
      expect(e.code).toBe('helper_lost');
      expect(['observed', 'possibly_sent']).toContain(e.delivery);
      expect(e.effects?.state).toBe('unknown');
      expect(e.effects?.completion).toEqual({ state: 'unobserved' });
      const qe = errorOf(q);
      expect(qe.code).toBe('helper_lost');
      expect(['observed', 'possibly_sent']).toContain(qe.delivery);
      expect(qe.effects?.state).toBe('unknown');
      // The group ignored SIGTERM: it is gone only because the broker followed up with SIGKILL.
      await groupGone(pgid, 5000);
      expect(processAlive(sleepPid)).toBe(false);
      expect(existsSync(join(marks, 'survived'))).toBe(false);
      expect(groupMembers(pgid)).toEqual([]);
      // The audit trail holds the outcome of both, written by the broker.
      const runId = runIdOf(r)!;
      await auditEventually(server, runId, (x) => x.outcome === 'helper_lost');
      await auditEventually(server, runIdOf(q)!, (x) => x.outcome === 'helper_lost');
      // The pane is no longer listed, and the shell says so at its next prompt.
      expect((await listedPanes(mcp.client)).map((p) => p.pane_id)).not.toContain(listing.pane_id);
      await pane.run('true');
      await pane.waitFor((s) => /helper for pane .* exited/.test(s), 5000);
      const again = errorOf(await callWith(mcp, listing, 'echo again'));
      expect(['not_enrolled', 'helper_unreachable']).toContain(again.code);
      expect(again.delivery).toBe('not_sent');
      expect(existsSync(join(marks, 'queued-ran'))).toBe(false);
    });
  });

  it('still has its run group SIGKILLed when the broker exits within the grace after helper_lost', async () => {
    await withServer(async (server, scope) => {
      const { listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      const running = callWith(mcp, listing, stubborn(marks));
      const pgid = Number(await whileRunning(running, join(marks, 'pgid')));
      await sleep(200);
      process.kill(listing.helper_pid, 'SIGKILL');
      expect(errorOf(await running).code).toBe('helper_lost');
      // The broker sent SIGTERM (ignored) and leaves before its one-second grace is over.
      const closing = mcp.close();
      await waitUntil(() => !processAlive(mcp.pid!), 5000, 'the broker to exit');
      await groupGone(pgid, 1000);
      await closing;
    });
  });
});
